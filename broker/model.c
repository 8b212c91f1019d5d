/* The model client (model.h, DESIGN §8): POST {url}/chat/completions over libcurl's multi
 * interface on the broker's libuv loop.
 *
 * How curl and the loop meet (libcurl's "multi_socket" way, as in its multi-uv example):
 *   - curl says which sockets it wants watched, and for what, through the socket callback:
 *     each gets a uv_poll_t of its own (struct sock), stopped and closed when curl says
 *     CURL_POLL_REMOVE (always before curl closes the socket, so libuv never watches a
 *     closed fd, and a new socket with the same number gets a new handle).
 *   - curl says when it next needs to run through the timer callback: one uv_timer_t. A
 *     timeout of 0 is a timer of 0 ms, so curl is never driven from inside its own
 *     callback (which curl forbids) nor from inside bro_model_chat.
 *   - a readable or writable socket, or the timer, calls curl_multi_socket_action; then
 *     every finished transfer is read off curl_multi_info_read (process_done).
 * Nothing blocks: connecting, TLS and the transfer are curl's state machine on those
 * events; a host name is resolved on libcurl's resolver thread (Debian's libcurl is built
 * with the threaded resolver), never on the loop.
 *
 * A request's life:
 *   M1  bro_model_chat: cfg checked and copied, the body rendered once, an easy handle set
 *       up and added to the multi handle (attempt 1)
 *   M2  the transfer ends (process_done): the status and body decide between success,
 *       an error, or another attempt. Every request asks for "stream": true; a 2xx
 *       text/event-stream body is fed to the SSE reader (model_parse.c) from the write
 *       callback as it comes, and the reply so far told to the delta callback (forward: a
 *       character never split, the key held back); any other body is kept whole and decoded
 *       at the end. A 400/422 naming "stream" is asked again at once without it (the
 *       endpoint remembered); a stream part of which was told is never asked again
 *   M3  another attempt (429, 5xx, refused or reset connection; at most cfg.retries): the
 *       request's own timer waits Retry-After (capped) or the backoff, then M1's handle is
 *       added again
 *   M4  the end, exactly once (finish): done is called, then the request's timer is closed
 *       and its memory freed in the close callback. A cancel, or closing the model, ends a
 *       request at any step with "cancelled".
 *
 * The settings and their checks are model_cfg.c's; the parsing of what comes back is
 * model_parse.c's.
 *
 * Bounds: the body at BRO_MODEL_BODY_MAX (a Content-Length beyond it is refused before any
 * byte is read, a body without one is aborted when it gets there), the header lines at
 * BRO_MODEL_HEADERS_MAX (curl itself caps one line at 100 KiB), one attempt at
 * cfg.timeout_s, redirects not followed, http and https only. The key is in the request's
 * header list and cfg copy only, both wiped when the request ends; curl's verbose output is
 * never on. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/model.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/list.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "policy/reasons.h"

#define ENDPOINT "/chat/completions"
#define ERR_MAX 768

struct sock {
        uv_poll_t poll;
        curl_socket_t fd;
        struct bro_model *m;
        struct sock *next, **pprev;
};

struct req {
        struct bro_model *m;
        long id;
        struct bro_model_cfg cfg;
        char endpoint[sizeof(((struct bro_model_cfg *)0)->url) + sizeof(ENDPOINT)];
        char where[320]; /* host:port, printable, for error texts */
        char host[260];
        char *body;
        CURL *easy;
        struct curl_slist *headers;
        uv_timer_t backoff;
        char *resp;
        size_t resp_len, resp_cap;
        size_t header_bytes, body_bytes;
        bool too_large, headers_too_large;
        /* streaming: asked for (stream), answered with (sse: text/event-stream on a 2xx) */
        json_t *messages;
        bool stream, sse, sse_decided, stream_failed, in_write;
        struct bro_model_stream st;
        size_t forwarded; /* of st.content, told to delta */
        unsigned extra;   /* attempts that were not retries (asked again without streaming) */
        bro_model_delta_fn delta;
        int64_t retry_after_ms; /* -1: the last response had none */
        unsigned attempts;
        uint64_t t0;
        bro_model_done_fn done;
        void *data;
        bool in_multi, ended;
        struct req *next, **pprev;
};

