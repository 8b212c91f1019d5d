/* What a client may read back of the broker's store (docs/protocol.md "The store"): its stored
 * runs and tasks listed (list_request), one shown as it was sent (show_request), and an
 * artifact's bytes (artifact_request). Each is the client's own, by the uid SO_PEERCRED gave
 * when it was made, which the store keeps beside the result (DIR/results/<run_id>.meta,
 * DIR/tasks/<task_id>.meta, store.c); root may read every one. A result stored before the
 * owners were kept has no .meta: only root reads it; a task's falls back on its trace's first
 * line, which has always held its uid.
 *
 * An artifact is served only if its result lists it, and read as the broker (unprivileged)
 * from the supervisor's copy of the run's artifacts (root's, 0644 below 0755 directories) or,
 * for a task's deliverable, from the broker's own copy (tasks/<task_id>.artifacts/): opened
 * beneath that directory with no link followed (bro_open_beneath), a regular file of the
 * listed size. Its bytes go in artifact_data frames of PROTO_CHUNK_MAX, a few per turn of the
 * loop and only while the client's queue is short (the stream's on_drain), then artifact_end
 * with the size and SHA-256 counted over the bytes sent, for the client to check.
 *
 * These read the broker's own files on the loop's thread, as the trace replay does (agent.c):
 * a .meta is small, a listing reads one per entry shown, a show one result. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/broker.h"
#include "broker/render.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/list.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "policy/reasons.h"
#include "proto/json.h"

#define STORED_MAX (64u * 1024 * 1024) /* a stored result's JSON, read back */
#define XFER_QUEUE_MAX (1u * 1024 * 1024) /* queued to a client before the next chunk is read */
#define XFER_CHUNKS_PER_TURN 4

struct bro_xfer {
        struct bro_client *c;
        struct bro_xfer *next, **pprev;
        int fd;
        char *request_id, *path;
        uint64_t left, sent;
        SHA2_CTX h;
};

static bool is_task_id(const char *id)
{
        return strncmp(id, "task-", 5) == 0;
}

static const char *what_of(const char *id)
{
        return is_task_id(id) ? "task" : "run";
}

static int dir_of(const struct bro_server *srv, const char *id)
{
        return is_task_id(id) ? srv->tasks_dirfd : srv->results_dirfd;
}

/* dirfd/name as JSON, or NULL with errno set. */
static json_t *load_json(int dirfd, const char *name, size_t max)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return NULL;
        if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
                errno = EFBIG;
                return NULL;
        }
        json_error_t je;
        json_t *o = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(o)) {
                json_decref(o);
                errno = EBADMSG;
                return NULL;
        }
        return o;
}

