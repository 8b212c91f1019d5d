/* The daemons' start-up checks (issue 10): each finds out, before anything is made, whether a
 * path can serve, and if not says in one line (POL_STARTUP, policy/reasons.h) what is wrong
 * and the fix. Shared code: it fills msg and returns -errno; the main()s log and exit.
 * Messages go to a buffer of the caller's (STARTUP_MSG_MAX), not to an anvil_err: with a path
 * named twice they are longer than its 256 bytes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define STARTUP_MSG_MAX 1024

/* The socket a daemon is to listen on (opt: "--listen"): its directory exists, is one and is
 * writable; what is at the path is nothing, or a stale socket (removed: returns 1, msg says
 * so). A live daemon's socket, or anything that is not a socket, is left in place: an error. */
int startup_socket_check(const char *opt, const char *path, char *msg, size_t size);

/* The state directory, made (mode) if missing, below a directory that exists; then a real
 * probe: a test entry made and removed in it, with `need` bytes free, owned by jail_uid after
 * a chown (unless (uid_t)-1), executable if exec. On failure a directory this call made is
 * removed again. */
int startup_state_check(const char *dir, mode_t mode, uid_t jail_uid, bool exec, unsigned long long need,
                        char *msg, size_t size);

/* A program the supervisor runs (what: "the runner anvil-py"; path: where it was looked for;
 * found: 0, or beside_me's -errno; hint: a POL_STARTUP_PROGRAM_HINT_ text). */
int startup_program_check(const char *what, const char *path, int found, const char *hint, char *msg, size_t size);

/* SUPERVISOR_UNREACHABLE for a connect() to the supervisor's socket that failed with errno e. */
char *startup_supervisor_unreachable(char *buf, size_t size, const char *path, int e);

/* Whether the supervisor answers on path now (a connect, closed at once): 0, or -errno with
 * SUPERVISOR_UNREACHABLE in msg. */
int startup_supervisor_check(const char *path, char *msg, size_t size);