#define NO_STREAM_KEPT 8

struct bro_model {
        char no_stream[NO_STREAM_KEPT][sizeof(((struct bro_model_cfg *)0)->url) + sizeof(ENDPOINT)]; /* endpoints that refused it */
        unsigned no_stream_next;
        uv_loop_t *loop;
        CURLM *multi;
        uv_timer_t timer;
        struct req *reqs;
        struct sock *socks;
        long next_id;
        bool closing;
};

/* ---- the loop and curl ---- */

static void process_done(struct bro_model *m);

static void on_sock_closed(uv_handle_t *h)
{
        free(h->data);
}

static void sock_close(struct bro_model *m, struct sock *s)
{
        LIST_REMOVE(s);
        if (m->multi)
                (void)curl_multi_assign(m->multi, s->fd, NULL);
        uv_close((uv_handle_t *)&s->poll, on_sock_closed);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
        struct sock *s = h->data;
        struct bro_model *m = s->m;
        int flags = 0, running;
        if (status < 0)
                flags = CURL_CSELECT_ERR;
        else {
                if (events & UV_READABLE)
                        flags |= CURL_CSELECT_IN;
                if (events & UV_WRITABLE)
                        flags |= CURL_CSELECT_OUT;
        }
        /* s may be closed from here on (CURL_POLL_REMOVE): only m is used. */
        (void)curl_multi_socket_action(m->multi, s->fd, flags, &running);
        process_done(m);
}

static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
        (void)easy;
        struct bro_model *m = userp;
        struct sock *s = socketp;
        if (what == CURL_POLL_REMOVE) {
                if (s)
                        sock_close(m, s);
                return 0;
        }
        if (m->closing)
                return -1;
        if (!s) {
                s = calloc(1, sizeof(*s));
                if (!s)
                        return -1;
                if (uv_poll_init_socket(m->loop, &s->poll, fd) < 0) {
                        free(s);
                        return -1;
                }
                s->fd = fd;
                s->m = m;
                s->poll.data = s;
                LIST_PREPEND(m->socks, s);
                (void)curl_multi_assign(m->multi, fd, s);
        }
        int events = 0;
        if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
                events |= UV_READABLE;
        if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
                events |= UV_WRITABLE;
        return uv_poll_start(&s->poll, events, on_poll) < 0 ? -1 : 0;
}

static void on_timer(uv_timer_t *t)
{
        struct bro_model *m = t->data;
        int running;
        (void)curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        process_done(m);
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
        (void)multi;
        struct bro_model *m = userp;
        if (timeout_ms < 0)
                (void)uv_timer_stop(&m->timer);
        else
                (void)uv_timer_start(&m->timer, on_timer, (uint64_t)timeout_ms, 0);
        return 0;
}

int bro_model_init(struct bro_model **out, uv_loop_t *loop, struct anvil_err *err)
{
        /* Reference-counted by libcurl; the broker calls it before any thread uses curl. */
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return anvil_err_set(err, EIO, "Failed to initialise libcurl");
        struct bro_model *m = calloc(1, sizeof(*m));
        if (!m) {
                curl_global_cleanup();
                return anvil_err_set(err, ENOMEM, "Failed to set up the model client: out of memory");
        }
        m->loop = loop;
        m->next_id = 1;
        m->multi = curl_multi_init();
        if (!m->multi) {
                free(m);
                curl_global_cleanup();
                return anvil_err_set(err, ENOMEM, "Failed to set up the model client: curl_multi_init failed");
        }
        (void)uv_timer_init(loop, &m->timer);
        m->timer.data = m;
        (void)curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
        (void)curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
        (void)curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
        (void)curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
        *out = m;
        return 0;
}

