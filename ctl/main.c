/* anvilctl: the command line. Talks to the broker at $ANVIL_SOCKET (default /run/anvil.sock).
 *
 * Exit status: 0 when the run (or submit's task) was carried out, whatever the tool did (its
 * status, and the task's, is in the output); 1 when the server refused or could not carry it
 * out (an error frame, printed: also when the broker refuses the connection over one of its
 * bounds); 2 for a usage error, which includes a request that cannot be made (a file that
 * cannot be read, inputs too large for one frame: found before anything is sent); 3 when the
 * server cannot be reached or the connection broke ("the broker closed the connection ...",
 * when it closed without an error frame). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/utf8.h"
#include "policy/limits.h"
#include "proto/json.h"
#include "proto/proto.h"

#include "ctl/client.h"
#include "ctl/verify.h"
#include "proto/names.h"

static void usage(FILE *f)
{
        fprintf(f, "usage: anvilctl run TOOL.py [--input FILE]... [--timeout S] [--cpu S] [--memory MB]\n"
                   "                    [--cap NAME]... [--variables FILE.json] [--json]\n"
                   "       anvilctl submit TASK.json [--verbose] [--json]\n"
                   "       anvilctl trace TASK_ID\n"
                   "       anvilctl probe [--json]\n"
                   "       anvilctl verify [--scripted-model]\n"
                   "       anvilctl help\n"
                   "The broker is reached at $ANVIL_SOCKET (default /run/anvil.sock).\n");
}

static int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die_usage(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "anvilctl: ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        return EXIT_USAGE;
}

static int parse_seconds(const char *s, uint64_t max, uint64_t *out)
{
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || !*s || *end || *s == '-' || v == 0 || v > max)
                return -1;
        *out = v;
        return 0;
}


/* ---- human output ---- */

static void print_event(const struct proto_event *e)
{
        printf("  %7" PRIu64 " ms  %-10s %-14s", e->t_ms, e->layer, e->kind);
        if (e->message)
                printf(" %s", e->message);
        else if (e->op)
                printf(" %s", e->op);
        if (e->line.set && e->col.set)
                printf(" (line %" PRId64 ", column %" PRId64 ")", e->line.v, e->col.v);
        else if (e->line.set)
                printf(" (line %" PRId64 ")", e->line.v);
        putchar('\n');
        if (e->traceback) {
                /* Indented, so that it reads as part of the event. */
                for (const char *l = e->traceback; *l;) {
                        size_t n = strcspn(l, "\n");
                        printf("            %.*s\n", (int)n, l);
                        l += n + (l[n] == '\n');
                }
        }
}

static void print_block(const char *title, const char *text, bool truncated, uint64_t total)
{
        if (!*text && !truncated)
                return;
        printf("%s:%s\n", title, truncated ? "" : "");
        for (const char *l = text; *l;) {
                size_t n = strcspn(l, "\n");
                printf("  %.*s\n", (int)n, l);
                l += n + (l[n] == '\n');
        }
        if (truncated)
                printf("  [... truncated: %" PRIu64 " bytes written, %zu kept]\n", total, strlen(text));
}

/* The variables the tool left for a next step, by name, and those it will not have. The text
 * is the tool's word: a name list is shown only if it parses as a JSON object. */
static void print_variables(const struct proto_run_result *r)
{
        if (r->variables) {
                json_error_t jerr;
                json_t *o = json_loads(r->variables, JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, &jerr);
                printf("variables kept (%zu bytes of JSON):", strlen(r->variables));
                const char *k;
                json_t *v;
                if (json_is_object(o)) {
                        if (json_object_size(o) == 0)
                                printf(" none");
                        json_object_foreach(o, k, v) printf(" %s", k);
                }
                putchar('\n');
                json_decref(o);
        }
        const struct proto_variable_dropped *d = r->variables_dropped.items;
        if (r->variables_dropped.n)
                printf("variables not kept:\n");
        for (size_t i = 0; i < r->variables_dropped.n; i++)
                printf("  %s (%s) %s\n", d[i].name, d[i].type, d[i].reason);
}

