/* The configuration file and the command line, for both daemons (config.h). */
#define _GNU_SOURCE
#include "lib/config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/cleanup.h"

/* Every section either daemon reads: a section not here is a mistake (a typo of one of
 * these), which both refuse. */
static const char *const all_sections[] = { "supervisor", "limits", "broker", "model", NULL };

const char *cfg_name(const struct cfg_src *w, char *buf, size_t size)
{
        if (!w->file) {
                snprintf(buf, size, "--%s", w->opt->opt);
                return buf;
        }
        const char *v = w->value ? w->value : "";
        size_t n = strlen(v);
        snprintf(buf, size, "%s:%u: %s = %.*s%s", w->file, w->line, w->opt->key,
                 (int)(n > CFG_VALUE_SHOWN ? CFG_VALUE_SHOWN : n), v, n > CFG_VALUE_SHOWN ? "..." : "");
        return buf;
}

static int bad(const struct cfg_src *w, bool with_value, struct anvil_err *err, const char *fmt, va_list ap)
{
        char name[sizeof(err->msg)], what[sizeof(err->msg)];
        cfg_name(w, name, sizeof(name));
        if (with_value && !w->file && w->value)
                snprintf(name + strlen(name), sizeof(name) - strlen(name), " %s", w->value);
        (void)vsnprintf(what, sizeof(what), fmt, ap);
        return anvil_err_set(err, EINVAL, "%s: %s", name, what);
}

int cfg_bad(const struct cfg_src *w, struct anvil_err *err, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = bad(w, false, err, fmt, ap);
        va_end(ap);
        return r;
}

int cfg_bad_with_value(const struct cfg_src *w, struct anvil_err *err, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = bad(w, true, err, fmt, ap);
        va_end(ap);
        return r;
}

/* ---- the file ---- */

struct file_parse {
        const struct cfg_daemon *d;
        const char *path;
        FILE *f;
        unsigned line;      /* the line libinih is on: one reader call per line */
        enum { RD_OK, RD_TOO_LONG, RD_NUL, RD_IO, RD_SECTION } rd;
        char section[72];   /* RD_SECTION: the unknown section's name, cut short */
        int rd_errno;
        unsigned *first;    /* per option: the line of its first value in the file, 0 if none */
        bool failed;        /* the handler refused a line: err says why */
        struct anvil_err *err;
};

static bool in(const char *const *list, const char *s)
{
        for (; *list; list++)
                if (strcmp(*list, s) == 0)
                        return true;
        return false;
}

/* libinih's reader, one whole line per call, so that the line count is exact (libinih's own
 * is not passed to the handler as Debian builds it) and a line too long for the buffer is an
 * error: libinih would otherwise cut it and read the rest as a line of its own, a value cut
 * short taken as the whole. A NUL byte would cut a line short too. */
static char *read_line(char *str, int num, void *stream)
{
        struct file_parse *p = stream;
        size_t n = 0;
        int c = EOF;
        if (p->rd != RD_OK)
                return NULL;
        while ((c = getc(p->f)) != EOF) {
                if (c == 0 || (c != '\n' && n >= CFG_LINE_MAX) || n + 2 >= (size_t)num) {
                        p->line++;
                        p->rd = c == 0 ? RD_NUL : RD_TOO_LONG;
                        return NULL;
                }
                str[n++] = (char)c;
                if (c == '\n')
                        break;
        }
        if (n == 0) {
                if (ferror(p->f)) {
                        p->rd = RD_IO;
                        p->rd_errno = errno ? errno : EIO;
                }
                return NULL;
        }
        str[n] = 0;
        p->line++;
        /* A section header, as libinih reads it (the name is what lies between '[' and the
         * first ']'): one neither daemon knows is refused here, even with no key below it. */
        const char *h = str + strspn(str, " \t"), *e = *h == '[' ? strchr(h, ']') : NULL;
        if (e) {
                snprintf(p->section, sizeof(p->section), "%.*s", (int)(e - h - 1), h + 1);
                if (!in(all_sections, p->section)) {
                        p->rd = RD_SECTION;
                        return NULL;
                }
        }
        return str;
}

