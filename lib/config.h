/* A daemon's settings from its configuration file and its command line (docs/configuration.md).
 *
 * Both daemons describe their options in one table (struct cfg_opt) and give one function that
 * applies one value, wherever it comes from: a line of the file or an option on the command
 * line go through the same checks, and a bad value is refused with the same words, only
 * named differently: "--max-runs: expected 1..256" on the command line,
 * "/etc/anvil/anvil.conf:12: max_runs = 0: expected 1..256" in the file (cfg_bad).
 *
 * The file is INI, read by Debian's libinih: [section]s of key = value lines, '#' and ';'
 * comment lines. Four sections are known to both daemons: [supervisor] and [limits] are the
 * supervisor's, [broker] and [model] the broker's; each daemon checks every key of its own
 * sections, skips the other's, and refuses a section neither knows. A key given twice in the
 * file is refused (naming both lines), except a repeatable one (allow_uid), whose values add
 * up. The command line comes after the file: an option given there replaces the file's value;
 * for a repeatable one the command line's list replaces the file's.
 *
 * Nothing here prints or exits: the message is in the anvil_err, and the daemon's main says it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

#ifndef ANVIL_CONFIG_DEFAULT
#define ANVIL_CONFIG_DEFAULT "/etc/anvil/anvil.conf"
#endif

/* Longest line of the file, without its newline: a key file's path (PATH_MAX) fits. */
#define CFG_LINE_MAX 4200
/* Bytes of a value repeated in a message ("key = VALUE: ..."): a longer one is cut, with "...". */
#define CFG_VALUE_SHOWN 80

enum {
        CFG_ARG = 1 << 0,        /* the option takes a value (the file's keys always have one) */
        CFG_REPEATABLE = 1 << 1, /* may be given more than once; the values add up */
};

struct cfg_opt {
        const char *opt;     /* the long option without "--" ("max-runs"); NULL: only in the file */
        const char *section; /* its section in the file; NULL: only on the command line */
        const char *key;     /* its key there ("max_runs") */
        int id;              /* the daemon's own, passed back to apply */
        unsigned flags;      /* CFG_* */
};

/* Where one value comes from. */
struct cfg_src {
        const char *file;  /* NULL: the command line */
        unsigned line;
        const struct cfg_opt *opt;
        const char *value; /* NULL for an option without a value; lives as long as the process */
        bool first;        /* the first value of this option from this source (a repeatable
                            * option's list starts again: the command line's replaces the file's) */
};

struct cfg_daemon {
        const char *const *sections; /* its own sections, NULL-terminated */
        const struct cfg_opt *opts;
        unsigned n_opts;
        /* Applies one value; on error fills err through cfg_bad and returns < 0. */
        int (*apply)(void *ctx, const struct cfg_src *w, struct anvil_err *err);
        void *ctx;
        /* Whether getopt prints its own message for an unknown option or a missing value
         * (then err is left empty for them), or cfg_args says it in err. */
        bool getopt_messages;
};

/* What cfg_args found, besides the values it applied. */
struct cfg_result {
        const char *path; /* the file read; NULL if none (the default one does not exist) */
        bool help;        /* --help (the daemon has a "help" option): nothing else was applied */
        bool version;     /* --version (the daemon has a "version" option): likewise */
        bool bad_usage;   /* an unknown option, a missing value, a stray argument */
        bool in_file;     /* the error is the file's (it names the file and line) */
};

/* Reads --config FILE (or the default file, if it exists) and then the command line, applying
 * every value through d->apply: the file's first, in order, then the command line's. Returns 0
 * or -errno with the message in err (and what kind of error in res). */
int cfg_args(const struct cfg_daemon *d, int argc, char **argv, struct cfg_result *res, struct anvil_err *err);

/* "--max-runs" (the command line) or "FILE:12: max_runs = VALUE" (the file), for a message. */
const char *cfg_name(const struct cfg_src *w, char *buf, size_t size);
/* Fills err with "<cfg_name>: <fmt...>" and returns -EINVAL. */
int cfg_bad(const struct cfg_src *w, struct anvil_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* As cfg_bad, the command line's name with its value: "--runner PATH: <fmt...>". */
int cfg_bad_with_value(const struct cfg_src *w, struct anvil_err *err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