static void print_human(const struct proto_run_result *r)
{
        printf("run %s: %s", r->run_id, r->killed ? r->killed : r->status);
        if (r->exit_code.set)
                printf(" (exit code %" PRId64 ")", r->exit_code.v);
        if (r->signal)
                printf(" (%s)", r->signal);
        printf(" in %" PRIu64 " ms, cpu %" PRIu64 " ms, peak %.1f MB; isolation: %s\n", r->wall_ms, r->cpu_ms,
               r->peak_rss_mb, r->isolation.tier);
        if (r->not_stored) /* the broker's: the result is here, and nowhere else */
                printf("note: %s\n", r->not_stored);
        printf("trace:\n");
        const struct proto_event *ev = r->events.items;
        for (size_t i = 0; i < r->events.n; i++)
                print_event(&ev[i]);
        print_block("stdout", r->out_text, r->stdout_truncated, r->stdout_bytes);
        print_block("stderr", r->err_text, r->stderr_truncated, r->stderr_bytes);
        if (r->final_answer)
                printf("final answer: %s\n", r->final_answer);
        print_variables(r);
        const struct proto_artifact *a = r->artifacts.items;
        if (r->artifacts.n)
                printf("artifacts:\n");
        for (size_t i = 0; i < r->artifacts.n; i++)
                printf("  %s/%s  (%" PRIu64 " bytes, sha256 %s)\n", r->artifacts_dir ? r->artifacts_dir : ".", a[i].path,
                       a[i].bytes, a[i].sha256);
        /* What the tool could have done, beside what it did. */
        const struct proto_blast_radius *b = &r->blast_radius;
        printf("blast radius (%s):\n", r->isolation.tier);
        for (size_t i = 0; i < b->read.n; i++)
                printf("  %s %s\n", i ? "         " : "read:    ", b->read.items[i]);
        for (size_t i = 0; i < b->write.n; i++)
                printf("  %s %s\n", i ? "         " : "write:   ", b->write.items[i]);
        if (b->network)
                printf("  network:  %s\n", b->network);
        if (b->processes)
                printf("  processes: %s\n", b->processes);
        const struct proto_limits *l = &b->limits;
        printf("  limits:   wall %" PRIu64 " s (used %.1f s), cpu %" PRIu64 " s (used %.1f s), memory %" PRIu64
               " MB (peak %.1f MB), output %" PRIu64 " bytes per stream, files %" PRIu64 " bytes, %" PRIu64
               " processes and threads\n",
               l->wall_s, (double)r->wall_ms / 1000.0, l->cpu_s, (double)r->cpu_ms / 1000.0, l->memory_mb, r->peak_rss_mb,
               l->output_bytes, l->files_bytes, l->pids);
        if (r->capabilities.denied.n) {
                printf("capabilities denied:");
                for (size_t i = 0; i < r->capabilities.denied.n; i++)
                        printf(" %s", r->capabilities.denied.items[i]);
                putchar('\n');
        }
}

/* A message as JSON on stdout: 0, or EXIT_REFUSED if it cannot be rendered. */
static int print_json(enum proto_type type, const void *msg)
{
        json_t *j = proto_to_json(proto_schemas[type], msg);
        char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
        if (s)
                printf("%s\n", s);
        free(s);
        json_decref(j);
        return s ? 0 : EXIT_REFUSED;
}

/* ---- run ---- */

static int read_input(const char *what, const char *path, struct proto_input *in)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *data;
        size_t len;
        if (fd_read_file(path, PROTO_FRAME_MAX, &data, &len, &err) < 0) {
                fprintf(stderr, "anvilctl: %s %s: %s\n", what, path, err.msg);
                return -1;
        }
        _cleanup_free_ char *copy = strdup(path);
        in->name = strdup(basename(copy));
        in->data.data = data;
        in->data.len = len;
        return 0;
}

/* --input [NAME=]PATH for a run: PATH opened here, as the calling user, and the open fd passed
 * with the request (SCM_RIGHTS): no server ever opens a path for a client. NAME (what the
 * tool sees in ./inputs) is PATH's last component unless given before the first '='; a path
 * with '=' in it is given as NAME=PATH. A regular file or a directory, nothing else. */
