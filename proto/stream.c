#define _GNU_SOURCE
#include "proto/stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/list.h"
#include "lib/log.h"
#include "policy/reasons.h"

#define STREAM_QUEUE_MAX (64u * 1024 * 1024)

struct write_req {
        uv_write_t req;
        uint8_t *buf;
        bool close_after;
};

static void stream_arm(struct proto_stream *s);

static uint64_t stream_now(const struct proto_stream *s)
{
        return uv_now(s->pipe.loop);
}

/* ---- the uids a daemon has connections from ---- */

struct proto_user *proto_user_get(struct proto_user **list, uid_t uid, size_t partial_max, size_t unread_max)
{
        struct proto_user *u;
        for (u = *list; u; u = u->next)
                if (u->quota.uid == uid)
                        break;
        if (!u && (u = calloc(1, sizeof(*u)))) {
                u->quota.uid = uid;
                u->quota.partial_max = partial_max;
                u->quota.unread_max = unread_max;
                LIST_PREPEND(*list, u);
        }
        if (u)
                u->n_refs++;
        return u;
}

void proto_user_put(struct proto_user *u)
{
        if (--u->n_refs > 0)
                return;
        LIST_REMOVE(u);
        free(u);
}

bool proto_user_admit(struct proto_stream *s, struct proto_user *u, unsigned *n_admitted, unsigned max_per_uid,
                      unsigned max, const char *daemon)
{
        char msg[256];
        if (u->n_conns >= max_per_uid) {
                POL_REASON(msg, sizeof(msg), CONN_UID_CAP, u->quota.uid, daemon, max_per_uid);
                log_warn("%s: refused, %u connections of its uid", s->name, u->n_conns);
                proto_stream_fail(s, "busy", msg, NULL, NULL);
                return false;
        }
        if (*n_admitted >= max) {
                POL_REASON(msg, sizeof(msg), CONN_CAP, daemon, max);
                log_warn("%s: refused, %u clients connected", s->name, *n_admitted);
                proto_stream_fail(s, "busy", msg, NULL, NULL);
                return false;
        }
        u->n_conns++;
        (*n_admitted)++;
        return true;
}

/* ---- the quota: this stream's share of its uid's bytes ---- */

static void charge_partial(struct proto_stream *s)
{
        if (!s->quota)
                return;
        size_t held = s->reader.len - s->reader.pending;
        s->quota->partial = s->quota->partial - s->charged_partial + held;
        s->charged_partial = held;
}

/* libuv writes what the socket takes at once and queues the rest: the queue is what the peer
 * has not taken. */
static void charge_unread(struct proto_stream *s)
{
        if (!s->quota || s->closing)
                return;
        size_t q = uv_stream_get_write_queue_size((uv_stream_t *)&s->pipe);
        s->quota->unread = s->quota->unread - s->charged_unread + q;
        s->charged_unread = q;
}

static void release_quota(struct proto_stream *s)
{
        if (!s->quota)
                return;
        s->quota->partial -= s->charged_partial;
        s->quota->unread -= s->charged_unread;
        s->charged_partial = s->charged_unread = 0;
}

/* ---- closing: the pipe and the timer, then the owner's callback ---- */

static void drop_fds(struct proto_stream *s)
{
        for (size_t i = 0; i < s->n_fds; i++)
                (void)close(s->fds[i]);
        s->n_fds = 0;
        s->fds_for_msg = false;
}

static void on_handle_closed(uv_handle_t *h)
{
        struct proto_stream *s = h->data;
        if (--s->open_handles > 0)
                return;
        drop_fds(s);
        release_quota(s);
        proto_reader_free(&s->reader);
        if (s->on_close)
                s->on_close(s);
}