/* ---- a request ---- */

static void on_req_closed(uv_handle_t *h)
{
        struct req *r = h->data;
        if (r->easy)
                curl_easy_cleanup(r->easy);
        for (struct curl_slist *l = r->headers; l; l = l->next)
                explicit_bzero(l->data, strlen(l->data)); /* the Authorization line */
        curl_slist_free_all(r->headers);
        explicit_bzero(&r->cfg, sizeof(r->cfg));
        free(r->body);
        free(r->resp);
        bro_model_stream_free(&r->st);
        free(r);
}

/* M4: the end, exactly once. p is set on success and for a reply cut at its token limit. */
static void finish(struct req *r, const struct bro_model_parsed *p, const char *error)
{
        struct bro_model *m = r->m;
        if (r->ended)
                return;
        r->ended = true;
        LIST_REMOVE(r);
        /* Inside curl's write callback the handle may not be removed: the callback returns 0
         * (the transfer aborts at once) and process_done removes it. */
        if (r->in_multi && !r->in_write) {
                (void)curl_multi_remove_handle(m->multi, r->easy);
                r->in_multi = false;
        }
        (void)uv_timer_stop(&r->backoff);
        const char *content = p ? p->content : NULL;
        const char *finish_reason = p ? p->finish_reason : NULL;
        struct bro_model_reply reply = {
                .content = content,
                .finish_reason = finish_reason,
                .attempts = r->attempts,
                .ms = now_ms() - r->t0,
                .reasoning = p ? p->reasoning : NULL,
                .tool_calls = p ? p->tool_calls : NULL,
                .streamed = r->sse,
        };
        if (error)
                log_info("model request #%ld: ended after %" PRIu64 " ms, %u attempt%s: %s", r->id, reply.ms,
                         r->attempts, r->attempts == 1 ? "" : "s", error);
        else
                log_info("model request #%ld: ended after %" PRIu64 " ms, %u attempt%s: a reply of %zu bytes, finish_reason '%s'",
                         r->id, reply.ms, r->attempts, r->attempts == 1 ? "" : "s", strlen(content), finish_reason);
        r->done(r->data, &reply, error);
        uv_close((uv_handle_t *)&r->backoff, on_req_closed);
}

/* What of a streamed reply may be told: up to the end less what could still be the start of
 * the key, on a character's boundary. A key whole in it ends the request. */
static void forward(struct req *r)
{
        const struct bro_model_stream *st = &r->st;
        size_t klen = strlen(r->cfg.key);
        bool guard = klen >= 16; /* as attempt_ended's check: short keys would refuse ordinary text */
        if (guard) {
                size_t from = r->forwarded > klen ? r->forwarded - klen : 0;
                if (memmem(st->content + from, st->content_len - from, r->cfg.key, klen)) {
                        char err[ERR_MAX];
                        POL_REASON(err, sizeof(err), MODEL_KEY_IN_REPLY);
                        finish(r, NULL, err);
                        return;
                }
        }
        size_t end = st->content_len - (guard ? klen - 1 < st->content_len ? klen - 1 : st->content_len : 0);
        if (end <= r->forwarded)
                return;
        size_t n = utf8_complete_len((const uint8_t *)st->content + r->forwarded, end - r->forwarded);
        if (n == 0)
                return;
        r->delta(r->data, st->content + r->forwarded, n);
        r->forwarded += n;
}