static int open_input(const char *arg, struct proto_input *in, int *fds, size_t *n_fds)
{
        const char *eq = strchr(arg, '=');
        const char *path = eq ? eq + 1 : arg;
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return die_usage("out of memory");
        size_t l = strlen(copy);
        while (l > 1 && copy[l - 1] == '/')
                copy[--l] = 0;
        in->name = eq ? strndup(arg, (size_t)(eq - arg)) : strdup(basename(copy));
        if (!in->name || !path[0])
                return die_usage("--input %s: expected [NAME=]PATH", arg);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return die_usage("--input %s: cannot open it: %s", path, strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
                (void)close(fd);
                return die_usage("--input %s: not a regular file or a directory", path);
        }
        in->fd.set = true;
        in->fd.v = (int64_t)*n_fds;
        fds[(*n_fds)++] = fd;
        return 0;
}

/* A request must fit in one frame (PROTO_FRAME_MAX): found here, before connecting, it is the
 * user's to fix (exit 2), not a server that cannot be reached. The encoding is the one that
 * will be sent. what: "the run", "the task". */
static int check_frame(const struct proto_msg *m, const char *what, const struct proto_array *inputs)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *buf;
        size_t len;
        if (proto_encode(m, &buf, &len, &err) == 0) {
                free(buf);
                return 0;
        }
        if (err.code != EMSGSIZE)
                return die_usage("cannot encode %s: %s", what, err.msg);
        uint64_t bytes = 0;
        const struct proto_input *in = inputs->items;
        for (size_t i = 0; i < inputs->n; i++)
                bytes += in[i].data.len;
        return die_usage("%s does not fit in one frame of %u bytes: its %zu input file%s hold %" PRIu64
                         " bytes (%s)",
                         what, PROTO_FRAME_MAX, inputs->n, inputs->n == 1 ? "" : "s", bytes, err.msg);
}

/* --variables FILE.json: a JSON object of at most PROTO_VARIABLES_MAX bytes, sent as it is
 * written. Checked here to say early what is wrong with it; the runner decodes it again, in
 * the jail, with Python's json and the name rules (an identifier, not private, no builtin's). */
static int read_variables(const char *path, char **out)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *data;
        size_t len;
        if (fd_read_file(path, PROTO_VARIABLES_MAX, &data, &len, &err) < 0) {
                fprintf(stderr, "anvilctl: --variables: %s%s\n", err.msg,
                        err.code == EFBIG ? " (the limit for variables)" : "");
                return -1;
        }
        if (memchr(data, 0, len) || !utf8_valid(data, len)) {
                fprintf(stderr, "anvilctl: --variables %s: not UTF-8 text\n", path);
                free(data);
                return -1;
        }
        json_error_t jerr;
        json_t *o = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &jerr);
        if (!o || !json_is_object(o)) {
                if (o)
                        fprintf(stderr, "anvilctl: --variables %s: expected a JSON object\n", path);
                else
                        fprintf(stderr, "anvilctl: --variables %s: not valid JSON (line %d, column %d: %s)\n", path,
                                jerr.line, jerr.column, jerr.text);
                json_decref(o);
                free(data);
                return -1;
        }
        json_decref(o);
        *out = (char *)data;
        return 0;
}

/* A run's frames: its events (not shown: the result carries them), then its result. */
static int on_run_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        bool json = *(bool *)ctx;
        if (in->type == PROTO_RUN_EVENT)
                return 1;
        if (in->type != PROTO_RUN_RESULT)
                return -1;
        if (json) {
                *rc = print_json(PROTO_RUN_RESULT, &in->u.run_result);
        } else {
                print_human(&in->u.run_result);
                *rc = 0;
        }
        return 0;
}

