/* Reading /proc/<pid>/status: one "Key:\tvalue" line at a time. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* The value of "Key:\t..." in the text of a status file, into out (cut to size). */
bool proc_status_get(const char *status, const char *key, char *out, size_t size);

/* The same as a decimal number, or -1 if the key is missing. */
long proc_status_long(const char *status, const char *key);

/* Every signal's disposition back to the default and the signal mask emptied, in a child
 * just before it executes something: an ignored signal and the mask survive execve, and the
 * daemons ignore SIGPIPE (and libuv blocks signals in its threads and around its own forks),
 * which a program that starts from a plain shell never has. Async-signal-safe (sigaction and
 * sigprocmask alone), so it may run between fork and exec. 0, or -errno of the mask's change. */
int anvil_reset_signals(void);
