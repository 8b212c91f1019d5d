/* Reading /proc/<pid>/status: one "Key:\tvalue" line at a time. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* The value of "Key:\t..." in the text of a status file, into out (cut to size). */
bool proc_status_get(const char *status, const char *key, char *out, size_t size);

/* The same as a decimal number, or -1 if the key is missing. */
long proc_status_long(const char *status, const char *key);