/* A 2xx body of server-sent events, fed to the stream's reader as it comes. */
static size_t on_sse(struct req *r, const char *ptr, size_t n)
{
        size_t before = r->st.content_len;
        if (bro_model_stream_feed(&r->st, ptr, n) < 0) {
                r->stream_failed = true;
                return 0; /* the transfer is aborted: attempt_ended says why */
        }
        if (r->delta && r->st.content_len > before) {
                r->in_write = true;
                forward(r);
                r->in_write = false;
        }
        return r->ended ? 0 : n;
}
static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        struct req *r = userdata;
        size_t n = size * nmemb;
        if (r->ended)
                return 0;
        if (n > BRO_MODEL_BODY_MAX - r->body_bytes) {
                r->too_large = true;
                return 0; /* CURLE_WRITE_ERROR: the transfer is aborted */
        }
        r->body_bytes += n;
        if (!r->sse_decided) { /* the headers are all in: a stream, or a body to keep */
                long status = 0;
                (void)curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
                r->sse_decided = true;
                r->sse = r->sse && status >= 200 && status <= 299;
        }
        if (r->sse)
                return on_sse(r, ptr, n);
        if (r->resp_len + n + 1 > r->resp_cap) {
                size_t cap = r->resp_cap ? r->resp_cap : 16384;
                while (cap < r->resp_len + n + 1)
                        cap *= 2;
                if (cap > BRO_MODEL_BODY_MAX + 1)
                        cap = BRO_MODEL_BODY_MAX + 1;
                char *p = realloc(r->resp, cap);
                if (!p)
                        return 0;
                r->resp = p;
                r->resp_cap = cap;
        }
        memcpy(r->resp + r->resp_len, ptr, n);
        r->resp_len += n;
        r->resp[r->resp_len] = 0;
        return n;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *userdata)
{
        struct req *r = userdata;
        size_t n = size * nitems;
        if (n > BRO_MODEL_HEADERS_MAX - r->header_bytes) {
                r->headers_too_large = true;
                return 0;
        }
        r->header_bytes += n;
        if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
                r->retry_after_ms = -1; /* a new response (after a 1xx, say): its own headers */
                r->sse = false;
        } else if (n > 13 && strncasecmp(line, "content-type:", 13) == 0) {
                size_t i = 13;
                while (i < n && (line[i] == ' ' || line[i] == '\t'))
                        i++;
                r->sse = n - i >= 17 && strncasecmp(line + i, "text/event-stream", 17) == 0;
        } else if (n > 12 && strncasecmp(line, "retry-after:", 12) == 0) {
                uint64_t ms;
                if (bro_model_retry_after(line + 12, n - 12, time(NULL), &ms) == 0)
                        r->retry_after_ms = (int64_t)ms;
        }
        return n;
}

/* M1, M3: one attempt. */
static int start_attempt(struct req *r)
{
        r->resp_len = 0;
        r->header_bytes = r->body_bytes = 0;
        r->too_large = r->headers_too_large = false;
        r->sse = r->sse_decided = r->stream_failed = false;
        bro_model_stream_free(&r->st);
        bro_model_stream_init(&r->st, r->cfg.key);
        r->retry_after_ms = -1;
        r->attempts++;
        CURLMcode mc = curl_multi_add_handle(r->m->multi, r->easy);
        if (mc != CURLM_OK)
                return mc == CURLM_OUT_OF_MEMORY ? -ENOMEM : -EIO;
        r->in_multi = true;
        return 0;
}

static void on_backoff(uv_timer_t *t)
{
        struct req *r = t->data;
        if (r->ended)
                return;
        int e = start_attempt(r);
        if (e < 0) {
                char err[ERR_MAX];
                POL_REASON(err, sizeof(err), MODEL_FAILED, r->where, strerror(-e));
                finish(r, NULL, err);
        }
}

