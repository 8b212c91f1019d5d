/* The broker's web UI: libmicrohttpd on the broker's libuv loop (docs/web-api.md). Runs in
 * anvil-broker (unprivileged), off unless --http is set.
 *
 * No thread: libmicrohttpd runs in its external-select mode with epoll (MHD_USE_EPOLL), whose
 * one epoll fd a uv_poll watches; each time it is readable, or libmicrohttpd's own timeout
 * (MHD_get_timeout) on a uv_timer comes, MHD_run does what is ready and returns. An answer
 * that waits for the broker (a listing, a run's start, an artifact's bytes, an event stream
 * with nothing new) suspends its connection (MHD_suspend_connection) and is resumed when it
 * has something, so that nothing ever blocks the loop and the socket's clients are served as
 * before, whatever the HTTP clients do.
 *
 * Bounds: the request line and headers within HTTP_CONN_MEMORY (libmicrohttpd answers 431
 * beyond), a body within HTTP_BODY_MAX (413), HTTP_CONNS_MAX connections and HTTP_CONNS_PER_IP
 * from one address, HTTP_TIMEOUT_S idle. Every answer has the headers of http_secure; static
 * files are opened below --web-dir by descriptor, no link followed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/http_int.h"
#include "broker/render.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "policy/http_texts.h"

void http_secure(struct MHD_Response *resp, bool api)
{
        (void)MHD_add_response_header(resp, "Content-Security-Policy", HTTP_CSP);
        (void)MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        (void)MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
        (void)MHD_add_response_header(resp, "X-Frame-Options", "DENY");
        (void)MHD_add_response_header(resp, "Cross-Origin-Opener-Policy", "same-origin");
        (void)MHD_add_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
        if (api)
                (void)MHD_add_response_header(resp, "Cache-Control", "no-store");
}

/* ---- the loop ---- */

static void run_mhd(struct bro_http *h);

static void on_poll(uv_poll_t *p, int status, int events)
{
        (void)status;
        (void)events;
        run_mhd(p->data);
}

static void on_timer(uv_timer_t *t)
{
        run_mhd(t->data);
}

static void on_kick(uv_idle_t *i)
{
        struct bro_http *h = i->data;
        (void)uv_idle_stop(i);
        h->kicked = false;
        run_mhd(h);
}

/* A connection resumed: MHD_run on this turn of the loop (its epoll fd is readable too, by
 * libmicrohttpd's own signal, but a resume made inside MHD_run is not seen by that run). */
void http_kick(struct bro_http *h)
{
        if (h->handles && !h->kicked) {
                h->kicked = true;
                (void)uv_idle_start(&h->kick, on_kick);
        }
}

static void run_mhd(struct bro_http *h)
{
        if (!h->d)
                return;
        (void)MHD_run(h->d);
        MHD_UNSIGNED_LONG_LONG t;
        if (MHD_get_timeout(h->d, &t) == MHD_YES)
                (void)uv_timer_start(&h->timer, on_timer, t, 0);
        else
                (void)uv_timer_stop(&h->timer);
}

/* ---- answers ---- */

void http_answer(struct http_req *r, unsigned status, struct MHD_Response *resp)
{
        if (r->resp) /* answered already (a second frame after the first's answer) */
                MHD_destroy_response(r->resp);
        r->status = status;
        r->resp = resp;
        if (r->suspended) {
                r->suspended = false;
                MHD_resume_connection(r->conn);
                http_kick(r->h);
        }
}

char *http_json_text(json_t *data)
{
        char *text = data ? json_dumps(data,
                                       JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))
                          : NULL;
        json_decref(data);
        return text;
}

char *http_sse_frame(const char *type, json_t *data, size_t *size)
{
        char *text = http_json_text(data);
        if (!text)
                return NULL;
        size_t n = strlen(type) + strlen(text) + 32;
        char *ev = malloc(n);
        if (ev) {
                snprintf(ev, n, "event: %s\ndata: %s\n\n", type, text);
                *size = n;
        }
        free(text);
        return ev;
}

void http_json(struct http_req *r, unsigned status, json_t *body)
{
        char *text = http_json_text(body);
        struct MHD_Response *resp =
                text ? MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE) : NULL;
        if (!resp) {
                free(text);
                resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
                status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        }
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        http_secure(resp, true);
        http_answer(r, status, resp);
}

