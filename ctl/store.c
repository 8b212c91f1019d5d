/* anvilctl's reading of the broker's store (docs/cli.md "Artifacts out, past runs"): `runs`,
 * `tasks`, `show ID`, `trace RUN_ID`, and -o DIR of run, submit and show.
 *
 * -o DIR: each artifact the result lists is asked of the broker (artifact_request), which
 * serves it only to its owner or root, and written into DIR as the calling user. The names
 * are the tool's, untrusted: a name with an empty, "." or ".." component, or that starts with
 * "/", is refused; every directory below DIR is opened with O_NOFOLLOW and every file made
 * with O_CREAT|O_EXCL|O_NOFOLLOW, so nothing already in DIR (a link a tool or anyone put
 * there) is followed or overwritten. The bytes received are counted and hashed and checked
 * against the broker's artifact_end and the result's sha256; a file that does not match is
 * removed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/client.h"
#include "ctl/store.h"
#include "lib/beneath.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "proto/json.h"

const char *ctl_out_dir;

static void request_id(char *buf, size_t size)
{
        snprintf(buf, size, "ctl-%d", (int)getpid());
}

/* ---- -o DIR ---- */

/* A relative name of components that are neither empty, "." nor "..". */
static bool safe_name(const char *p)
{
        if (!*p || *p == '/' || strlen(p) > PROTO_PATH_MAX)
                return false;
        for (const char *c = p; *c;) {
                size_t n = strcspn(c, "/");
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += n;
                if (*c == '/' && !*++c)
                        return false; /* a trailing '/' */
        }
        return true;
}

struct copy {
        struct ctl_artifact_rx rx; /* first: ctl_artifact_frame's context */
        int fd;
        uint64_t want;
        bool too_long;
        int write_errno;
};

/* Each piece written to the file, unless it would make the copy longer than the artifact's
 * listed size (then the copy ends, refused). */
static int copy_piece(struct ctl_artifact_rx *rx, const struct proto_bytes *d, int *rc)
{
        struct copy *cp = (struct copy *)rx;
        if (cp->rx.got + d->len > cp->want) {
                cp->too_long = true;
                *rc = EXIT_REFUSED;
                return 0;
        }
        struct anvil_err err = ANVIL_ERR_INIT;
        if (!cp->write_errno && fd_write_all(cp->fd, d->data, d->len, &err) < 0)
                cp->write_errno = err.code;
        return 1;
}

/* One artifact into root: 0, or an exit status once said why. *conn is the broker's
 * connection, opened by the first request. */