/* The error text for a status the server answered with, its own message appended. */
static void http_error(struct req *r, long status, char *err, size_t size)
{
        char base[ERR_MAX], said[BRO_MODEL_SERVER_MSG_MAX + 8];
        if (status == 401) {
                /* The server's message is left out: servers quote the key they refused. */
                if (r->cfg.key[0])
                        POL_REASON(err, size, MODEL_HTTP_401);
                else
                        POL_REASON(err, size, MODEL_HTTP_401_NO_KEY);
                return;
        }
        if (status == 403)
                POL_REASON(base, sizeof(base), MODEL_HTTP_403, r->cfg.model);
        else if (status == 404) {
                char shown[260];
                bro_model_printable(r->endpoint, strlen(r->endpoint), shown, sizeof(shown), 200);
                POL_REASON(base, sizeof(base), MODEL_HTTP_404, shown, r->cfg.model);
        } else if (status == 429)
                POL_REASON(base, sizeof(base), MODEL_HTTP_429);
        else
                POL_REASON(base, sizeof(base), MODEL_HTTP_STATUS, status);
        if (bro_model_server_message(r->resp ? r->resp : "", r->resp_len, r->cfg.key, said, sizeof(said)))
                POL_REASON(err, size, MODEL_SERVER_SAYS, base, said);
        else
                snprintf(err, size, "%s", base);
}

/* The error text for a transfer curl could not complete; *retry when another attempt may
 * go better (a refused or reset connection). */
static void transfer_error(struct req *r, CURLcode res, char *err, size_t size, bool *retry)
{
        long os = 0;
        (void)curl_easy_getinfo(r->easy, CURLINFO_OS_ERRNO, &os);
        const char *why = os > 0 ? strerror((int)os) : curl_easy_strerror(res);
        switch (res) {
        case CURLE_WRITE_ERROR:
        case CURLE_FILESIZE_EXCEEDED:
                if (r->headers_too_large)
                        POL_REASON(err, size, MODEL_HEADERS_TOO_LARGE, BRO_MODEL_HEADERS_MAX >> 10);
                else if (r->too_large || res == CURLE_FILESIZE_EXCEEDED)
                        POL_REASON(err, size, MODEL_BODY_TOO_LARGE, BRO_MODEL_BODY_MAX >> 20);
                else
                        POL_REASON(err, size, MODEL_FAILED, r->where, strerror(ENOMEM));
                return;
        case CURLE_OPERATION_TIMEDOUT:
                POL_REASON(err, size, MODEL_TIMEOUT, r->cfg.timeout_s);
                return;
        case CURLE_COULDNT_CONNECT:
                *retry = true;
                if (os == ECONNREFUSED)
                        POL_REASON(err, size, MODEL_CONNECT_REFUSED, r->where);
                else
                        POL_REASON(err, size, MODEL_CONNECT_FAILED, r->where, why);
                return;
        case CURLE_COULDNT_RESOLVE_HOST:
                POL_REASON(err, size, MODEL_RESOLVE, r->host);
                return;
        case CURLE_GOT_NOTHING:
                *retry = true;
                POL_REASON(err, size, MODEL_CONNECTION_CLOSED, r->where);
                return;
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
                *retry = true;
                POL_REASON(err, size, MODEL_CONNECTION_LOST, r->where, why);
                return;
        case CURLE_PARTIAL_FILE:
                *retry = true;
                POL_REASON(err, size, MODEL_CONNECTION_CUT, r->where);
                return;
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        case CURLE_SSL_INVALIDCERTSTATUS:
                POL_REASON(err, size, MODEL_TLS, r->where, curl_easy_strerror(res));
                return;
        default:
                POL_REASON(err, size, MODEL_FAILED, r->where, curl_easy_strerror(res));
                return;
        }
}

/* ---- streaming or not ---- */

static bool stream_refused(const struct bro_model *m, const char *endpoint)
{
        for (unsigned i = 0; i < NO_STREAM_KEPT; i++)
                if (strcmp(m->no_stream[i], endpoint) == 0)
                        return true;
        return false;
}

/* A server that does not stream says so with a 400 or 422 naming it ("stream is not
 * supported", "Streaming not available for this model"). */
static bool refuses_stream(struct req *r, long status)
{
        char said[BRO_MODEL_SERVER_MSG_MAX + 8];
        return r->stream && (status == 400 || status == 422) &&
               bro_model_server_message(r->resp ? r->resp : "", r->resp_len, r->cfg.key, said, sizeof(said)) &&
               strcasestr(said, "stream");
}

