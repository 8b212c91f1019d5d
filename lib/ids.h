/* User and group names on the command line. */
#pragma once

#include <sys/types.h>

#include "lib/err.h"

/* A group name, or a numeric gid. */
int parse_group(const char *s, gid_t *out, struct anvil_err *err);
/* A user name (looked up at start-up: a user made later is not seen), or a numeric uid. */
int parse_user(const char *s, uid_t *out, struct anvil_err *err);