void proto_stream_close(struct proto_stream *s)
{
        if (s->closing)
                return;
        s->closing = true;
        s->paused = true;
        uv_close((uv_handle_t *)&s->pipe, on_handle_closed);
        uv_close((uv_handle_t *)&s->timer, on_handle_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
        (void)status;
        struct proto_stream *s = req->handle->data;
        free(req);
        proto_stream_close(s);
}

void proto_stream_end(struct proto_stream *s)
{
        if (s->closing)
                return;
        s->paused = true;
        (void)uv_read_stop((uv_stream_t *)&s->pipe);
        uv_shutdown_t *req = malloc(sizeof(*req));
        if (!req || uv_shutdown(req, (uv_stream_t *)&s->pipe, on_shutdown) < 0) {
                free(req);
                proto_stream_close(s);
                return;
        }
        /* The shutdown waits for the peer to take what is queued: a client's connection is
         * not held for that longer than its error frame would be. */
        if (s->bounds) {
                s->lingering = true;
                s->linger_t0_ms = stream_now(s);
                stream_arm(s);
        }
}

/* ---- the timer: one deadline at a time ---- */

static void on_timer(uv_timer_t *t);

/* The deadline that applies now (loop time, ms), 0 for none: an error frame waiting to be
 * read; else an unfinished frame; else the connection's idleness. */
static uint64_t stream_deadline(const struct proto_stream *s)
{
        const struct proto_bounds *b = s->bounds;
        if (!b || s->closing)
                return 0;
        if (s->lingering) {
                unsigned t = b->frame_s ? b->frame_s : b->idle_s;
                return t ? s->linger_t0_ms + t * 1000ull : 0;
        }
        if (s->paused)
                return 0;
        if (s->frame_t0_ms && b->frame_s)
                return s->frame_t0_ms + b->frame_s * 1000ull;
        return b->idle_s ? s->active_ms + b->idle_s * 1000ull : 0;
}

static void stream_arm(struct proto_stream *s)
{
        if (!s->bounds || s->closing)
                return;
        uint64_t d = stream_deadline(s), now = stream_now(s);
        if (!d)
                (void)uv_timer_stop(&s->timer);
        else
                (void)uv_timer_start(&s->timer, on_timer, d > now ? d - now : 0, 0);
}

static void on_timer(uv_timer_t *t)
{
        struct proto_stream *s = t->data;
        const struct proto_bounds *b = s->bounds;
        uint64_t d = stream_deadline(s), now = stream_now(s);
        if (!d)
                return;
        if (now < d) {
                stream_arm(s);
                return;
        }
        char msg[512];
        if (s->lingering) {
                log_warn("%s: closed: what was queued for it (its error frame last) was not read within %u s", s->name,
                         b->frame_s ? b->frame_s : b->idle_s);
                proto_stream_close(s);
                return;
        }
        if (s->frame_t0_ms && b->frame_s) {
                POL_REASON(msg, sizeof(msg), FRAME_TIMEOUT, b->frame_s, b->daemon);
                log_warn("%s: %zu bytes of a frame after %u s, closing", s->name,
                         s->reader.len - s->reader.pending, b->frame_s);
                proto_stream_fail(s, "bad_frame", msg, NULL, NULL);
                return;
        }
        if (s->busy && s->busy(s)) {
                /* A request in flight: the connection waits for it, which is not idleness. */
                s->active_ms = now;
                stream_arm(s);
                return;
        }
        POL_REASON(msg, sizeof(msg), CONN_IDLE, b->idle_s, b->daemon);
        log_info("%s: idle for %u s, closing", s->name, b->idle_s);
        proto_stream_fail(s, "busy", msg, NULL, NULL);
}

/* ---- writing ---- */

static void on_written(uv_write_t *req, int status)
{
        struct write_req *w = (struct write_req *)req;
        struct proto_stream *s = req->handle->data;
        bool close_after = w->close_after;
        free(w->buf);
        free(w);
        charge_unread(s);
        if (status < 0 && !close_after && !s->paused && !s->closing) {
                /* The peer has closed (EPIPE): what it sent before it went is still to be read,
                 * such as the error frame that says why (a supervisor refusing a connection
                 * writes it, then closes without reading the request). Reading goes on to the
                 * end of the stream, which closes it; nothing more is written. */
                s->write_failed = true;
                return;
        }
        if (status < 0 || close_after)
                proto_stream_close(s);
        else if (s->on_drain && !s->closing && !s->paused)
                s->on_drain(s);
}

/* Whether a frame of len bytes may be queued: a peer that leaves too much unread is told so
 * and dropped. With a quota the bound is its uid's, over all its connections; a frame into
 * an empty queue always goes (so a bound below one frame refuses nobody who reads), which
 * lets a uid go over by at most one frame. */
static bool may_queue(struct proto_stream *s, size_t len)
{
        size_t queued = uv_stream_get_write_queue_size((uv_stream_t *)&s->pipe);
        struct proto_quota *q = s->quota;
        if (!q) {
                if (queued + len <= s->max_queue)
                        return true;
                log_warn("%s: dropped, %zu bytes unread", s->name, queued);
                proto_stream_close(s);
                return false;
        }
        if (!q->unread_max || q->unread == 0 || q->unread + len <= q->unread_max)
                return true;
        char msg[512];
        POL_REASON(msg, sizeof(msg), UNREAD_UID_CAP, q->uid, (unsigned long long)q->unread,
                   s->bounds ? s->bounds->daemon : "server", (unsigned long long)q->unread_max);
        log_warn("%s: %zu bytes unread on this connection, %zu for its uid: closing", s->name, queued, q->unread);
        proto_stream_fail(s, "busy", msg, NULL, NULL);
        return false;
}

static int stream_write(struct proto_stream *s, uint8_t *buf, size_t len, bool close_after)
{
        if (s->closing || s->write_failed) {
                free(buf);
                return -EPIPE;
        }
        /* An error frame that closes the connection is small and always queued. */
        if (!close_after && !may_queue(s, len)) {
                free(buf);
                return -ENOBUFS;
        }
        struct write_req *w = calloc(1, sizeof(*w));
        if (!w) {
                free(buf);
                proto_stream_close(s);
                return -ENOMEM;
        }
        w->buf = buf;
        w->close_after = close_after;
        uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
        int r = uv_write(&w->req, (uv_stream_t *)&s->pipe, &b, 1, on_written);
        if (r < 0) {
                free(buf);
                free(w);
                proto_stream_close(s);
                return r;
        }
        charge_unread(s);
        s->active_ms = stream_now(s);
        stream_arm(s);
        return 0;
}

int proto_stream_send(struct proto_stream *s, const struct proto_msg *m)
{
        uint8_t *buf;
        size_t len;
        struct anvil_err err = ANVIL_ERR_INIT;
        int r = proto_encode(m, &buf, &len, &err);
        if (r < 0) {
                log_error("%s: cannot encode %s: %s", s->name, proto_type_name(m->type), err.msg);
                proto_stream_fail(s, "internal", err.msg, NULL, NULL);
                return r;
        }
        return stream_write(s, buf, len, false);
}

int proto_stream_send_fds(struct proto_stream *s, const struct proto_msg *m, const int *fds, size_t n)
{
        if (n == 0)
                return proto_stream_send(s, m);
        uint8_t *buf;
        size_t len;
        struct anvil_err err = ANVIL_ERR_INIT;
        uv_os_fd_t sock;
        int r = proto_encode(m, &buf, &len, &err);
        if (r < 0) {
                log_error("%s: cannot encode %s: %s", s->name, proto_type_name(m->type), err.msg);
                proto_stream_close(s);
                return r;
        }
        /* The frame's header carries the fds: nothing may be queued before it. */
        if (s->closing || uv_stream_get_write_queue_size((uv_stream_t *)&s->pipe) != 0 ||
            uv_fileno((uv_handle_t *)&s->pipe, &sock) < 0) {
                free(buf);
                proto_stream_close(s);
                return -EBUSY;
        }
        if ((r = fd_send_fds(sock, buf, 4, fds, n, &err)) < 0) {
                log_error("%s: %s", s->name, err.msg);
                free(buf);
                proto_stream_close(s);
                return r;
        }
        memmove(buf, buf + 4, len - 4);
        return stream_write(s, buf, len - 4, false);
}

size_t proto_stream_take_fds(struct proto_stream *s, int *fds, size_t max)
{
        if (!s->fds_for_msg)
                return 0;
        size_t k = s->n_fds < max ? s->n_fds : max;
        memcpy(fds, s->fds, k * sizeof(int));
        memmove(s->fds, s->fds + k, (s->n_fds - k) * sizeof(int));
        s->n_fds -= k;
        return k;
}

void proto_stream_fail(struct proto_stream *s, const char *code, const char *message,
                       const char *field, const char *request_id)
{
        if (s->paused)
                return;
        s->paused = true;
        (void)uv_read_stop((uv_stream_t *)&s->pipe);
        uint8_t *buf;
        size_t len;
        if (proto_encode_error(code, message, field, request_id, &buf, &len) < 0) {
                proto_stream_close(s);
                return;
        }
        (void)stream_write(s, buf, len, true);
        /* A client's connection that does not read its error frame is not held for it. */
        if (s->bounds && !s->closing) {
                s->lingering = true;
                s->linger_t0_ms = stream_now(s);
                stream_arm(s);
        }
}

/* ---- reading ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
        (void)h;
        (void)suggested;
        static char slab[65536]; /* the loop is single-threaded; data is copied in on_read */
        *buf = uv_buf_init(slab, sizeof(slab));
}