static char *render_body(const struct bro_model_cfg *cfg, json_t *messages, bool stream);
static int start_attempt(struct req *r);

/* r->body as the request's body. */
static int set_body(struct req *r)
{
        if (curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body) != CURLE_OK ||
            curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(r->body)) != CURLE_OK)
                return -EIO;
        return 0;
}

/* The same request again at once, without "stream" (not one of cfg.retries); the URL
 * remembered so that later requests do not ask. */
static int restart_without_stream(struct req *r)
{
        struct bro_model *m = r->m;
        if (!stream_refused(m, r->endpoint)) {
                snprintf(m->no_stream[m->no_stream_next], sizeof(m->no_stream[0]), "%s", r->endpoint);
                m->no_stream_next = (m->no_stream_next + 1) % NO_STREAM_KEPT;
        }
        log_info("model request #%ld: the server does not stream; asked again without it", r->id);
        char *b = render_body(&r->cfg, r->messages, false);
        if (!b)
                return -ENOMEM;
        free(r->body);
        r->body = b;
        r->stream = false;
        r->extra++;
        int e = set_body(r);
        return e < 0 ? e : start_attempt(r);
}

/* M2: what one attempt's end means. */
static void attempt_ended(struct req *r, CURLcode res)
{
        char err[ERR_MAX];
        bool retry = false;
        long status = 0;
        if (r->ended)
                return; /* ended from inside the transfer (a key in a streamed reply) */
        if (res != CURLE_OK && r->stream_failed) {
                finish(r, NULL, r->st.why); /* an event that is not a chunk */
                return;
        }
        if (res != CURLE_OK)
                transfer_error(r, res, err, sizeof(err), &retry);
        else {
                (void)curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
                if (status >= 200 && status <= 299) {
                        struct bro_model_parsed p;
                        int pr = r->sse ? bro_model_stream_end(&r->st, &p, err, sizeof(err))
                                        : bro_model_parse_reply(r->resp ? r->resp : "", r->resp_len, r->cfg.key, &p,
                                                                err, sizeof(err));
                        if (pr == -EPIPE) { /* the stream ended before the reply did */
                                POL_REASON(err, sizeof(err), MODEL_CONNECTION_CUT, r->where);
                                retry = true;
                                goto again;
                        }
                        if (pr < 0) {
                                finish(r, NULL, err);
                                return;
                        }
                        size_t klen = strlen(r->cfg.key);
                        if (klen >= 16 && memmem(p.content, p.content_len, r->cfg.key, klen)) {
                                /* Whatever the server's reason, the content goes on to be run
                                 * as a tool: the key must not ride along (DESIGN §1). Short keys
                                 * (a local server's "test") would refuse ordinary code. */
                                POL_REASON(err, sizeof(err), MODEL_KEY_IN_REPLY);
                                finish(r, NULL, err);
                        } else if (strcmp(p.finish_reason, "length") == 0) {
                                if (r->cfg.max_tokens)
                                        POL_REASON(err, sizeof(err), MODEL_CUT, r->cfg.max_tokens);
                                else
                                        POL_REASON(err, sizeof(err), MODEL_CUT_SERVER);
                                finish(r, &p, err);
                        } else
                                finish(r, &p, NULL);
                        bro_model_parsed_free(&p);
                        return;
                }
                if (refuses_stream(r, status)) {
                        int e = restart_without_stream(r);
                        if (e == 0)
                                return;
                        POL_REASON(err, sizeof(err), MODEL_FAILED, r->where, strerror(-e));
                        finish(r, NULL, err);
                        return;
                }
                http_error(r, status, err, sizeof(err));
                retry = status == 429 || (status >= 500 && status <= 599);
        }
again:
        /* A reply part of which was told as it grew is not asked again: the followers saw it. */
        if (r->forwarded)
                retry = false;
        if (retry && r->attempts - r->extra <= r->cfg.retries) {
                uint64_t wait = r->retry_after_ms >= 0 ? (uint64_t)r->retry_after_ms : bro_model_backoff_ms(r->attempts);
                log_info("model request #%ld: %s; attempt %u of %u in %" PRIu64 " ms", r->id, err, r->attempts + 1,
                         r->cfg.retries + 1, wait);
                /* From now, not from the loop's cached time: the wait is at least what was asked. */
                uv_update_time(r->m->loop);
                (void)uv_timer_start(&r->backoff, on_backoff, wait, 0);
                return;
        }
        if (retry && r->attempts > 1) {
                char base[ERR_MAX];
                snprintf(base, sizeof(base), "%s", err);
                POL_REASON(err, sizeof(err), MODEL_GAVE_UP, base, r->attempts);
        }
        finish(r, NULL, err);
}