void http_error(struct http_req *r, unsigned status, const char *code, const char *message)
{
        log_info("http #%llu %s: %u %s: %s", (unsigned long long)r->seq, r->url, status, code, message);
        http_json(r, status, json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", message));
}

unsigned http_status_of(const char *code)
{
        static const struct {
                const char *code;
                unsigned status;
        } map[] = {
                { "not_found", 404 },   { "forbidden", 403 },       { "bad_request", 400 }, { "busy", 503 },
                { "unavailable", 503 }, { "supervisor_gone", 502 }, { "unsupported", 400 },
        };
        for (size_t i = 0; code && i < sizeof(map) / sizeof(map[0]); i++)
                if (strcmp(code, map[i].code) == 0)
                        return map[i].status;
        return 500;
}

/* ---- streamed answers ---- */

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
        struct http_req *r = cls;
        (void)pos;
        if (r->out_off == r->out_len && r->job)
                http_job_pull(r); /* the job's next events into out */
        if (r->out_off < r->out_len) {
                size_t n = r->out_len - r->out_off < max ? r->out_len - r->out_off : max;
                memcpy(buf, r->out + r->out_off, n);
                r->out_off += n;
                if (r->out_off == r->out_len)
                        r->out_off = r->out_len = 0;
                if (r->reading_paused && r->link && r->out_len < (1u << 20)) {
                        r->reading_paused = false;
                        (void)proto_stream_start(&r->link->stream);
                }
                return (ssize_t)n;
        }
        if (r->out_err)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        if (r->out_end)
                return MHD_CONTENT_READER_END_OF_STREAM;
        /* Nothing yet: parked until http_stream_wake (libmicrohttpd's pattern for "no data
         * yet": returning 0 without suspending would spin). */
        r->suspended = true;
        MHD_suspend_connection(r->conn);
        return 0;
}

struct MHD_Response *http_stream_response(struct http_req *r)
{
        return MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, r, NULL);
}

void http_stream_wake(struct http_req *r)
{
        if (r->suspended && r->resp == NULL) {
                r->suspended = false;
                MHD_resume_connection(r->conn);
                http_kick(r->h);
        }
}

int http_stream_append(struct http_req *r, const char *data, size_t len)
{
        if (r->out_off && r->out_off == r->out_len)
                r->out_off = r->out_len = 0;
        char *n = realloc(r->out, r->out_len + len + 1);
        if (!n)
                return -ENOMEM;
        r->out = n;
        memcpy(r->out + r->out_len, data, len);
        r->out_len += len;
        return 0;
}

/* ---- static files ---- */

static void serve_static(struct http_req *r, const char *path)
{
        int fd = bro_open_beneath(r->h->web_dirfd, path);
        struct stat st;
        if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
                (void)close(fd);
                fd = -1;
        }
        char msg[256];
        if (fd < 0) {
                http_error(r, 404, "not_found", POL_HTTP_MSG(msg, sizeof(msg), NOT_FOUND));
                return;
        }
        struct MHD_Response *resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd); /* takes fd */
        if (!resp) {
                (void)close(fd);
                http_error(r, 500, "internal", "out of memory");
                return;
        }
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, bro_http_static_type(path));
        (void)MHD_add_response_header(resp, "Cache-Control", "no-cache");
        http_secure(resp, false);
        http_answer(r, 200, resp);
}

/* ---- requests ---- */

static bool origin_ok(struct http_req *r)
{
        const char *o = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Origin");
        return o && strcmp(o, r->h->origin) == 0;
}

static void dispatch(struct http_req *r, const char *method)
{
        struct http_route rt;
        char msg[512];
        if (r->h->check_host &&
            !bro_http_host_ok(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST),
                              r->h->port)) {
                http_error(r, 421, "bad_request", POL_HTTP_MSG(msg, sizeof(msg), BAD_HOST, r->h->origin));
                return;
        }
        int rc = bro_http_route(method, r->url, &rt);
        if (rc == -EINVAL) {
                http_error(r, 400, "bad_request", POL_HTTP_MSG(msg, sizeof(msg), BAD_PATH));
                return;
        }
        if (rc == -ENOENT) {
                http_error(r, 404, "not_found", POL_HTTP_MSG(msg, sizeof(msg), NOT_FOUND));
                return;
        }
        if (rc == -EPERM) {
                http_error(r, 405, "bad_request", POL_HTTP_MSG(msg, sizeof(msg), METHOD));
                return;
        }
        if (rt.kind == HR_STATIC) {
                serve_static(r, rt.name);
                return;
        }
        if (rt.kind == HR_LOGIN) {
                http_login(r);
                return;
        }
        r->sess = http_session_of(r->h, r->conn);
        if (r->sess)
                r->uid = r->sess->uid;
        if (!r->sess) {
                http_error(r, 401, "unauthorized", POL_HTTP_MSG(msg, sizeof(msg), NO_SESSION));
                return;
        }
        if (rt.post && !origin_ok(r)) {
                http_error(r, 403, "forbidden", POL_HTTP_MSG(msg, sizeof(msg), BAD_ORIGIN, r->h->origin));
                return;
        }
        if (r->body_too_big) {
                http_error(r, 413, "too_large",
                           POL_HTTP_MSG(msg, sizeof(msg), BODY_TOO_LARGE, (unsigned long long)HTTP_BODY_MAX));
                return;
        }
        http_api(r, &rt);
}