static int cmd_run(int argc, char **argv)
{
        static const struct option opts[] = {
                { "input", required_argument, NULL, 'i' }, { "timeout", required_argument, NULL, 't' },
                { "cpu", required_argument, NULL, 'c' },   { "memory", required_argument, NULL, 'm' },
                { "cap", required_argument, NULL, 'p' },   { "json", no_argument, NULL, 'j' },
                { "variables", required_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },        { 0 },
        };
        struct proto_msg m = { .type = PROTO_RUN_REQUEST };
        struct proto_run_request *req = &m.u.run_request;
        _cleanup_close_ int fd = -EBADF;
        int in_fds[PROTO_INPUTS_MAX];
        size_t n_in_fds = 0;
        bool json = false;
        int c, rc = EXIT_USAGE;
        optind = 1;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case 'i': {
                        if (req->inputs.n >= PROTO_INPUTS_MAX) {
                                rc = die_usage("at most %d --input files", PROTO_INPUTS_MAX);
                                goto out;
                        }
                        struct proto_input *in = proto_array_push(&req->inputs, sizeof(*in));
                        if (!in || (rc = open_input(optarg, in, in_fds, &n_in_fds)) != 0) {
                                rc = rc ? rc : EXIT_USAGE;
                                goto out;
                        }
                        rc = EXIT_USAGE;
                        break;
                }
                case 't':
                        if (parse_seconds(optarg, POL_WALL_S_MAX, &req->limits.wall_s) < 0) {
                                rc = die_usage("--timeout: expected whole seconds, 1..3600, not '%s'", optarg);
                                goto out;
                        }
                        break;
                case 'c':
                        if (parse_seconds(optarg, POL_CPU_S_MAX, &req->limits.cpu_s) < 0) {
                                rc = die_usage("--cpu: expected whole seconds, 1..3600, not '%s'", optarg);
                                goto out;
                        }
                        break;
                case 'm':
                        if (parse_seconds(optarg, POL_MEMORY_MB_MAX, &req->limits.memory_mb) < 0 ||
                            req->limits.memory_mb < POL_MEMORY_MB_MIN) {
                                rc = die_usage("--memory: expected megabytes, 64..65536, not '%s'", optarg);
                                goto out;
                        }
                        break;
                case 'p':
                        /* The user at the command line asks for it and approves it: whether it
                         * is granted is then the server's policy, which says why not. */
                        if (strlen(optarg) == 0 || strlen(optarg) > 32 || req->capabilities_requested.n >= PROTO_CAPS_MAX ||
                            proto_strv_push(&req->capabilities_requested, optarg) < 0 ||
                            proto_strv_push(&req->capabilities_approved, optarg) < 0) {
                                rc = die_usage("--cap: '%s' is not a capability name", optarg);
                                goto out;
                        }
                        break;
                case 'j':
                        json = true;
                        break;
                case 'v':
                        free(req->variables);
                        req->variables = NULL;
                        if (read_variables(optarg, &req->variables) < 0)
                                goto out;
                        break;
                case 'h':
                        usage(stdout);
                        rc = 0;
                        goto out;
                default:
                        usage(stderr);
                        goto out;
                }
        }
        if (optind != argc - 1) {
                rc = die_usage("run: expected one TOOL.py");
                goto out;
        }
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *src;
        size_t len;
        if (fd_read_file(argv[optind], PROTO_SOURCE_MAX, &src, &len, &err) < 0) {
                fprintf(stderr, "anvilctl: %s\n", err.msg);
                goto out;
        }
        req->source = (char *)src;
        if (memchr(src, 0, len) || !utf8_valid(src, len)) {
                rc = die_usage("%s: the tool's source must be UTF-8 text", argv[optind]);
                goto out;
        }
        unsigned modes[PROTO_INPUTS_MAX];
        for (size_t i = 0; i < n_in_fds; i++) {
                struct stat st;
                modes[i] = fstat(in_fds[i], &st) == 0 ? st.st_mode : 0;
        }
        if (pol_inputs_check(&req->inputs, "run_request.inputs", modes, n_in_fds, &err) < 0) {
                rc = die_usage("--input: %s", err.msg);
                goto out;
        }
        char rid[32];
        snprintf(rid, sizeof(rid), "ctl-%d", (int)getpid());
        req->request_id = strdup(rid);
        if (check_frame(&m, "the run", &req->inputs) != 0)
                goto out;

        fd = ctl_send_request_fds(&m, "the run", in_fds, n_in_fds);
        rc = fd < 0 ? -fd : ctl_follow(fd, "the run", on_run_frame, &json, NULL);
out:
        for (size_t i = 0; i < n_in_fds; i++)
                (void)close(in_fds[i]);
        proto_msg_free(&m);
        return rc;
}