static void process_done(struct bro_model *m)
{
        CURLMsg *msg;
        int left;
        /* A done callback may close the model: then nothing more is read off the handle. */
        while (!m->closing && (msg = curl_multi_info_read(m->multi, &left))) {
                if (msg->msg != CURLMSG_DONE)
                        continue;
                CURL *easy = msg->easy_handle;
                CURLcode res = msg->data.result; /* msg is gone once the handle is removed */
                char *priv = NULL;
                (void)curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
                struct req *r = (struct req *)priv;
                (void)curl_multi_remove_handle(m->multi, easy);
                if (!r)
                        continue;
                r->in_multi = false;
                attempt_ended(r, res);
        }
}

/* ---- the interface ---- */

static bool messages_ok(json_t *messages)
{
        if (!json_is_array(messages) || json_array_size(messages) == 0)
                return false;
        size_t i;
        json_t *msg;
        json_array_foreach(messages, i, msg) {
                if (!json_is_object(msg) || !json_is_string(json_object_get(msg, "role")))
                        return false;
        }
        return true;
}

static char *render_body(const struct bro_model_cfg *cfg, json_t *messages, bool stream)
{
        json_t *o = json_object();
        if (!o)
                return NULL;
        int bad = json_object_set_new(o, "model", json_string(cfg->model));
        bad |= json_object_set(o, "messages", messages);
        bad |= json_object_set_new(o, "stream", json_boolean(stream));
        if (cfg->max_tokens)
                bad |= json_object_set_new(o, "max_tokens", json_integer(cfg->max_tokens));
        if (cfg->temperature >= 0)
                bad |= json_object_set_new(o, "temperature", json_real(cfg->temperature == 0 ? 0.0 : cfg->temperature));
        char *s = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
        json_decref(o);
        return s;
}

static int req_setup(struct req *r)
{
        char *e = r->endpoint;
        size_t n = strlen(r->cfg.url);
        while (n > 0 && r->cfg.url[n - 1] == '/')
                n--;
        snprintf(e, sizeof(r->endpoint), "%.*s%s", (int)n, r->cfg.url, ENDPOINT);
        char port[16];
        if (bro_model_url_parts(r->cfg.url, r->host, sizeof(r->host), port, sizeof(port), NULL) < 0)
                return -EINVAL;
        snprintf(r->where, sizeof(r->where), "%s:%s", r->host, port);

        struct curl_slist *h = NULL, *t;
        static const char *const fixed[] = { "Content-Type: application/json",
                                             "Accept: application/json, text/event-stream",
                                             "Expect:" /* no 100-continue round trip */ };
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                if (!(t = curl_slist_append(h, fixed[i])))
                        goto nomem;
                h = t;
        }
        if (r->cfg.key[0]) {
                char line[sizeof(r->cfg.key) + 32];
                snprintf(line, sizeof(line), "Authorization: Bearer %s", r->cfg.key);
                t = curl_slist_append(h, line);
                explicit_bzero(line, sizeof(line));
                if (!t)
                        goto nomem;
                h = t;
        }
        r->headers = h;
        CURL *c = r->easy = curl_easy_init();
        if (!c)
                return -ENOMEM;
        int bad = 0;
        bad |= curl_easy_setopt(c, CURLOPT_URL, r->endpoint);
        bad |= curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        bad |= curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
        bad |= curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        bad |= curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
        bad |= curl_easy_setopt(c, CURLOPT_USERAGENT, "anvil-broker/" ANVIL_VERSION);
        bad |= curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)r->cfg.timeout_s * 1000L);
        bad |= curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)BRO_MODEL_BODY_MAX);
        bad |= curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        bad |= curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
        bad |= curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        bad |= curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
        bad |= curl_easy_setopt(c, CURLOPT_PRIVATE, r);
        bad |= curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
        return bad ? -EIO : 0;
