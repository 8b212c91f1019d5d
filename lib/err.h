/* lib/: helpers every program links (libanvil.a): the error type, cleanup macros, fds and
 * fd passing, small files and lines, ids, UTF-8, logging, /proc status, the configuration
 * file. They run at whatever privilege their caller has (root in the supervisor, no
 * privilege in the broker and anvilctl, untrusted in the runner), so they hold no policy,
 * follow no path a caller did not choose, and never log or exit but in log.c. */
/* One error type, carried through every call that can fail (CONVENTIONS §1).
 *
 * Functions return 0 on success or a negative errno, and fill the message once, at the place
 * that knows what failed: "Failed to bind /run/anvil.sock: Address in use". Only main()s log
 * and exit; lib/, proto/, policy/ and jail/ never do. */
#pragma once

#include <errno.h>
#include <stdarg.h>

struct anvil_err {
        int code;      /* positive errno, 0 when unset */
        char msg[256];
};

#define ANVIL_ERR_INIT { 0, "" }

/* Sets err (if not NULL) and returns -code. code is a positive errno. */
int anvil_err_set(struct anvil_err *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* As anvil_err_set, and appends ": strerror(code)". */
int anvil_err_sys(struct anvil_err *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Prefixes an already-set message: "Failed to start run: <old message>". */
int anvil_err_prefix(struct anvil_err *err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