/* The probe's one frame: its result. */
static int on_probe_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        if (in->type != PROTO_PROBE_RESULT)
                return -1;
        if (*(bool *)ctx) {
                *rc = print_json(PROTO_PROBE_RESULT, &in->u.probe_result);
                return 0;
        }
        const struct proto_probe_result *r = &in->u.probe_result;
        printf("isolation tier: %s\n", r->tier);
        printf("  %-22s %-9s %-6s %-8s %s\n", "mechanism", "available", "probed", "in force", "evidence");
        const struct proto_mechanism *mm = r->mechanisms.items;
        for (size_t i = 0; i < r->mechanisms.n; i++)
                printf("  %-22s %-9s %-6s %-8s %s\n", mm[i].name, mm[i].available ? "yes" : "no",
                       mm[i].probed ? "yes" : "no", mm[i].in_force ? "yes" : "no", mm[i].evidence);
        /* Said again below the table, where it is not lost: Landlock refuses, and the
         * refusals reach runs without their explanation (the evidence says what would). */
        for (size_t i = 0; i < r->mechanisms.n; i++)
                if (strcmp(mm[i].name, "kernel audit") == 0 && mm[i].probed && !mm[i].in_force)
                        printf("note: %s\n", mm[i].evidence);
        *rc = 0;
        return 0;
}