static enum MHD_Result queue(struct http_req *r)
{
        struct MHD_Response *resp = TAKE_PTR(r->resp);
        enum MHD_Result res = MHD_queue_response(r->conn, r->status, resp);
        MHD_destroy_response(resp);
        return res;
}

static bool too_long(struct MHD_Connection *conn)
{
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        return cl && (strlen(cl) > 12 || strtoull(cl, NULL, 10) > HTTP_BODY_MAX);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
        struct bro_http *h = cls;
        struct http_req *r = *con_cls;
        (void)version;
        if (!r) {
                if (!(r = calloc(1, sizeof(*r))) || !(r->url = strdup(url))) {
                        free(r);
                        return MHD_NO;
                }
                r->h = h;
                r->conn = conn;
                r->seq = ++h->next_req;
                r->post = strcmp(method, "POST") == 0;
                *con_cls = r;
                if (r->post && too_long(conn)) {
                        /* Refused from its Content-Length, before a byte of it is read. */
                        char msg[128];
                        r->dispatched = true;
                        http_error(r, 413, "too_large",
                                   POL_HTTP_MSG(msg, sizeof(msg), BODY_TOO_LARGE, (unsigned long long)HTTP_BODY_MAX));
                        return queue(r);
                }
                return MHD_YES;
        }
        if (*upload_size) {
                if (!r->body_too_big && r->body_len + *upload_size <= HTTP_BODY_MAX) {
                        char *b = realloc(r->body, r->body_len + *upload_size + 1);
                        if (!b)
                                return MHD_NO;
                        memcpy(b + r->body_len, upload_data, *upload_size);
                        r->body = b;
                        r->body_len += *upload_size;
                        r->body[r->body_len] = 0;
                } else {
                        r->body_too_big = true; /* read and dropped; 413 at its end */
                }
                *upload_size = 0;
                return MHD_YES;
        }
        if (!r->dispatched) {
                r->dispatched = true;
                dispatch(r, method);
        }
        if (r->resp)
                return queue(r);
        if (!r->suspended) {
                r->suspended = true;
                MHD_suspend_connection(conn);
        }
        return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
        struct http_req *r = *con_cls;
        (void)cls;
        (void)conn;
        (void)toe;
        if (!r)
                return;
        *con_cls = NULL;
        r->ended = true;
        http_req_gone(r);
        if (r->resp)
                MHD_destroy_response(r->resp);
        json_decref(r->acc);
        free(r->out);
        free(r->body);
        free(r->url);
        free(r->id);
        free(r->name);
        free(r);
}

/* %00 anywhere in the path or a query is refused, never cut short: the path becomes one that
 * no route takes (400). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
        (void)cls;
        (void)c;
        if (strstr(s, "%00")) {
                strcpy(s, "/\x01");
                return 2;
        }
        return MHD_http_unescape(s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
        char line[512];
        (void)cls;
        (void)vsnprintf(line, sizeof(line), fmt, ap);
        line[strcspn(line, "\n")] = 0;
        log_info("http: %s", line);
}

/* ---- start and stop ---- */