/* Malformed input: the owner's call if it wants one, else an error frame and a close. */
static void stream_bad(struct proto_stream *s, const char *code, const char *message, const char *field)
{
        if (!s->on_bad) {
                proto_stream_fail(s, code, message, field, NULL);
                return;
        }
        s->paused = true;
        (void)uv_read_stop((uv_stream_t *)&s->pipe);
        s->on_bad(s, code, message);
}

/* After a read: the uid's share of unfinished frames, and when the unfinished one began. */
static void after_read(struct proto_stream *s, unsigned frames, uint64_t now)
{
        charge_partial(s);
        bool partial = proto_reader_partial(&s->reader);
        if (!partial)
                s->frame_t0_ms = 0;
        else if (frames || !s->frame_t0_ms)
                s->frame_t0_ms = now;
        stream_arm(s);
}

/* Whether nread more bytes fit in the uid's bound on unfinished frames. */
static bool may_buffer(struct proto_stream *s, size_t nread)
{
        struct proto_quota *q = s->quota;
        if (!q || !q->partial_max || q->partial + nread <= q->partial_max)
                return true;
        char msg[512];
        POL_REASON(msg, sizeof(msg), PARTIAL_UID_CAP, q->uid, s->bounds ? s->bounds->daemon : "server",
                   (unsigned long long)(q->partial + nread), (unsigned long long)q->partial_max);
        log_warn("%s: %zu bytes of unfinished frames for its uid, closing", s->name, q->partial);
        proto_stream_fail(s, "busy", msg, NULL, NULL);
        return false;
}