/* The isolation probe: each mechanism, available / probed / in force, with its evidence. */
static int cmd_probe(int argc, char **argv)
{
        static const struct option opts[] = { { "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 } };
        bool json = false;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                if (c == 'j')
                        json = true;
                else if (c == 'h') {
                        usage(stdout);
                        return 0;
                } else {
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc)
                return die_usage("probe: takes no arguments");
        struct proto_msg m = { .type = PROTO_PROBE_REQUEST };
        char rid[32];
        snprintf(rid, sizeof(rid), "ctl-%d", (int)getpid());
        m.u.probe_request.request_id = rid;
        _cleanup_close_ int fd = ctl_send_request(&m, "the probe request");
        if (fd < 0)
                return -fd;
        return ctl_follow(fd, "the probe", on_probe_frame, &json, NULL);
}

/* ---- submit, trace ---- */

static void print_indented(const char *prefix, const char *text)
{
        for (const char *l = text; *l;) {
                size_t n = strcspn(l, "\n");
                printf("%s%.*s\n", prefix, (int)n, l);
                l += n + (l[n] == '\n');
        }
}

/* One task_event as a line (or a few). verbose: the model's replies, the prompt and the
 * observations in full (anvilctl trace; submit --verbose). */
static void print_task_event(const struct proto_task_event *e, bool verbose)
{
        enum proto_task_kind k = proto_task_kind_from_name(e->kind);
        const char *msg = e->message ? e->message : "";
        if (k == PROTO_TASK_STARTED) {
                printf("task %s\n", e->task_id);
                print_indented("  | ", msg);
        } else if (k == PROTO_TASK_DESCRIBE) {
                printf("%s\n", msg);
        } else if (k == PROTO_TASK_PROMPT || k == PROTO_TASK_OBSERVATION || k == PROTO_TASK_MODEL_REPLY) {
                const char *title = k == PROTO_TASK_PROMPT        ? "system prompt"
                                    : k == PROTO_TASK_OBSERVATION ? "observation"
                                                                  : "the model replied";
                if (verbose) {
                        printf("%s:\n", title);
                        print_indented("  | ", msg);
                } else {
                        printf("%s (%zu bytes)\n", title, strlen(msg));
                }
        } else if (k == PROTO_TASK_MODEL_REQUEST) {
                printf("\n%s\n", msg);
        } else if (k == PROTO_TASK_NO_CODE) {
                printf("no code in the reply: nothing run; the model is told:\n");
                print_indented("  | ", msg);
        } else if (k == PROTO_TASK_CODE) {
                printf("code action:\n");
                print_indented("  > ", e->code ? e->code : "");
        } else if (k == PROTO_TASK_RUN_EVENT) {
                if (e->event)
                        print_event(e->event);
        } else if (k == PROTO_TASK_FINAL_ANSWER) {
                printf("final_answer: %s\n", msg);
        } else {
                printf("%s: %s\n", e->kind, msg); /* as it came: a kind this anvilctl does not know too */
        }
}

static void print_task_result(const struct proto_task_result *r)
{
        printf("\ntask %s: %s%s%s\n", r->task_id, r->status, r->error ? ": " : "", r->error ? r->error : "");
        if (r->not_stored)
                printf("note: %s\n", r->not_stored);
        if (r->trace_incomplete)
                printf("note: %s\n", r->trace_incomplete);
        const struct proto_task_step *s = r->steps.items;
        for (size_t i = 0; i < r->steps.n; i++)
                printf("  action %zu: run %s: %s\n", i + 1, s[i].run.run_id, s[i].run.killed ? s[i].run.killed : s[i].run.status);
        if (!r->deliverable)
                return;
        const char *dir = NULL;
        for (size_t i = 0; i < r->steps.n; i++)
                if (strcmp(s[i].run.run_id, r->deliverable->run_id) == 0)
                        dir = s[i].run.artifacts_dir;
        printf("deliverable: the action of run %s\n", r->deliverable->run_id);
        const struct proto_artifact *a = r->deliverable->artifacts.items;
        for (size_t i = 0; i < r->deliverable->artifacts.n; i++)
                printf("  %s/%s  (%" PRIu64 " bytes, sha256 %s)\n", dir ? dir : ".", a[i].path, a[i].bytes, a[i].sha256);
}

/* task.json (docs/agent.md): strictly, every key known and typed; inputs relative to its directory. */
static int read_task_file(const char *path, struct proto_task_submit *sub)
{
        json_error_t je;
        _cleanup_free_ uint8_t *text = NULL;
        size_t len;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (fd_read_file(path, 1024 * 1024, &text, &len, &err) < 0) {
                fprintf(stderr, "anvilctl: %s\n", err.msg);
                return -1;
        }
        json_t *j = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, &je);
        if (!j) {
                fprintf(stderr, "anvilctl: %s: line %d, column %d: %s\n", path, je.line, je.column, je.text);
                return -1;
        }
        int rc = -1;
        _cleanup_free_ char *copy = strdup(path);
        const char *base = copy ? dirname(copy) : ".";
        if (!json_is_object(j)) {
                fprintf(stderr, "anvilctl: %s: expected a JSON object\n", path);
                goto out;
        }
        const char *key;
        json_t *v;
        json_object_foreach(j, key, v) {
                if (strcmp(key, "task") == 0) {
                        if (!json_is_string(v) || !*json_string_value(v)) {
                                fprintf(stderr, "anvilctl: %s: \"task\" must be a non-empty string\n", path);
                                goto out;
                        }
                        sub->task = strdup(json_string_value(v));
                } else if (strcmp(key, "inputs") == 0) {
                        if (!json_is_array(v) || json_array_size(v) > PROTO_INPUTS_MAX) {
                                fprintf(stderr, "anvilctl: %s: \"inputs\" must be a list of at most %d file paths\n", path,
                                        PROTO_INPUTS_MAX);
                                goto out;
                        }
                        size_t i;
                        json_t *p;
                        json_array_foreach(v, i, p) {
                                if (!json_is_string(p) || !*json_string_value(p)) {
                                        fprintf(stderr, "anvilctl: %s: inputs[%zu] must be a file path\n", path, i);
                                        goto out;
                                }
                                const char *ip = json_string_value(p);
                                char full[PATH_MAX];
                                if (snprintf(full, sizeof(full), "%s/%s", ip[0] == '/' ? "" : base, ip) >= (int)sizeof(full)) {
                                        fprintf(stderr, "anvilctl: %s: inputs[%zu]: the path is too long\n", path, i);
                                        goto out;
                                }
                                struct proto_input *in = proto_array_push(&sub->inputs, sizeof(*in));
                                if (!in || read_input("input", ip[0] == '/' ? ip : full, in) < 0)
                                        goto out;
                        }
                } else if (strcmp(key, "capabilities_approved") == 0) {
                        size_t i;
                        json_t *p;
                        if (!json_is_array(v) || json_array_size(v) > PROTO_CAPS_MAX) {
                                fprintf(stderr, "anvilctl: %s: \"capabilities_approved\" must be a list of at most %d names\n",
                                        path, PROTO_CAPS_MAX);
                                goto out;
                        }
                        json_array_foreach(v, i, p) {
                                if (!json_is_string(p) || !*json_string_value(p) || strlen(json_string_value(p)) > 32) {
                                        fprintf(stderr, "anvilctl: %s: capabilities_approved[%zu] must be a capability name\n",
                                                path, i);
                                        goto out;
                                }
                                (void)proto_strv_push(&sub->capabilities_approved, json_string_value(p));
                        }
                } else if (strcmp(key, "max_steps") == 0 || strcmp(key, "time_budget_s") == 0) {
                        bool steps = key[0] == 'm';
                        json_int_t max = steps ? 100 : 86400;
                        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max) {
                                fprintf(stderr, "anvilctl: %s: \"%s\" must be a whole number, 1..%lld\n", path, key,
                                        (long long)max);
                                goto out;
                        }
                        *(steps ? &sub->max_steps : &sub->time_budget_s) = (uint64_t)json_integer_value(v);
                } else if (strcmp(key, "model") == 0) {
                        if (!json_is_object(v)) {
                                fprintf(stderr, "anvilctl: %s: \"model\" must be an object {\"url\", \"name\"}\n", path);
                                goto out;
                        }
                        sub->model = calloc(1, sizeof(*sub->model));
                        const char *mk;
                        json_t *mv;
                        json_object_foreach(v, mk, mv) {
                                bool url = strcmp(mk, "url") == 0;
                                if (strcmp(mk, "key") == 0) {
                                        fprintf(stderr,
                                                "anvilctl: %s: model.key: a task never carries a key: the broker's own "
                                                "(ANVIL_MODEL_KEY or --model-key-file) goes to the broker's --model-url only\n",
                                                path);
                                        goto out;
                                }
                                if (!url && strcmp(mk, "name") != 0) {
                                        fprintf(stderr, "anvilctl: %s: model.%s: unknown key (url, name)\n", path, mk);
                                        goto out;
                                }
                                if (!json_is_string(mv) || !*json_string_value(mv)) {
                                        fprintf(stderr, "anvilctl: %s: model.%s must be a non-empty string\n", path, mk);
                                        goto out;
                                }
                                *(url ? &sub->model->url : &sub->model->name) = strdup(json_string_value(mv));
                        }
                } else {
                        fprintf(stderr,
                                "anvilctl: %s: unknown key \"%s\" (task, inputs, capabilities_approved, max_steps, "
                                "time_budget_s, model)\n",
                                path, key);
                        goto out;
                }
        }
        if (!sub->task) {
                fprintf(stderr, "anvilctl: %s: \"task\" is required\n", path);
                goto out;
        }
        if (pol_inputs_check(&sub->inputs, "inputs", NULL, 0, &err) < 0) {
                fprintf(stderr, "anvilctl: %s: %s\n", path, err.msg);
                goto out;
        }
        rc = 0;
out:
        json_decref(j);
        return rc;
}