/* The values read from the file live as long as the process (an option may keep its value,
 * a path, as it keeps argv's): each copy is held here, reachable, rather than dropped by the
 * options that keep nothing (a number's). */
static char **kept_values;
static size_t n_kept_values;

static char *keep_value(const char *value)
{
        char **v = realloc(kept_values, (n_kept_values + 1) * sizeof(*v));
        if (!v)
                return NULL;
        kept_values = v;
        char *copy = strdup(value);
        if (copy)
                kept_values[n_kept_values++] = copy;
        return copy;
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
        struct file_parse *p = user;
        const struct cfg_daemon *d = p->d;
        struct cfg_opt shown = { .key = key };
        struct cfg_src w = { .file = p->path, .line = p->line, .opt = &shown, .value = value };
        p->failed = true;
        if (!*section) {
                cfg_bad(&w, p->err, "before any [section]: put it under [supervisor], [limits], [broker] or [model]");
                return 0;
        }
        p->failed = false;
        if (!in(d->sections, section)) /* read_line has refused a section neither daemon knows */
                return 1; /* the other daemon's */
        p->failed = true;
        unsigned i;
        for (i = 0; i < d->n_opts; i++)
                if (d->opts[i].section && strcmp(d->opts[i].section, section) == 0 && strcmp(d->opts[i].key, key) == 0)
                        break;
        if (i == d->n_opts) {
                cfg_bad(&w, p->err, "unknown key in [%s]", section);
                return 0;
        }
        w.opt = &d->opts[i];
        if (p->first[i] && !(w.opt->flags & CFG_REPEATABLE)) {
                cfg_bad(&w, p->err, "given twice, first on line %u", p->first[i]);
                return 0;
        }
        w.first = !p->first[i];
        if (!p->first[i])
                p->first[i] = p->line;
        /* The value outlives this call: an option may keep it (a path), as it keeps argv's. */
        char *copy = keep_value(value);
        if (!copy) {
                anvil_err_set(p->err, ENOMEM, "%s:%u: out of memory", p->path, p->line);
                return 0;
        }
        w.value = copy;
        if (d->apply(d->ctx, &w, p->err) < 0)
                return 0;
        p->failed = false;
        return 1;
}

static int read_file(const struct cfg_daemon *d, const char *path, bool must_exist, struct cfg_result *res,
                     struct anvil_err *err)
{
        const char *opt = must_exist ? "--config " : "";
        /* O_NONBLOCK: a fifo put there must not hang the start; it is refused below. */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT && !must_exist)
                return 0;
        res->in_file = !must_exist;
        if (fd < 0)
                return anvil_err_sys(err, errno, "%s%s", opt, path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return anvil_err_sys(err, errno, "%s%s", opt, path);
        /* /dev/null reads nothing: `--config /dev/null` is how to start with no file at all. */
        if (!S_ISREG(st.st_mode) && !(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))
                return anvil_err_set(err, EINVAL, "%s%s: not a regular file", opt, path);
        _cleanup_fclose_ FILE *f = fdopen(fd, "r");
        if (!f)
                return anvil_err_sys(err, errno, "%s%s", opt, path);
        TAKE_FD(fd);
        _cleanup_free_ unsigned *first = calloc(d->n_opts + 1, sizeof(*first));
        if (!first)
                return anvil_err_set(err, ENOMEM, "%s: out of memory", path);
        res->path = path;
        res->in_file = true;
        /* Debian's libinih takes its settings at run time: a value is the rest of its line (no
         * inline comments: a '#' or ';' in a value is the value's), a line is one setting (no
         * continuation lines), the first error ends the reading. */
        ini_max_line = CFG_LINE_MAX + 3; /* its buffer: the line, "\r\n" and the NUL */
        ini_allow_multiline = false;
        ini_allow_inline_comments = false;
        ini_allow_no_value = false;
        ini_stop_on_first_error = true;
        struct file_parse p = { .d = d, .path = path, .f = f, .first = first, .err = err };
        int r = ini_parse_stream(read_line, &p, on_key, &p);
        if (p.failed)
                return -(err->code ? err->code : EINVAL);
        if (r == -2)
                return anvil_err_set(err, ENOMEM, "%s: out of memory", path);
        if (r > 0)
                return anvil_err_set(err, EINVAL,
                                     "%s:%d: not a [section], a key = value line or a comment line ('#' or ';')", path,
                                     r);
        switch (p.rd) {
        case RD_TOO_LONG:
                return anvil_err_set(err, EINVAL, "%s:%u: the line is longer than %d bytes", path, p.line,
                                     CFG_LINE_MAX);
        case RD_SECTION:
                return anvil_err_set(err, EINVAL,
                                     "%s:%u: [%.64s]: unknown section (expected [supervisor], [limits], [broker] or [model])",
                                     path, p.line, p.section);
        case RD_NUL:
                return anvil_err_set(err, EINVAL, "%s:%u: the line has a NUL byte", path, p.line);
        case RD_IO:
                return anvil_err_sys(err, p.rd_errno, "%s: cannot read it", path);
        case RD_OK:
                break;
        }
        res->in_file = false;
        return 0;
}