/* The fds libuv queued with the last read (an ipc pipe), out of its handles: each is accepted
 * into a pipe handle of its own, copied, and the handle closed (libuv gives no other way to
 * a received fd that is not a socket). */
static void on_fd_handle_closed(uv_handle_t *h)
{
        free(h);
}

static int collect_fds(struct proto_stream *s, int *got, size_t max, size_t *n)
{
        int r = 0;
        *n = 0;
        while (uv_pipe_pending_count(&s->pipe) > 0) {
                uv_pipe_t *h = malloc(sizeof(*h));
                uv_os_fd_t fd = -1;
                if (!h || uv_pipe_init(s->pipe.loop, h, 0) < 0) {
                        free(h);
                        return -ENOMEM; /* the stream is failed; libuv closes what is left with it */
                }
                if (uv_accept((uv_stream_t *)&s->pipe, (uv_stream_t *)h) == 0 && uv_fileno((uv_handle_t *)h, &fd) == 0) {
                        int c = *n < max ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
                        if (c >= 0)
                                got[(*n)++] = c;
                        else
                                r = *n < max ? -errno : -E2BIG;
                }
                uv_close((uv_handle_t *)h, on_fd_handle_closed);
        }
        return r;
}

/* After a read of nread bytes that brought fds: they belong to the last frame that begins in
 * it. The reader's buffer starts at rx_next, a frame's first byte; its headers give the rest. */