static int copy_one(int *conn, int root, const char *id, const struct proto_artifact *a, uint64_t *bytes)
{
        const char *dir = ctl_out_dir;
        if (!safe_name(a->path)) {
                fprintf(stderr, "anvilctl: -o %s: '%s' is not a safe name: not copied\n", dir, a->path);
                return EXIT_REFUSED;
        }
        struct copy cp = { .rx.piece = copy_piece, .fd = fd_create_beneath(root, a->path, 0777, 0666), .want = a->bytes };
        if (cp.fd < 0) {
                fprintf(stderr, "anvilctl: -o %s: %s: not written: %s\n", dir, a->path, strerror(-cp.fd));
                return EXIT_USAGE;
        }
        SHA256Init(&cp.rx.h);
        char rid[32];
        request_id(rid, sizeof(rid));
        struct proto_msg m = { .type = PROTO_ARTIFACT_REQUEST };
        m.u.artifact_request = (struct proto_artifact_request){ .request_id = rid, .id = (char *)id, .path = a->path };
        int rc;
        char *failed = NULL;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (*conn < 0) {
                *conn = ctl_send_request(&m, "the artifact request");
                rc = *conn < 0 ? -*conn : 0;
        } else if (proto_write_msg(*conn, &m, &err) < 0) {
                fprintf(stderr, "anvilctl: cannot send the artifact request: %s\n", err.msg);
                rc = EXIT_CONNECT;
        } else {
                rc = 0;
        }
        if (rc == 0)
                rc = ctl_follow(*conn, "the artifact's copy", ctl_artifact_frame, &cp, &failed);
        char hex[SHA256_DIGEST_STRING_LENGTH];
        SHA256End(&cp.rx.h, hex);
        if (rc == 0 && cp.write_errno)
                fprintf(stderr, "anvilctl: -o %s: %s: not written: %s\n", dir, a->path, strerror(cp.write_errno)),
                        rc = EXIT_USAGE;
        else if (rc == 0 && (cp.rx.got != cp.want || cp.rx.end.bytes != cp.rx.got || strcmp(cp.rx.end.sha256, hex) != 0 ||
                             (a->sha256[0] && strcmp(a->sha256, hex) != 0)))
                fprintf(stderr,
                        "anvilctl: -o %s: %s: what came is not the artifact: %" PRIu64 " bytes, sha256 %s; the broker "
                        "counted %" PRIu64 " bytes, sha256 %s; the result lists %" PRIu64 " bytes, sha256 %s\n",
                        dir, a->path, cp.rx.got, hex, cp.rx.end.bytes, cp.rx.end.sha256 ? cp.rx.end.sha256 : "-", a->bytes,
                        a->sha256[0] ? a->sha256 : "-"),
                        rc = EXIT_REFUSED;
        else if (cp.too_long)
                fprintf(stderr, "anvilctl: -o %s: %s: the broker sent more than its %" PRIu64 " bytes\n", dir, a->path,
                        a->bytes);
        else if (rc != 0)
                fprintf(stderr, "anvilctl: -o %s: %s: not copied: %s\n", dir, a->path, failed ? failed : "?");
        free(failed);
        free(cp.rx.end.request_id);
        free(cp.rx.end.path);
        free(cp.rx.end.sha256);
        (void)close(cp.fd);
        if (rc != 0) {
                /* Nothing half-copied is left under its name. Safe: the name was made by us
                 * (O_EXCL), below directories opened without following a link. */
                _cleanup_free_ char *parent = strdup(a->path);
                char *slash = parent ? strrchr(parent, '/') : NULL;
                if (!slash)
                        (void)unlinkat(root, a->path, 0);
                else {
                        *slash = 0;
                        int pfd = openat(root, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (pfd >= 0) {
                                (void)unlinkat(pfd, slash + 1, 0);
                                (void)close(pfd);
                        }
                }
                return rc;
        }
        *bytes += cp.rx.got;
        return 0;
}

static int copy_out(const char *id, const struct proto_array *artifacts)
{
        const char *dir = ctl_out_dir;
        if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
                fprintf(stderr, "anvilctl: -o %s: %s\n", dir, strerror(errno));
                return EXIT_USAGE;
        }
        _cleanup_close_ int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) {
                fprintf(stderr, "anvilctl: -o %s: %s\n", dir, strerror(errno));
                return EXIT_USAGE;
        }
        _cleanup_close_ int conn = -EBADF;
        const struct proto_artifact *a = artifacts->items;
        size_t copied = 0;
        uint64_t bytes = 0;
        int rc = 0;
        for (size_t i = 0; i < artifacts->n; i++) {
                int r = copy_one(&conn, root, id, &a[i], &bytes);
                if (r == 0)
                        copied++;
                else if (!rc || r == EXIT_CONNECT)
                        rc = r;
                if (r == EXIT_CONNECT)
                        break; /* no broker to ask for the others */
        }
        fprintf(stderr, "anvilctl: copied %zu of %zu artifacts (%" PRIu64 " bytes) to %s\n", copied, artifacts->n,
                bytes, dir);
        return rc;
}

int ctl_out_run(const struct proto_run_result *r)
{
        return ctl_out_dir ? copy_out(r->run_id, &r->artifacts) : 0;
}

int ctl_out_task(const struct proto_task_result *r)
{
        static const struct proto_array none;
        if (!ctl_out_dir)
                return 0;
        /* The deliverable's, from the broker's own copy (by the task's id): kept as long as
         * the task is, whatever the supervisor's retention did with the run's directory. */
        return copy_out(r->task_id, r->deliverable ? &r->deliverable->artifacts : &none);
}

/* ---- runs, tasks ---- */

static int on_list_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        bool json = *(bool *)ctx;
        if (in->type != PROTO_LIST_RESULT)
                return -1;
        const struct proto_list_result *l = &in->u.list_result;
        *rc = 0;
        if (json) {
                json_t *j = proto_to_json(proto_schemas[PROTO_LIST_RESULT], l);
                char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
                if (s)
                        printf("%s\n", s);
                else
                        *rc = EXIT_REFUSED;
                free(s);
                json_decref(j);
                return 0;
        }
        const struct proto_list_entry *e = l->entries.items;
        bool task = strcmp(l->kind, "tasks") == 0;
        printf("%-*s  %-11s  %-20s  %-6s  %s\n", task ? 43 : 38, task ? "TASK" : "RUN", "STATUS", "TIME", "UID",
               task ? "TASK" : "TOOL");
        for (size_t i = 0; i < l->entries.n; i++) {
                char uid[24] = "-";
                if (e[i].uid.set)
                        snprintf(uid, sizeof(uid), "%" PRId64, e[i].uid.v);
                printf("%-*s  %-11s  %-20s  %-6s  %s\n", task ? 43 : 38, e[i].id, e[i].status[0] ? e[i].status : "-",
                       e[i].time[0] ? e[i].time : "-", uid, e[i].tool[0] ? e[i].tool : "-");
        }
        return 0;
}