/* Ctrl-C (or SIGTERM) during submit: the task is cancelled, not abandoned. Once the task id
 * is known, its cancel frame is encoded ahead (cancel_frame), so the handler only write()s
 * (async-signal-safe); the broker then ends the task and its result, "cancelled", is printed
 * as any other. A second signal, or one before the id is known, ends anvilctl at once (the
 * broker cancels a task whose client has gone). */
static uint8_t *cancel_frame;
static size_t cancel_len;
static int cancel_fd = -1;
static volatile sig_atomic_t cancel_sent;

static void on_cancel_signal(int sig)
{
        if (cancel_sent || !cancel_frame) {
                signal(sig, SIG_DFL);
                raise(sig);
                return;
        }
        cancel_sent = 1;
        int saved = errno;
        size_t off = 0;
        while (off < cancel_len) {
                ssize_t n = write(cancel_fd, cancel_frame + off, cancel_len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                off += (size_t)n;
        }
        errno = saved;
}

static void arm_cancel(int fd, const char *task_id)
{
        if (cancel_frame)
                return;
        struct proto_msg m = { .type = PROTO_CANCEL };
        m.u.cancel.task_id = (char *)task_id;
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *buf;
        size_t n;
        if (proto_encode(&m, &buf, &n, &err) < 0)
                return; /* the signal then ends anvilctl, which cancels the task too */
        cancel_len = n;
        cancel_fd = fd;
        cancel_frame = buf; /* last: the handler reads it only once it is set */
}

/* A task's frames (submit) or its trace's (trace): task events as they come, then the
 * TaskResult (submit) or the trace's end (trace). */
struct task_view {
        bool json, verbose, replay;
};

static int on_task_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        const struct task_view *v = ctx;
        if (in->type == PROTO_TASK_EVENT) {
                const struct proto_task_event *e = &in->u.task_event;
                if (!v->replay && proto_task_kind_from_name(e->kind) == PROTO_TASK_STARTED)
                        arm_cancel(fd, e->task_id);
                if (!v->json)
                        print_task_event(e, v->verbose);
                fflush(stdout);
                if (v->replay && proto_task_kind_from_name(e->kind) == PROTO_TASK_TRACE_END) {
                        *rc = 0;
                        return 0;
                }
                return 1;
        }
        if (in->type != PROTO_TASK_RESULT || v->replay)
                return -1;
        if (v->json) {
                *rc = print_json(PROTO_TASK_RESULT, &in->u.task_result);
        } else {
                print_task_result(&in->u.task_result);
                *rc = 0;
        }
        return 0;
}