static int attach_fds(struct proto_stream *s, size_t nread, char *msg, size_t size)
{
        int got[PROTO_INPUTS_MAX];
        size_t n;
        int r = collect_fds(s, got, PROTO_INPUTS_MAX, &n);
        if (r < 0 || n == 0) {
                for (size_t i = 0; i < n; i++)
                        (void)close(got[i]);
                if (r == -E2BIG)
                        POL_REASON(msg, size, INPUT_FD_TOO_MANY, (unsigned)PROTO_INPUTS_MAX);
                else if (r < 0)
                        POL_REASON(msg, size, INPUT_FD_RECV, strerror(-r));
                return r;
        }
        const struct proto_reader *rd = &s->reader;
        uint64_t chunk = s->rx_total - nread, at = UINT64_MAX;
        for (size_t off = 0; off < rd->len;) {
                if (s->rx_next + off >= chunk)
                        at = s->rx_next + off;
                if (off + 4 > rd->len)
                        break;
                uint32_t be;
                memcpy(&be, rd->buf + off, 4);
                uint32_t fl = ntohl(be);
                if (fl == 0 || fl > rd->max)
                        break;
                off += 4 + (size_t)fl;
        }
        if (at == UINT64_MAX || s->n_fds) {
                for (size_t i = 0; i < n; i++)
                        (void)close(got[i]);
                if (at == UINT64_MAX)
                        POL_REASON(msg, size, INPUT_FD_MID_FRAME);
                else
                        POL_REASON(msg, size, INPUT_FD_OVERLAP);
                return -EBADMSG;
        }
        memcpy(s->fds, got, n * sizeof(int));
        s->n_fds = n;
        s->fds_at = at;
        return 0;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
        struct proto_stream *s = st->data;
        struct anvil_err err = ANVIL_ERR_INIT;
        char field[256];
        if (s->paused)
                return;
        if (nread == UV_EOF) {
                if (proto_reader_partial(&s->reader))
                        stream_bad(s, "bad_frame", "message: truncated frame at end of stream", NULL);
                else
                        proto_stream_close(s);
                return;
        }
        if (nread < 0) {
                proto_stream_close(s);
                return;
        }
        if (nread == 0)
                return;
        uint64_t now = stream_now(s);
        s->active_ms = now;
        if (!may_buffer(s, (size_t)nread))
                return;
        if (proto_reader_feed(&s->reader, buf->base, (size_t)nread, &err) < 0) {
                stream_bad(s, "bad_frame", err.msg, NULL);
                after_read(s, 0, now);
                return;
        }
        s->rx_total += (uint64_t)nread;
        if (s->accept_fds && uv_pipe_pending_count(&s->pipe) > 0) {
                char msg[256];
                if (attach_fds(s, (size_t)nread, msg, sizeof(msg)) < 0) {
                        stream_bad(s, "bad_frame", msg, NULL);
                        after_read(s, 0, now);
                        return;
                }
        }
        unsigned frames = 0;
        for (;;) {
                const uint8_t *p;
                size_t n;
                int r = proto_reader_next(&s->reader, &p, &n, &err);
                if (r < 0) {
                        stream_bad(s, "bad_frame", err.msg, NULL);
                        break;
                }
                if (r == 0)
                        break;
                frames++;
                uint64_t at = s->rx_next;
                s->rx_next += (uint64_t)n + 4;
                s->fds_for_msg = s->n_fds && s->fds_at == at;
                struct proto_msg m;
                if (proto_decode(p, n, &m, &err) < 0) {
                        drop_fds(s);
                        proto_err_field(&err, field, sizeof(field));
                        stream_bad(s, "bad_message", err.msg, field);
                        break;
                }
                enum proto_type type = m.type;
                /* Only a run_request's inputs (and a ui_login's, the broker's web UI folder)
                 * are fds: any other message with fds is refused before its owner sees it. */
                if (s->fds_for_msg && type != PROTO_RUN_REQUEST && type != PROTO_UI_LOGIN)
                        proto_msg_free(&m);
                else
                        s->on_msg(s, &m);
                if (s->fds_for_msg && s->n_fds) {
                        /* fds where none is expected: refused, whatever the owner did */
                        char msg[256];
                        drop_fds(s);
                        POL_REASON(msg, sizeof(msg), INPUT_FD_UNEXPECTED, proto_type_name(type));
                        proto_stream_fail(s, "bad_request", msg, NULL, NULL);
                }
                s->fds_for_msg = false;
                if (s->paused)
                        break;
        }
        after_read(s, frames, now);
}

static int stream_init(uv_loop_t *loop, struct proto_stream *s, proto_stream_msg_cb on_msg,
                       proto_stream_close_cb on_close, void *data, bool fds)
{
        memset(s, 0, sizeof(*s));
        s->accept_fds = fds;
        int r = uv_pipe_init(loop, &s->pipe, fds ? 1 : 0);
        if (r < 0)
                return r;
        /* libuv's uv_timer_init cannot fail (1.44 returns 0): there is no half-made stream to
         * close asynchronously. */
        (void)uv_timer_init(loop, &s->timer);
        s->pipe.data = s;
        s->timer.data = s;
        s->open_handles = 2;
        s->on_msg = on_msg;
        s->on_close = on_close;
        s->data = data;
        s->max_queue = STREAM_QUEUE_MAX;
        proto_reader_init(&s->reader, PROTO_FRAME_MAX);
        snprintf(s->name, sizeof(s->name), "connection");
        return 0;
}

