/* Who is who on the web UI (docs/web-api.md "Logging in"). Runs in anvil-broker
 * (unprivileged). The page is reachable by every local user, so a session is made only from
 * a one-time login link that the broker gives over its Unix socket (ui_login, the caller's
 * uid from SO_PEERCRED as for every request): a token of 32 random bytes (getrandom), valid
 * HTTP_TOKEN_S, used once. GET /login?t=TOKEN trades it for a session cookie bound to that
 * uid (HttpOnly, SameSite=Strict), which expires when unused for HTTP_SESSION_IDLE_S and in
 * any case after HTTP_SESSION_MAX_S. Links and sessions are bounded in number. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/http_int.h"
#include "lib/fd.h"
#include "lib/list.h"
#include "lib/log.h"
#include "policy/http_texts.h"

static int new_secret(char out[HTTP_ID_LEN + 1])
{
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        uint8_t raw[HTTP_SECRET_LEN + 1] = { 0 };
        if (getrandom(raw, HTTP_SECRET_LEN, 0) != HTTP_SECRET_LEN)
                return -EIO;
        size_t o = 0;
        for (size_t i = 0; i < HTTP_SECRET_LEN; i += 3) {
                uint32_t v =
                        (uint32_t)raw[i] << 16 | (uint32_t)raw[i + 1] << 8 | (i + 2 < HTTP_SECRET_LEN ? raw[i + 2] : 0);
                for (int k = 0; k < 4 && o < HTTP_ID_LEN; k++)
                        out[o++] = b64[(v >> (18 - 6 * k)) & 63];
        }
        out[o] = 0;
        explicit_bzero(raw, sizeof(raw));
        return 0;
}

/* Equal, in a time that does not depend on where they differ. */
static bool same_secret(const char *a, const char *b)
{
        if (strlen(a) != HTTP_ID_LEN || strlen(b) != HTTP_ID_LEN)
                return false;
        unsigned char d = 0;
        for (size_t i = 0; i < HTTP_ID_LEN; i++)
                d |= (unsigned char)(a[i] ^ b[i]);
        return d == 0;
}

static void files_free(size_t n, int *fds, char **names)
{
        for (size_t i = 0; i < n; i++) {
                (void)close(fds[i]);
                free(names[i]);
        }
}

static void token_free(struct bro_http *h, struct http_token *t)
{
        LIST_REMOVE(t);
        h->n_tokens--;
        files_free(t->n_files, t->fds, t->names);
        explicit_bzero(t->tok, sizeof(t->tok));
        free(t);
}

static void session_free(struct bro_http *h, struct http_session *s)
{
        LIST_REMOVE(s);
        h->n_sessions--;
        files_free(s->n_files, s->fds, s->names);
        free(s);
}

/* A session's idle and whole life, in ms. */
static uint64_t idle_ms(const struct bro_http *h)
{
        unsigned t = h->srv->cfg.http.session_s;
        return t ? t * 1000ull : HTTP_SESSION_IDLE_S * 1000ull;
}

static uint64_t life_ms(const struct bro_http *h)
{
        unsigned t = h->srv->cfg.http.session_s;
        return t ? 2 * t * 1000ull : HTTP_SESSION_MAX_S * 1000ull;
}

static void prune(struct bro_http *h, uint64_t now)
{
        struct http_token *t, *tn;
        for (t = h->tokens; t; t = tn) {
                tn = t->next;
                if (now >= t->expires_ms)
                        token_free(h, t);
        }
        struct http_session *s, *sn;
        for (s = h->sessions; s; s = sn) {
                sn = s->next;
                if (now - s->last_ms >= idle_ms(h) || now - s->t0_ms >= life_ms(h)) {
                        log_info("http: a session of uid %u ended (%s)", (unsigned)s->uid,
                                 now - s->t0_ms >= life_ms(h) ? "its time" : "unused");
                        session_free(h, s);
                }
        }
}

void http_auth_free(struct bro_http *h)
{
        while (h->tokens)
                token_free(h, h->tokens);
        while (h->sessions)
                session_free(h, h->sessions);
}

struct http_session *http_session_of(struct bro_http *h, struct MHD_Connection *conn)
{
        const char *id = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "anvil_session");
        uint64_t now = now_ms();
        prune(h, now);
        if (!id)
                return NULL;
        for (struct http_session *s = h->sessions; s; s = s->next)
                if (same_secret(s->id, id)) {
                        s->last_ms = now;
                        return s;
                }
        return NULL;
}