/* The uid in a task's trace's first line (what replays have always checked), or -1. */
static long long trace_uid(const struct bro_server *srv, const char *task_id)
{
        char name[PROTO_ID_MAX + 8];
        snprintf(name, sizeof(name), "%s.jsonl", task_id);
        _cleanup_close_ int fd = openat(srv->traces_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_fclose_ FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
        if (!f)
                return -1;
        fd = -EBADF;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t n = getline(&line, &cap, f);
        if (n <= 0 || n > 1024 * 1024)
                return -1;
        _cleanup_(json_decrefp) json_t *o = json_loadb(line, (size_t)n, 0, NULL);
        json_t *uid = json_object_get(o, "uid");
        return json_is_integer(uid) && json_integer_value(uid) >= 0 ? (long long)json_integer_value(uid) : -1;
}

/* What the store knows of id: its .meta, or for one stored before them, what its result
 * says (no "uid": root's alone; a task's uid from its trace). NULL with errno ENOENT when
 * nothing of id is stored. */
static json_t *load_meta(const struct bro_server *srv, const char *id)
{
        char name[PROTO_ID_MAX + 16];
        int dfd = dir_of(srv, id);
        snprintf(name, sizeof(name), "%s" BRO_META_SUFFIX, id);
        json_t *m = load_json(dfd, name, STORED_MAX);
        if (m || errno != ENOENT)
                return m;
        snprintf(name, sizeof(name), "%s.json", id);
        _cleanup_(json_decrefp) json_t *res = load_json(dfd, name, STORED_MAX);
        if (!res)
                return NULL;
        m = json_object();
        json_object_set(m, "status", json_object_get(res, "status"));
        if (is_task_id(id)) {
                long long uid = trace_uid(srv, id);
                if (uid >= 0)
                        json_object_set_new(m, "uid", json_integer(uid));
                json_t *d = json_object_get(res, "deliverable");
                json_object_set(m, "deliverable_run", json_object_get(d, "run_id"));
                json_object_set(m, "artifacts", json_object_get(d, "artifacts"));
        } else {
                json_object_set(m, "artifacts_dir", json_object_get(res, "artifacts_dir"));
                json_object_set(m, "artifacts", json_object_get(res, "artifacts"));
        }
        return m;
}

static bool may_see(const struct bro_client *c, json_t *meta)
{
        json_t *uid = json_object_get(meta, "uid");
        return c->uid == 0 || (json_is_integer(uid) && json_integer_value(uid) == (json_int_t)c->uid);
}

/* The stored meta of id if c may read it; else an error frame is sent and NULL returned. */
static json_t *meta_for(struct bro_client *c, const char *id, const char *field, const char *rid)
{
        char msg[512];
        if (!bro_run_id_valid(id)) {
                snprintf(msg, sizeof(msg), "%s: not a run or task id", field);
                bro_client_error(c, "bad_request", msg, field, rid);
                return NULL;
        }
        json_t *m = load_meta(c->srv, id);
        if (!m) {
                if (errno == ENOENT)
                        bro_client_error(c, "not_found", POL_REASON(msg, sizeof(msg), STORE_NOT_FOUND, what_of(id), id),
                                         field, rid);
                else
                        bro_client_error(c, "internal", "the store's record of it cannot be read", field, rid);
                return NULL;
        }
        if (!may_see(c, m)) {
                bool owned = json_is_integer(json_object_get(m, "uid"));
                log_info("%s: %s %s refused: %s", c->stream.name, what_of(id), id, owned ? "another user's" : "no owner");
                if (owned)
                        POL_REASON(msg, sizeof(msg), STORE_FORBIDDEN, what_of(id), id);
                else
                        POL_REASON(msg, sizeof(msg), STORE_NO_OWNER, what_of(id), id);
                bro_client_error(c, "forbidden", msg, field, rid);
                json_decref(m);
                return NULL;
        }
        return m;
}

/* ---- artifact_request ---- */

static void xfer_free(struct bro_xfer *x)
{
        LIST_REMOVE(x);
        if (x->fd >= 0)
                (void)close(x->fd);
        free(x->request_id);
        free(x->path);
        free(x);
}

static void xfer_end(struct bro_xfer *x)
{
        struct bro_client *c = x->c;
        xfer_free(x);
        c->n_inflight--;
        if (c->srv->stopping)
                bro_stop_poke(c->srv);
}

static void xfer_pump(struct bro_xfer *x)
{
        struct bro_client *c = x->c;
        static uint8_t buf[PROTO_CHUNK_MAX];
        for (int k = 0; k < XFER_CHUNKS_PER_TURN; k++) {
                if (c->stream.closing || c->stream.paused || c->stream.write_failed) {
                        xfer_end(x);
                        return;
                }
                if (uv_stream_get_write_queue_size((uv_stream_t *)&c->stream.pipe) >= XFER_QUEUE_MAX)
                        return; /* the next completed write calls again */
                if (x->left == 0) {
                        char hex[SHA256_DIGEST_STRING_LENGTH];
                        SHA256End(&x->h, hex);
                        struct proto_msg m = { .type = PROTO_ARTIFACT_END };
                        m.u.artifact_end = (struct proto_artifact_end){ .request_id = x->request_id, .path = x->path,
                                                                         .bytes = x->sent, .sha256 = hex };
                        bro_client_send(c, &m);
                        xfer_end(x);
                        return;
                }
                ssize_t n = read(x->fd, buf, x->left < sizeof(buf) ? x->left : sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        /* The supervisor's copy is root's and done, the broker's its own: a file
                         * that shrinks is a fault, not a client's. */
                        log_error("%s: artifact %s: %s", c->stream.name, x->path, n < 0 ? strerror(errno) : "shorter than listed");
                        bro_client_error(c, "internal", "the artifact could not be read to its end", NULL, x->request_id);
                        xfer_end(x);
                        return;
                }
                SHA256Update(&x->h, buf, (size_t)n);
                x->left -= (uint64_t)n;
                x->sent += (uint64_t)n;
                struct proto_msg m = { .type = PROTO_ARTIFACT_DATA };
                m.u.artifact_data = (struct proto_artifact_data){ .request_id = x->request_id,
                                                                  .data = { buf, (size_t)n } };
                bro_client_send(c, &m);
        }
}

static void on_drain(struct proto_stream *s)
{
        struct bro_client *c = s->data;
        struct bro_xfer *next;
        for (struct bro_xfer *x = c->xfers; x; x = next) {
                next = x->next;
                xfer_pump(x);
        }
}

void bro_serve_client_gone(struct bro_client *c)
{
        while (c->xfers)
                xfer_free(c->xfers);
}

/* The artifacts listed in meta: path's entry, or NULL. */
static json_t *listed(json_t *meta, const char *path)
{
        json_t *a;
        size_t i;
        json_array_foreach(json_object_get(meta, "artifacts"), i, a)
        {
                json_t *p = json_object_get(a, "path");
                if (json_is_string(p) && strcmp(json_string_value(p), path) == 0)
                        return a;
        }
        return NULL;
}

void bro_serve_artifact(struct bro_client *c, const struct proto_artifact_request *req)
{
        const char *rid = req->request_id, *id = req->id;
        char msg[PROTO_PATH_MAX + 512], shown[256];
        if (c->srv->stopping) {
                bro_client_error(c, "busy", "The broker is stopping", NULL, rid);
                return;
        }
        if (bro_client_inflight_check(c, "artifact_request", msg, sizeof(msg)) < 0) {
                bro_client_error(c, "busy", msg, NULL, rid);
                return;
        }
        _cleanup_(json_decrefp) json_t *meta = meta_for(c, id, "artifact_request.id", rid);
        if (!meta)
                return;
        size_t cut = utf8_prefix_len(req->path, 200);
        snprintf(shown, sizeof(shown), "%.*s%s", (int)cut, req->path, req->path[cut] ? "..." : "");
        /* Only what the result lists: the supervisor listed regular files alone, and the names
         * are the tool's, so nothing else of the directory (nor "..") is ever asked for. */
        json_t *a = listed(meta, req->path);
        json_t *bytes = json_object_get(a, "bytes");
        if (!a || !json_is_integer(bytes) || json_integer_value(bytes) < 0) {
                bro_client_error(c, "bad_request", POL_REASON(msg, sizeof(msg), ARTIFACT_NOT_OF, shown, what_of(id), id),
                                 "artifact_request.path", rid);
                return;
        }
        _cleanup_close_ int dfd = -EBADF;
        if (is_task_id(id)) {
                char kept[PROTO_ID_MAX + 16];
                snprintf(kept, sizeof(kept), "%s.artifacts", id);
                dfd = openat(c->srv->tasks_dirfd, kept, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        } else {
                json_t *dir = json_object_get(meta, "artifacts_dir");
                /* The supervisor's path, as it sent it (trusted: its socket is the broker's). */
                dfd = json_is_string(dir) ? open(json_string_value(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
                if (!json_is_string(dir))
                        errno = ENOENT;
        }
        int fd = dfd >= 0 ? bro_open_beneath(dfd, req->path) : -1;
        struct stat st;
        if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != (uint64_t)json_integer_value(bytes))) {
                (void)close(fd);
                fd = -1;
                errno = ESTALE;
        }
        if (fd < 0) {
                int e = errno;
                log_info("%s: artifact %s of %s: %s", c->stream.name, shown, id, strerror(e));
                bro_client_error(c, "not_found",
                                 POL_REASON(msg, sizeof(msg), ARTIFACT_GONE, shown, what_of(id), id, strerror(e)),
                                 "artifact_request.path", rid);
                return;
        }
        struct bro_xfer *x = calloc(1, sizeof(*x));
        if (!x || !(x->path = strdup(req->path)) || (rid && !(x->request_id = strdup(rid)))) {
                (void)close(fd);
                if (x)
                        free(x->path);
                free(x);
                bro_client_error(c, "internal", "out of memory", NULL, rid);
                return;
        }
        x->c = c;
        x->fd = fd;
        x->left = (uint64_t)st.st_size;
        SHA256Init(&x->h);
        LIST_PREPEND(c->xfers, x);
        c->n_inflight++;
        c->stream.on_drain = on_drain;
        log_info("%s: artifact %s of %s %s, %llu bytes", c->stream.name, shown, what_of(id), id,
                 (unsigned long long)x->left);
        xfer_pump(x);
}

/* ---- list_request ---- */

static int cmp_desc(const void *a, const void *b)
{
        return strcmp(*(char *const *)b, *(char *const *)a);
}

/* "20261202T074000123456-..." (a task's after "task-"): its time, "2026-12-02T07:40:00Z". */
static void time_of(const char *id, char *buf, size_t size)
{
        const char *t = is_task_id(id) ? id + 5 : id;
        buf[0] = 0;
        if (strlen(t) >= 15 && t[8] == 'T')
                snprintf(buf, size, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", t, t + 4, t + 6, t + 9, t + 11, t + 13);
}

static char *str_or(json_t *o, const char *key, const char *dflt, size_t max)
{
        json_t *v = json_object_get(o, key);
        const char *s = json_is_string(v) ? json_string_value(v) : dflt;
        size_t n = utf8_prefix_len(s, max);
        return strndup(s, n);
}

void bro_serve_list(struct bro_client *c, const struct proto_list_request *req)
{
        const char *rid = req->request_id;
        bool tasks = strcmp(req->kind, "tasks") == 0;
        if (!tasks && strcmp(req->kind, "runs") != 0) {
                bro_client_error(c, "bad_request", "list_request.kind: expected \"runs\" or \"tasks\"", "list_request.kind", rid);
                return;
        }
        size_t limit = req->limit ? req->limit : PROTO_LIST_MAX;
        _cleanup_closedir_ DIR *d = fd_opendir_at(tasks ? c->srv->tasks_dirfd : c->srv->results_dirfd);
        if (!d) {
                bro_client_error(c, "internal", "the store cannot be read", NULL, rid);
                return;
        }
        /* Each stored result's id, once: <id>.json (a task's result stays beside its .meta). */
        char **ids = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);
                if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0 ||
                    (tasks && !is_task_id(de->d_name)))
                        continue;
                if (n == cap) {
                        char **nn = realloc(ids, (cap = cap ? cap * 2 : 64) * sizeof(*ids));
                        if (!nn)
                                break;
                        ids = nn;
                }
                if (!(ids[n] = strndup(de->d_name, len - 5)))
                        break;
                n++;
        }
        if (n)
                qsort(ids, n, sizeof(*ids), cmp_desc); /* ids begin with their time: newest first */
        struct proto_msg m = { .type = PROTO_LIST_RESULT };
        struct proto_list_result *lr = &m.u.list_result;
        lr->request_id = rid ? strdup(rid) : NULL;
        lr->kind = strdup(req->kind);
        for (size_t i = 0; i < n; i++) {
                if (lr->entries.n < limit && bro_run_id_valid(ids[i])) {
                        _cleanup_(json_decrefp) json_t *meta = load_meta(c->srv, ids[i]);
                        if (meta && may_see(c, meta)) {
                                struct proto_list_entry *e = proto_array_push(&lr->entries, sizeof(*e));
                                char when[32];
                                time_of(ids[i], when, sizeof(when));
                                if (e) {
                                        json_t *uid = json_object_get(meta, "uid");
                                        e->id = strdup(ids[i]);
                                        e->status = str_or(meta, "status", "", 32);
                                        e->time = strdup(when);
                                        e->tool = str_or(meta, "tool", "", PROTO_NAME_MAX);
                                        if (json_is_integer(uid))
                                                e->uid = (struct proto_opt_int){ .set = true, .v = json_integer_value(uid) };
                                }
                        }
                }
                free(ids[i]);
        }
        free(ids);
        bro_client_send(c, &m);
        proto_msg_free(&m);
}