nomem:
        curl_slist_free_all(h);
        return -ENOMEM;
}

long bro_model_chat(struct bro_model *m, const struct bro_model_cfg *cfg, json_t *messages, bro_model_done_fn done,
                    void *data)
{
        return bro_model_chat_stream(m, cfg, messages, done, NULL, data);
}

long bro_model_chat_stream(struct bro_model *m, const struct bro_model_cfg *cfg, json_t *messages, bro_model_done_fn done,
                           bro_model_delta_fn delta, void *data)
{
        if (!m || !cfg || !done)
                return -EINVAL;
        if (m->closing)
                return -ESHUTDOWN;
        if (bro_model_cfg_check(cfg, NULL) < 0 || !messages_ok(messages))
                return -EINVAL;
        struct req *r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->m = m;
        r->cfg = *cfg;
        r->done = done;
        r->delta = delta;
        r->data = data;
        r->messages = messages;
        r->t0 = now_ms();
        bro_model_stream_init(&r->st, r->cfg.key);
        (void)uv_timer_init(m->loop, &r->backoff);
        r->backoff.data = r;
        int e = -ENOMEM;
        if ((e = req_setup(r)) < 0)
                goto fail;
        r->stream = !stream_refused(m, r->endpoint);
        e = -ENOMEM;
        if (!(r->body = render_body(cfg, messages, r->stream)))
                goto fail;
        if ((e = set_body(r)) < 0 || (e = start_attempt(r)) < 0)
                goto fail;
        r->id = m->next_id++;
        if (m->next_id <= 0) /* a long-lived broker wraps after 2^63 requests: ids stay > 0 */
                m->next_id = 1;
        LIST_PREPEND(m->reqs, r);
        log_info("model request #%ld: POST %s (model %s, %zu messages, %zu bytes)", r->id, r->endpoint, r->cfg.model,
                 json_array_size(messages), strlen(r->body));
        return r->id;
fail:
        r->ended = true;
        uv_close((uv_handle_t *)&r->backoff, on_req_closed);
        return e;
}

void bro_model_cancel(struct bro_model *m, long id)
{
        if (!m)
                return;
        for (struct req *r = m->reqs; r; r = r->next)
                if (r->id == id) {
                        char err[64];
                        finish(r, NULL, POL_REASON(err, sizeof(err), MODEL_CANCELLED));
                        return;
                }
}

static void on_model_closed(uv_handle_t *h)
{
        free(h->data);
        curl_global_cleanup();
}

void bro_model_close(struct bro_model *m)
{
        if (!m || m->closing)
                return;
        m->closing = true;
        char err[64];
        POL_REASON(err, sizeof(err), MODEL_CANCELLED);
        while (m->reqs) /* done may start no new request now (-ESHUTDOWN) */
                finish(m->reqs, NULL, err);
        /* Sockets curl still has (connections kept for reuse): closed here, and forgotten by
         * curl first, so that curl_multi_cleanup's own CURL_POLL_REMOVE finds nothing. */
        while (m->socks)
                sock_close(m, m->socks);
        curl_multi_cleanup(m->multi);
        m->multi = NULL;
        (void)uv_timer_stop(&m->timer);
        uv_close((uv_handle_t *)&m->timer, on_model_closed);
}