void http_login(struct http_req *r)
{
        struct bro_http *h = r->h;
        const char *tok = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "t");
        char msg[256];
        uint64_t now = now_ms();
        prune(h, now);
        struct http_token *t = h->tokens;
        while (t && !(tok && same_secret(t->tok, tok)))
                t = t->next;
        if (!t) {
                http_error(r, 403, "forbidden", POL_HTTP_MSG(msg, sizeof(msg), LOGIN_BAD));
                return;
        }
        if (h->n_sessions >= HTTP_SESSIONS_MAX) {
                http_error(r, 503, "busy", POL_HTTP_MSG(msg, sizeof(msg), SESSIONS_FULL, (unsigned)HTTP_SESSIONS_MAX));
                return;
        }
        struct http_session *s = calloc(1, sizeof(*s));
        if (!s || new_secret(s->id) < 0) {
                free(s);
                http_error(r, 500, "internal", "no session could be made");
                return;
        }
        s->uid = t->uid;
        s->t0_ms = s->last_ms = now;
        s->n_files = t->n_files;
        for (size_t i = 0; i < t->n_files; i++) {
                struct stat st;
                s->fds[i] = t->fds[i];
                s->names[i] = t->names[i];
                s->sizes[i] = fstat(s->fds[i], &st) == 0 ? (uint64_t)st.st_size : 0;
        }
        t->n_files = 0;
        token_free(h, t); /* used once */
        LIST_PREPEND(h->sessions, s);
        h->n_sessions++;
        log_info("http #%llu: a session for uid %u (%zu folder files)", (unsigned long long)r->seq, (unsigned)s->uid,
                 s->n_files);
        char cookie[128];
        snprintf(cookie, sizeof(cookie), "anvil_session=%s; HttpOnly; SameSite=Strict; Path=/", s->id);
        struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, "/");
        http_secure(resp, true);
        http_answer(r, 303, resp);
}

/* A folder file's name: one plain name, as anvilctl took it from the directory. */
static bool folder_name_ok(const char *n)
{
        return *n && strcmp(n, ".") != 0 && strcmp(n, "..") != 0 && !strchr(n, '/') && strlen(n) <= PROTO_NAME_MAX;
}

void bro_http_login(struct bro_client *c, const struct proto_msg *m, int *fds, size_t n_fds)
{
        struct bro_http *h = c->srv->http;
        const struct proto_ui_login *req = &m->u.ui_login;
        char msg[512];
        size_t i;
        if (!h) {
                bro_client_error(c, "unavailable", POL_HTTP_MSG(msg, sizeof(msg), NO_HTTP), NULL, req->request_id);
                goto refused;
        }
        if (req->inputs.n != n_fds) {
                POL_HTTP_MSG(msg, sizeof(msg), LOGIN_FD_COUNT, (unsigned long long)req->inputs.n,
                             (unsigned long long)n_fds);
                bro_client_error(c, "bad_request", msg, "ui_login.inputs", req->request_id);
                goto refused;
        }
        for (i = 0; i < n_fds; i++) {
                struct stat st;
                if (!folder_name_ok(req->inputs.items[i]) || fstat(fds[i], &st) < 0 || !S_ISREG(st.st_mode)) {
                        POL_HTTP_MSG(msg, sizeof(msg), LOGIN_FD_BAD, (unsigned long long)i);
                        bro_client_error(c, "bad_request", msg, "ui_login.inputs", req->request_id);
                        goto refused;
                }
        }
        prune(h, now_ms());
        if (h->n_tokens >= HTTP_TOKENS_MAX) {
                bro_client_error(c, "busy", POL_HTTP_MSG(msg, sizeof(msg), LINKS_FULL, (unsigned)HTTP_TOKENS_MAX), NULL,
                                 req->request_id);
                goto refused;
        }
        struct http_token *t = calloc(1, sizeof(*t));
        if (!t || new_secret(t->tok) < 0) {
                free(t);
                bro_client_error(c, "internal", "no login link could be made", NULL, req->request_id);
                goto refused;
        }
        t->uid = c->uid;
        unsigned life = c->srv->cfg.http.token_s ? c->srv->cfg.http.token_s : HTTP_TOKEN_S;
        t->expires_ms = now_ms() + life * 1000ull;
        for (i = 0; i < n_fds; i++) {
                t->fds[i] = fds[i];
                t->names[i] = strdup(req->inputs.items[i]);
        }
        t->n_files = n_fds;
        LIST_PREPEND(h->tokens, t);
        h->n_tokens++;
        char url[256];
        snprintf(url, sizeof(url), "%s/login?t=%s", h->origin, t->tok);
        struct proto_msg out = { .type = PROTO_UI_LINK };
        out.u.ui_link = (struct proto_ui_link){ .request_id = req->request_id, .url = url, .expires_s = life };
        log_info("%s: a login link for the web UI (%zu folder files)", c->stream.name, n_fds);
        bro_client_send(c, &out);
        explicit_bzero(url, sizeof(url));
        return;
refused:
        for (i = 0; i < n_fds; i++)
                (void)close(fds[i]);
}