int ctl_cmd_runs(int argc, char **argv)
{
        static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                               { "limit", required_argument, NULL, 'n' },
                                               { "help", no_argument, NULL, 'h' },
                                               { 0 } };
        bool json = false;
        uint64_t limit = 0;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
                char *end;
                if (c == 'j')
                        json = true;
                else if (c == 'n') {
                        errno = 0;
                        unsigned long long v = strtoull(optarg, &end, 10);
                        if (errno || *end || !*optarg || optarg[0] == '-' || v < 1 || v > PROTO_LIST_MAX) {
                                fprintf(stderr, "anvilctl: %s: -n: expected a count, 1..%u, not '%s'\n", argv[0],
                                        PROTO_LIST_MAX, optarg);
                                return EXIT_USAGE;
                        }
                        limit = v;
                } else if (c == 'h') {
                        printf("usage: anvilctl %s [-n N] [--json]\n"
                               "Your stored %s, newest first (root: everyone's): id, status, when, uid, %s.\n"
                               "  -n, --limit N      at most N (1..%u; default all the broker keeps, at most %u)\n"
                               "  --json             one object: {\"kind\", \"entries\": [{id, status, time, tool, uid}]}\n",
                               argv[0], argv[0], strcmp(argv[0], "tasks") == 0 ? "the task's first words" : "the tool",
                               PROTO_LIST_MAX, PROTO_LIST_MAX);
                        return 0;
                } else {
                        fprintf(stderr, "usage: anvilctl %s [-n N] [--json]\n", argv[0]);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc) {
                fprintf(stderr, "anvilctl: %s: takes no arguments\n", argv[0]);
                return EXIT_USAGE;
        }
        char rid[32];
        request_id(rid, sizeof(rid));
        struct proto_msg m = { .type = PROTO_LIST_REQUEST };
        m.u.list_request = (struct proto_list_request){ .request_id = rid, .kind = argv[0], .limit = limit };
        _cleanup_close_ int fd = ctl_send_request(&m, "the request");
        if (fd < 0)
                return -fd;
        return ctl_follow(fd, "the listing", on_list_frame, &json, NULL);
}

/* ---- show, trace RUN_ID ---- */

struct show {
        bool json, trace;
        const char *id;
};

static int on_show_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        const struct show *s = ctx;
        if (in->type == PROTO_RUN_RESULT && s->trace) {
                const struct proto_run_result *r = &in->u.run_result;
                printf("run %s: %s\n", r->run_id, r->killed ? r->killed : r->status);
                const struct proto_event *ev = r->events.items;
                for (size_t i = 0; i < r->events.n; i++)
                        ctl_print_event(&ev[i]);
                *rc = 0;
                return 0;
        }
        if (in->type == PROTO_RUN_RESULT) {
                ctl_print_run(&in->u.run_result, s->json);
                fflush(stdout);
                *rc = ctl_out_run(&in->u.run_result);
                return 0;
        }
        if (in->type == PROTO_TASK_RESULT && !s->trace) {
                ctl_print_task(&in->u.task_result, s->json);
                fflush(stdout);
                *rc = ctl_out_task(&in->u.task_result);
                return 0;
        }
        return -1;
}

static int show(const char *id, struct show *s)
{
        if (strlen(id) > PROTO_ID_MAX || !*id) {
                fprintf(stderr, "anvilctl: '%s' is not a run or task id\n", id);
                return EXIT_USAGE;
        }
        char rid[32];
        request_id(rid, sizeof(rid));
        struct proto_msg m = { .type = PROTO_SHOW_REQUEST };
        m.u.show_request = (struct proto_show_request){ .request_id = rid, .id = (char *)id };
        _cleanup_close_ int fd = ctl_send_request(&m, "the request");
        if (fd < 0)
                return -fd;
        return ctl_follow(fd, "the request", on_show_frame, s, NULL);
}

int ctl_cmd_show(int argc, char **argv)
{
        static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                               { "output", required_argument, NULL, 'o' },
                                               { "help", no_argument, NULL, 'h' },
                                               { 0 } };
        struct show s = { 0 };
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
                if (c == 'j')
                        s.json = true;
                else if (c == 'o')
                        ctl_out_dir = optarg;
                else if (c == 'h') {
                        printf("usage: anvilctl show ID [--json] [-o DIR]\n"
                               "A stored run (its run id) or task (task-...) of yours, printed as run or submit printed it.\n"
                               "  --json             the RunResult or TaskResult as one JSON object\n"
                               "  -o, --output DIR   copy its artifacts (a task's: its deliverable's) into DIR\n");
                        return 0;
                } else {
                        fprintf(stderr, "usage: anvilctl show ID [--json] [-o DIR]\n");
                        return EXIT_USAGE;
                }
        }
        if (optind != argc - 1) {
                fprintf(stderr, "anvilctl: show: expected one run or task id\n");
                return EXIT_USAGE;
        }
        return show(argv[optind], &s);
}

int ctl_trace_run(const char *run_id)
{
        struct show s = { .trace = true };
        return show(run_id, &s);
}

int ctl_store_help(const char *cmd)
{
        char *argv[] = { (char *)cmd, "--help", NULL };
        return strcmp(cmd, "show") == 0 ? ctl_cmd_show(2, argv) : ctl_cmd_runs(2, argv);
}
