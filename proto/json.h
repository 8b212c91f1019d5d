/* JSON renderings of messages (jansson), from the same schema tables: RunResult JSON is the
 * stable surface of `anvilctl run --json` and of the broker's stored results. Field names are
 * the wire names; absent optional values are null; binary fields render as their length. */
#pragma once

#include <jansson.h>

#include "proto/schema.h"

json_t *proto_to_json(const struct proto_schema *s, const void *obj);