/* ---- show_request ---- */

void bro_serve_show(struct bro_client *c, const struct proto_show_request *req)
{
        const char *rid = req->request_id, *id = req->id;
        _cleanup_(json_decrefp) json_t *meta = meta_for(c, id, "show_request.id", rid);
        if (!meta)
                return;
        char name[PROTO_ID_MAX + 8];
        snprintf(name, sizeof(name), "%s.json", id);
        _cleanup_(json_decrefp) json_t *res = load_json(dir_of(c->srv, id), name, STORED_MAX);
        struct proto_msg m = { .type = is_task_id(id) ? PROTO_TASK_RESULT : PROTO_RUN_RESULT };
        int r = res ? proto_from_json(proto_schemas[m.type], res, &m.u) : -errno;
        uint8_t *buf = NULL;
        size_t len;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (r == 0 && m.type == PROTO_RUN_RESULT) {
                free(m.u.run_result.request_id);
                m.u.run_result.request_id = rid ? strdup(rid) : NULL;
        }
        if (r == 0)
                r = proto_encode(&m, &buf, &len, &err);
        free(buf);
        if (r < 0) {
                char msg[256];
                if (r == -ENOENT)
                        POL_REASON(msg, sizeof(msg), STORE_NOT_FOUND, what_of(id), id);
                else
                        snprintf(msg, sizeof(msg), "the stored %s cannot be read back (%s)", what_of(id), strerror(-r));
                bro_client_error(c, r == -ENOENT ? "not_found" : "internal", msg, "show_request.id", rid);
        } else {
                bro_client_send(c, &m);
        }
        proto_msg_free(&m);
}