/* --web-dir, or beside the program: BINDIR/../share/anvil/web. */
static int open_web_dir(const char *given, char *shown, size_t size)
{
        char exe[PATH_MAX - 64];
        if (given)
                snprintf(shown, size, "%s", given);
        else {
                ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
                exe[n > 0 ? n : 0] = 0;
                char *slash = strrchr(exe, '/');
                if (slash)
                        *slash = 0;
                (void)snprintf(shown, size, "%.*s/../share/anvil/web", (int)(size - 32), exe);
        }
        return open(shown, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int bro_http_start(struct bro_server *srv, struct anvil_err *err)
{
        const struct bro_http_config *hc = &srv->cfg.http;
        char msg[1024], dir[PATH_MAX];
        struct sockaddr_storage ss;
        socklen_t sl;
        bool loopback;
        if (!hc->addr)
                return 0;
        if (bro_http_parse_addr(hc->addr, &ss, &sl, &loopback) < 0)
                return anvil_err_set(err, EINVAL, "%s", POL_HTTP_MSG(msg, sizeof(msg), ADDR_BAD, hc->addr));
        if (!loopback && !hc->allow_remote)
                return anvil_err_set(err, EPERM, "%s", POL_HTTP_MSG(msg, sizeof(msg), ADDR_REMOTE, hc->addr));
        struct bro_http *h = calloc(1, sizeof(*h));
        if (!h)
                return anvil_err_set(err, ENOMEM, "out of memory");
        h->srv = srv;
        srv->http = h;
        if ((h->web_dirfd = open_web_dir(hc->web_dir, dir, sizeof(dir))) < 0)
                return anvil_err_set(err, errno, "%s", POL_HTTP_MSG(msg, sizeof(msg), WEB_DIR, dir, strerror(errno)));
        snprintf(h->addr_shown, sizeof(h->addr_shown), "%s", hc->addr);
        h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
                                        (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
                                0, NULL, NULL, on_access, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                                MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                MHD_OPTION_UNESCAPE_CALLBACK, unescape, h, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                (size_t)HTTP_CONN_MEMORY, MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNS_MAX,
                                MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_CONNS_PER_IP,
                                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S, MHD_OPTION_END);
        if (!h->d)
                return anvil_err_set(
                        err, EADDRNOTAVAIL, "%s",
                        POL_HTTP_MSG(msg, sizeof(msg), LISTEN, hc->addr, strerror(errno ? errno : EINVAL)));
        const union MHD_DaemonInfo *ep = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
        const union MHD_DaemonInfo *port = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
        char host[64];
        snprintf(host, sizeof(host), "%.*s", (int)(strrchr(hc->addr, ':') - hc->addr), hc->addr);
        h->port = port ? port->port : 0;
        h->check_host = loopback;
        snprintf(h->origin, sizeof(h->origin), "http://%s:%u", host, h->port);
        int r;
        if ((r = uv_poll_init(srv->loop, &h->poll, ep->epoll_fd)) < 0 ||
            (r = uv_timer_init(srv->loop, &h->timer)) < 0 || (r = uv_idle_init(srv->loop, &h->kick)) < 0)
                return anvil_err_set(err, -r, "Failed to watch the web UI's socket: %s", uv_strerror(r));
        h->handles = true;
        h->poll.data = h->timer.data = h->kick.data = h;
        (void)uv_poll_start(&h->poll, UV_READABLE, on_poll);
        run_mhd(h);
        if (!loopback)
                log_warn("%s", POL_HTTP_MSG(msg, sizeof(msg), ADDR_REMOTE_WARN, hc->addr));
        log_info("web UI: %s (files from %s)", h->origin, dir);
        return 0;
}

void bro_http_stop(struct bro_server *srv)
{
        struct bro_http *h = srv->http;
        if (!h || !h->handles)
                return;
        /* No new connection (libmicrohttpd hands its listening socket back); those open are
         * served on while the stop's runs end (their results still reach their followers),
         * but no longer keep the loop up: they end with the daemon after it (free). */
        MHD_socket ls = MHD_quiesce_daemon(h->d);
        if (ls != MHD_INVALID_SOCKET)
                (void)close(ls);
        uv_unref((uv_handle_t *)&h->poll);
        uv_unref((uv_handle_t *)&h->timer);
        uv_unref((uv_handle_t *)&h->kick);
}

void bro_http_free(struct bro_server *srv)
{
        struct bro_http *h = srv->http;
        if (!h)
                return;
        if (h->handles) { /* their close callbacks run in the loop's last turn (main.c) */
                h->handles = false;
                uv_close((uv_handle_t *)&h->poll, NULL);
                uv_close((uv_handle_t *)&h->timer, NULL);
                uv_close((uv_handle_t *)&h->kick, NULL);
        }
        /* What the stop's last results gave the followers is written, as far as their sockets
         * take it now (a resumed connection is served on the next run, its write on the one
         * after), before every connection is ended. */
        for (int i = 0; h->d && i < 4; i++)
                (void)MHD_run(h->d);
        if (h->d)
                MHD_stop_daemon(h->d);
        http_jobs_free(h);
        http_auth_free(h);
        if (h->web_dirfd >= 0)
                (void)close(h->web_dirfd);
        free(h);
        srv->http = NULL;
}