int proto_stream_init(uv_loop_t *loop, struct proto_stream *s, proto_stream_msg_cb on_msg,
                      proto_stream_close_cb on_close, void *data)
{
        return stream_init(loop, s, on_msg, on_close, data, false);
}

int proto_stream_init_fds(uv_loop_t *loop, struct proto_stream *s, proto_stream_msg_cb on_msg,
                          proto_stream_close_cb on_close, void *data)
{
        return stream_init(loop, s, on_msg, on_close, data, true);
}

void proto_stream_bound(struct proto_stream *s, const struct proto_bounds *b, struct proto_quota *q,
                        proto_stream_busy_cb busy)
{
        s->bounds = b;
        s->quota = q;
        s->busy = busy;
        s->active_ms = stream_now(s);
        stream_arm(s);
}

int proto_stream_open(struct proto_stream *s, int fd, struct anvil_err *err)
{
        int r = uv_pipe_open(&s->pipe, fd);
        if (r < 0)
                return anvil_err_set(err, -r, "Failed to adopt fd %d: %s", fd, uv_strerror(r));
        return 0;
}

int proto_stream_start(struct proto_stream *s)
{
        return uv_read_start((uv_stream_t *)&s->pipe, on_alloc, on_read);
}

int proto_stream_accept(uv_stream_t *listener, struct proto_stream *s, struct ucred *cred)
{
        int r = uv_accept(listener, (uv_stream_t *)&s->pipe);
        if (r < 0)
                return r;
        uv_os_fd_t fd;
        socklen_t len = sizeof(*cred);
        if ((r = uv_fileno((uv_handle_t *)&s->pipe, &fd)) < 0)
                return r;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0)
                return -errno;
        snprintf(s->name, sizeof(s->name), "client pid %d uid %u", (int)cred->pid, (unsigned)cred->uid);
        return 0;
}

/* An existing socket is stale only if nobody answers on it: never steal a live daemon's. */
static bool socket_in_use(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return false;
        bool live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN;
        (void)close(fd);
        return live; /* accepted, or a listener with a full backlog */
}

int proto_listen(uv_loop_t *loop, uv_pipe_t *listener, const char *path, gid_t group, uv_connection_cb on_connection,
                 struct anvil_err *err)
{
        struct sockaddr_un sa;
        if (strlen(path) >= sizeof(sa.sun_path))
                return anvil_err_set(err, ENAMETOOLONG, "%s: longer than a Unix socket path may be (%zu bytes)", path,
                                     sizeof(sa.sun_path) - 1);
        struct stat st;
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode))
                        return anvil_err_set(err, EEXIST, "%s exists and is not a socket", path);
                if (socket_in_use(path))
                        return anvil_err_set(err, EADDRINUSE, "%s is in use: another daemon is listening on it", path);
                if (unlink(path) < 0)
                        return anvil_err_sys(err, errno, "Failed to remove the stale socket %s", path);
        } else if (errno != ENOENT)
                return anvil_err_sys(err, errno, "Failed to stat %s", path);
        int r = uv_pipe_init(loop, listener, 0);
        if (r < 0)
                return anvil_err_set(err, -r, "Failed to create the listener: %s", uv_strerror(r));
        mode_t old = umask(0177);
        r = uv_pipe_bind(listener, path);
        umask(old);
        if (r < 0)
                return anvil_err_set(err, -r, "Failed to bind %s: %s", path, uv_strerror(r));
        if ((group != (gid_t)-1 && chown(path, (uid_t)-1, group) < 0) || chmod(path, 0660) < 0) {
                r = anvil_err_sys(err, errno, "Failed to open %s to its group", path);
                (void)unlink(path);
                return r;
        }
        r = uv_listen((uv_stream_t *)listener, 64, on_connection);
        if (r < 0) {
                (void)unlink(path);
                return anvil_err_set(err, -r, "Failed to listen on %s: %s", path, uv_strerror(r));
        }
        return 0;
}
