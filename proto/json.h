/* JSON renderings of messages (jansson), from the same schema tables: RunResult JSON is the
 * stable surface of `anvilctl run --json` and of the broker's stored results. Field names are
 * the wire names; absent optional values are null; binary fields render as their length. */
#pragma once

#include <jansson.h>

#include "proto/schema.h"

json_t *proto_to_json(const struct proto_schema *s, const void *obj);

/* The other way, for what a program stored itself (the broker's DIR/results and DIR/tasks):
 * obj (zeroed, of s->size) filled from o, each field checked for its type and bound; a binary
 * field (rendered as its length) is left empty, unknown keys are ignored. 0, or -EINVAL /
 * -ENOMEM with obj partly filled: the caller frees it with proto_schema_free either way. */
int proto_from_json(const struct proto_schema *s, json_t *o, void *obj);
