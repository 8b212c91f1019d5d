/* User and group names on the command line. */
#pragma once

#include <sys/types.h>

#include "lib/err.h"

/* A group name, or a numeric gid. */
int parse_group(const char *s, gid_t *out, struct anvil_err *err);