static int cmd_submit(int argc, char **argv)
{
        static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                               { "verbose", no_argument, NULL, 'v' },
                                               { "help", no_argument, NULL, 'h' },
                                               { 0 } };
        bool json = false, verbose = false;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                if (c == 'j')
                        json = true;
                else if (c == 'v')
                        verbose = true;
                else if (c == 'h') {
                        usage(stdout);
                        return 0;
                } else {
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc - 1)
                return die_usage("submit: expected one TASK.json");
        struct proto_msg m = { .type = PROTO_TASK_SUBMIT };
        if (read_task_file(argv[optind], &m.u.task_submit) < 0) {
                proto_msg_free(&m);
                return EXIT_USAGE;
        }
        char rid[32];
        snprintf(rid, sizeof(rid), "ctl-%d", (int)getpid());
        m.u.task_submit.request_id = strdup(rid);
        if (check_frame(&m, "the task", &m.u.task_submit.inputs) != 0) {
                proto_msg_free(&m);
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd = ctl_send_request(&m, "the task");
        proto_msg_free(&m);
        if (fd < 0)
                return -fd;
        struct sigaction sa = { .sa_handler = on_cancel_signal }; /* no SA_RESTART: reads go on (EINTR) */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        struct task_view v = { json, verbose, false };
        return ctl_follow(fd, "the task", on_task_frame, &v, NULL);
}

static int cmd_trace(int argc, char **argv)
{
        if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
                usage(stdout);
                return 0;
        }
        if (argc != 2 || argv[1][0] == '-')
                return die_usage("trace: expected one TASK_ID");
        struct proto_msg m = { .type = PROTO_TRACE_REQUEST };
        char rid[32];
        snprintf(rid, sizeof(rid), "ctl-%d", (int)getpid());
        m.u.trace_request.request_id = rid;
        m.u.trace_request.task_id = argv[1];
        if (strlen(argv[1]) > PROTO_ID_MAX)
                return die_usage("trace: '%s' is not a task id", argv[1]);
        _cleanup_close_ int fd = ctl_send_request(&m, "the request");
        if (fd < 0)
                return -fd;
        struct task_view v = { false, true, true };
        return ctl_follow(fd, "the task", on_task_frame, &v, NULL);
}

int main(int argc, char **argv)
{
        /* A broker that closes the connection (a bound met) while a request is written is an
         * EPIPE to report with its error frame, not a signal that ends anvilctl in silence. */
        (void)signal(SIGPIPE, SIG_IGN);
        if (argc < 2) {
                usage(stderr);
                return EXIT_USAGE;
        }
        if (strcmp(argv[1], "run") == 0)
                return cmd_run(argc - 1, argv + 1);
        if (strcmp(argv[1], "probe") == 0)
                return cmd_probe(argc - 1, argv + 1);
        if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
                usage(stdout);
                return 0;
        }
        if (strcmp(argv[1], "submit") == 0)
                return cmd_submit(argc - 1, argv + 1);
        if (strcmp(argv[1], "trace") == 0)
                return cmd_trace(argc - 1, argv + 1);
        if (strcmp(argv[1], "verify") == 0)
                return ctl_verify(argc - 1, argv + 1);
        fprintf(stderr, "anvilctl: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return EXIT_USAGE;
}