/* ---- the command line ---- */

#define OPT_CONFIG 1
#define OPT_BASE 256 /* getopt's value for opts[i] is OPT_BASE + i */

int cfg_args(const struct cfg_daemon *d, int argc, char **argv, struct cfg_result *res, struct anvil_err *err)
{
        *res = (struct cfg_result){ 0 };
        _cleanup_free_ struct option *lo = calloc(d->n_opts + 2, sizeof(*lo));
        _cleanup_free_ struct given { unsigned i; const char *arg; } *given = calloc((size_t)argc + 1, sizeof(*given));
        _cleanup_free_ bool *seen = calloc(d->n_opts + 1, sizeof(*seen));
        if (!lo || !given || !seen)
                return anvil_err_set(err, ENOMEM, "out of memory");
        unsigned n = 0;
        for (unsigned i = 0; i < d->n_opts; i++)
                if (d->opts[i].opt) {
                        int has_arg = d->opts[i].flags & CFG_ARG ? required_argument : no_argument;
                        lo[n++] = (struct option){ d->opts[i].opt, has_arg, NULL, OPT_BASE + (int)i };
                }
        lo[n] = (struct option){ "config", required_argument, NULL, OPT_CONFIG };
        /* First the whole command line (its errors first, and --config wherever it is), then
         * the file, then the command line's values over it. */
        const char *config = NULL;
        unsigned n_given = 0;
        int c;
        opterr = d->getopt_messages;
        while ((c = getopt_long(argc, argv, d->getopt_messages ? "" : ":", lo, NULL)) != -1) {
                if (c == OPT_CONFIG) {
                        if (config) {
                                res->bad_usage = true;
                                return anvil_err_set(err, EINVAL, "--config is given twice (%s, %s)", config, optarg);
                        }
                        config = optarg;
                } else if (c >= OPT_BASE && c < OPT_BASE + (int)d->n_opts) {
                        if (strcmp(d->opts[c - OPT_BASE].opt, "help") == 0) {
                                res->help = true;
                                return 0;
                        }
                        if (strcmp(d->opts[c - OPT_BASE].opt, "version") == 0) {
                                res->version = true;
                                return 0;
                        }
                        given[n_given++] = (struct given){ (unsigned)(c - OPT_BASE), optarg };
                } else {
                        res->bad_usage = true;
                        if (d->getopt_messages)
                                return -EINVAL;
                        if (c == ':')
                                return anvil_err_set(err, EINVAL, "%s needs an argument", argv[optind - 1]);
                        return anvil_err_set(err, EINVAL, "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind < argc) {
                res->bad_usage = true;
                return anvil_err_set(err, EINVAL, "unexpected argument '%s'", argv[optind]);
        }
        int r = read_file(d, config ? config : ANVIL_CONFIG_DEFAULT, config != NULL, res, err);
        if (r < 0)
                return r;
        for (unsigned k = 0; k < n_given; k++) {
                struct cfg_src w = { .opt = &d->opts[given[k].i], .value = given[k].arg, .first = !seen[given[k].i] };
                seen[given[k].i] = true;
                if ((r = d->apply(d->ctx, &w, err)) < 0)
                        return r;
        }
        return 0;
}
