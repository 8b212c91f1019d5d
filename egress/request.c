/* What HTTP says, for anvil-egress (unprivileged; conn.h): a request's head parsed (by
 * http-parser, never by hand) and checked against its run's rules, the request rewritten to
 * origin form for the server, and the server's reply head rewritten for the client. Every
 * refusal here is a catalog message (policy/reasons.h PROXY_*). */
#include "egress/conn.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- the request head ---- */

static int on_url(http_parser *p, const char *at, size_t len)
{
        struct egr_conn *c = p->data;
        if (!c->url)
                c->url = at;
        c->url_len = (size_t)(at + len - c->url);
        return 0;
}

static int on_hdr_field(http_parser *p, const char *at, size_t len)
{
        struct egr_conn *c = p->data;
        if (c->n_hdrs == EGR_HEADERS_MAX) {
                c->hdr_overflow = true;
                return 0;
        }
        c->hdrs[c->n_hdrs++] = (struct hdr){ .f = at, .fl = len };
        return 0;
}

static int on_hdr_value(http_parser *p, const char *at, size_t len)
{
        struct egr_conn *c = p->data;
        if (c->n_hdrs > 0 && !c->hdr_overflow) {
                c->hdrs[c->n_hdrs - 1].v = at;
                c->hdrs[c->n_hdrs - 1].vl = len;
        }
        return 0;
}

/* The head is whole: parsing stops here (the body, if any, is forwarded as bytes). */
static int on_headers_done(http_parser *p)
{
        http_parser_pause(p, 1);
        return 0;
}

static const http_parser_settings head_settings = {
        .on_url = on_url,
        .on_header_field = on_hdr_field,
        .on_header_value = on_hdr_value,
        .on_headers_complete = on_headers_done,
};

/* "what" as shown in a message: printable ASCII, cut to fit. */
static void shown(char *out, size_t size, const char *s, size_t len)
{
        size_t j = 0;
        for (size_t i = 0; i < len && j + 1 < size; i++)
                out[j++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
        out[j] = '\0';
}

/* Parses the head held so far, from its start (a head is at most EGR_HEAD_MAX bytes: parsing it
 * again as it grows is cheap, and no parser state crosses reads). 1: whole, 0: not yet, <0: bad
 * (refused already). head_end: where the body (or a tunnel's first bytes) begins. */
int egr_head_parse(struct egr_conn *c, size_t *head_end)
{
        char msg[512];
        http_parser_init(&c->parser, HTTP_REQUEST);
        c->parser.data = c;
        c->n_hdrs = 0;
        c->hdr_overflow = false;
        c->url = NULL;
        c->url_len = 0;
        size_t n = http_parser_execute(&c->parser, &head_settings, c->head, c->head_len);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if (e == HPE_PAUSED) {
                /* paused in on_headers_complete, at the head's last LF (http_parser.c
                 * s_headers_almost_done) */
                if (n >= c->head_len || c->head[n] != '\n')
                        goto bad_end;
                *head_end = n + 1;
                return 1;
        }
        if (e == HPE_OK && n == c->head_len) {
                if (c->head_len == sizeof(c->head)) {
                        POL_REASON(msg, sizeof(msg), PROXY_HEAD_TOO_LARGE, (unsigned)EGR_HEAD_MAX);
                        egr_conn_refuse(c, "431 Request Header Fields Too Large", "head_too_large", msg);
                        return -EMSGSIZE;
                }
                return 0;
        }
        POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, http_errno_description(e));
        egr_conn_refuse(c, "400 Bad Request", "malformed", msg);
        return -EINVAL;
bad_end:
        POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the head's end was not found");
        egr_conn_refuse(c, "400 Bad Request", "malformed", msg);
        return -EINVAL;
}

static bool hdr_is(const struct hdr *h, const char *name)
{
        return h->fl == strlen(name) && strncasecmp(h->f, name, h->fl) == 0;
}

/* The URL's host and port, into c->host, c->port and c->op; 0, or <0 when refused already. */
static int target_parse(struct egr_conn *c)
{
        char msg[600], what[300];
        struct http_parser_url u;
        const char *method = http_method_str((enum http_method)c->parser.method);
        http_parser_url_init(&u);
        shown(what, 200, c->url ? c->url : "", c->url ? c->url_len : 0);
        (void)snprintf(c->op, sizeof(c->op), "%.20s %.200s", method, what);
        if (!c->url || http_parser_parse_url(c->url, c->url_len, c->connect, &u) != 0) {
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the request's target is not a URL");
                egr_conn_refuse(c, "400 Bad Request", "malformed", msg);
                return -EINVAL;
        }
        if (!c->connect) {
                bool http = (u.field_set & (1 << UF_SCHEMA)) && u.field_data[UF_SCHEMA].len == 4 &&
                            strncasecmp(c->url + u.field_data[UF_SCHEMA].off, "http", 4) == 0;
                if (!http || !(u.field_set & (1 << UF_HOST))) {
                        POL_REASON(msg, sizeof(msg), PROXY_NOT_HTTP, c->op);
                        egr_conn_refuse(c, "400 Bad Request", "not_http", msg);
                        return -EINVAL;
                }
        }
        const char *h = c->url + u.field_data[UF_HOST].off;
        size_t hl = u.field_data[UF_HOST].len;
        bool bracketed = h > c->url && h[-1] == '[';
        c->port = (u.field_set & (1 << UF_PORT)) ? u.port : 80;
        shown(what, sizeof(what) - 8, h, hl);
        (void)snprintf(c->op, sizeof(c->op), bracketed ? "%.20s [%.260s]:%u" : "%.20s %.260s:%u", method, what,
                       c->port);
        if (c->port == 0) {
                POL_REASON(msg, sizeof(msg), PROXY_PORT_NOT_APPROVED, c->op);
                egr_conn_refuse(c, "403 Forbidden", "port_not_approved", msg);
                return -EPERM;
        }
        switch (egr_host_parse(h, hl, bracketed, &c->host)) {
        case EGR_HOST_NAME:
        case EGR_HOST_IP: return 0;
        case EGR_HOST_IP_ODD:
                POL_REASON(msg, sizeof(msg), PROXY_IP_LITERAL, c->op);
                egr_conn_refuse(c, "403 Forbidden", "ip_literal", msg);
                return -EPERM;
        default:
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the host is not a DNS name nor an address");
                egr_conn_refuse(c, "400 Bad Request", "malformed", msg);
                return -EINVAL;
        }
}

/* The head is whole: what it asks, and whether the run allows it. */
void egr_head_done(struct egr_conn *c)
{
        char msg[600];
        c->connect = c->parser.method == HTTP_CONNECT;
        if (c->hdr_overflow) {
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "more than 64 header lines");
                egr_conn_refuse(c, "431 Request Header Fields Too Large", "malformed", msg);
                return;
        }
        if (target_parse(c) < 0)
                return;
        if (!c->connect) {
                if (c->parser.uses_transfer_encoding && !(c->parser.flags & F_CHUNKED)) {
                        /* a body whose end only its server would know (the parser refuses it
                         * after the head, past where it is paused) */
                        POL_REASON(msg, sizeof(msg), PROXY_MALFORMED,
                                   http_errno_description(HPE_INVALID_TRANSFER_ENCODING));
                        egr_conn_refuse(c, "400 Bad Request", "malformed", msg);
                        return;
                }
                if (c->parser.flags & F_CHUNKED) {
                        /* the parser as it stands (paused at the head's end) goes on through the
                         * chunks; c->parser itself is the reply's once its head comes */
                        c->chunked = true;
                        c->body_parser = c->parser;
                        http_parser_pause(&c->body_parser, 0);
                        /* it paused on the head's last LF, unconsumed (s_headers_done): that LF
                         * again, and it stands at the first chunk's size */
                        (void)egr_body_take(c, "\n", 1);
                        if (c->state != ST_HEAD)
                                return;
                } else {
                        c->body_left = c->parser.content_length == ULLONG_MAX ? 0 : c->parser.content_length;
                }
        }
        enum egr_match m = egr_rules_match(c->run->rules, c->run->n_rules, &c->host, c->port);
        if (m != EGR_MATCH && c->host.kind == EGR_HOST_IP) {
                POL_REASON(msg, sizeof(msg), PROXY_IP_LITERAL, c->op);
                egr_conn_refuse(c, "403 Forbidden", "ip_literal", msg);
                return;
        }
        if (m == EGR_MATCH_HOST_NOT_APPROVED) {
                POL_REASON(msg, sizeof(msg), PROXY_HOST_NOT_APPROVED, c->op);
                egr_conn_refuse(c, "403 Forbidden", "host_not_approved", msg);
                return;
        }
        if (m == EGR_MATCH_PORT_NOT_APPROVED) {
                POL_REASON(msg, sizeof(msg), PROXY_PORT_NOT_APPROVED, c->op);
                egr_conn_refuse(c, "403 Forbidden", "port_not_approved", msg);
                return;
        }
        egr_conn_decide(c);
}

/* The chunked body's end: parsing stops there, and what follows is not the request's. */
static int on_body_done(http_parser *p)
{
        http_parser_pause(p, 1);
        return 0;
}

static const http_parser_settings body_settings = {
        .on_message_complete = on_body_done,
};

size_t egr_body_take(struct egr_conn *c, const char *data, size_t n)
{
        char msg[600];
        if (c->body_done || n == 0)
                return 0;
        size_t used = http_parser_execute(&c->body_parser, &body_settings, data, n);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->body_parser);
        if (e == HPE_PAUSED) {
                /* paused in on_message_complete: used counts the body's last byte */
                c->body_done = true;
                return used;
        }
        if (e == HPE_OK && used == n)
                return n;
        POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, http_errno_description(e));
        egr_conn_cut(c, "malformed", msg);
        return (size_t)-1;
}

bool egr_body_wanted(const struct egr_conn *c)
{
        return c->chunked ? !c->body_done : c->body_left > 0;
}

/* Appends to buf at *n, never past size: *n is size once anything did not fit. */
static void append(char *buf, size_t size, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
        va_list ap;
        if (*n >= size)
                return;
        va_start(ap, fmt);
        int r = vsnprintf(buf + *n, size - *n, fmt, ap);
        va_end(ap);
        *n = (r < 0 || (size_t)r >= size - *n) ? size : *n + (size_t)r;
}

size_t egr_request_rewrite(struct egr_conn *c, char *req, size_t size)
{
        size_t n = 0;
        struct http_parser_url u;
        const char *method = http_method_str((enum http_method)c->parser.method);
        http_parser_url_init(&u);
        (void)http_parser_parse_url(c->url, c->url_len, 0, &u);
        const char *path = "/";
        size_t pl = 1;
        if (u.field_set & (1 << UF_PATH)) {
                path = c->url + u.field_data[UF_PATH].off;
                /* the path and the query after it, never the fragment */
                pl = (u.field_set & (1 << UF_QUERY)) ? (size_t)(u.field_data[UF_QUERY].off +
                                                                u.field_data[UF_QUERY].len - u.field_data[UF_PATH].off)
                                                     : u.field_data[UF_PATH].len;
        }
        append(req, size, &n, "%s %.*s HTTP/1.1\r\n", method, (int)pl, path);
        for (size_t i = 0; i < c->n_hdrs; i++) {
                const struct hdr *h = &c->hdrs[i];
                if (hdr_is(h, "host") || hdr_is(h, "connection") || hdr_is(h, "proxy-connection") ||
                    hdr_is(h, "keep-alive") || hdr_is(h, "proxy-authorization") || hdr_is(h, "te") ||
                    hdr_is(h, "upgrade"))
                        continue;
                append(req, size, &n, "%.*s: %.*s\r\n", (int)h->fl, h->f, (int)h->vl, h->v ? h->v : "");
        }
        bool v6 = c->host.kind == EGR_HOST_IP && c->host.addr.ss_family == AF_INET6;
        const char *lb = v6 ? "[" : "", *rb = v6 ? "]" : "";
        if (c->port == 80)
                append(req, size, &n, "Host: %s%s%s\r\n", lb, c->host.name, rb);
        else
                append(req, size, &n, "Host: %s%s%s:%u\r\n", lb, c->host.name, rb, c->port);
        append(req, size, &n, "Connection: close\r\n\r\n");
        return n;
}

/* A forwarded request's reply head, rewritten as it goes to the client: its status line and
 * headers, but "Connection: close" for its Connection, Keep-Alive and Proxy-Connection (the
 * proxy serves one request a connection: a client that kept it for the next would wait for a
 * reply that never comes). 1: sent, 0: not whole yet, <0: refused (the connection cut). */
int egr_reply_head(struct egr_conn *c)
{
        char msg[600], out[EGR_HEAD_MAX + 64];
        http_parser_init(&c->parser, HTTP_RESPONSE);
        c->parser.data = c;
        c->n_hdrs = 0;
        c->hdr_overflow = false;
        size_t n = http_parser_execute(&c->parser, &head_settings, c->head, c->head_len);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if (e == HPE_OK && n == c->head_len && c->head_len < sizeof(c->head))
                return 0;
        const char *nl = memchr(c->head, '\n', c->head_len);
        if (e != HPE_PAUSED || n >= c->head_len || c->head[n] != '\n' || c->hdr_overflow || !nl) {
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED,
                           e == HPE_PAUSED || e == HPE_OK ? "the server's reply head is over 16384 bytes or 64 lines"
                                                          : "the server's reply is not HTTP");
                egr_conn_cut(c, "malformed", msg);
                return -EBADMSG;
        }
        size_t len = (size_t)(nl - c->head) + 1;
        memcpy(out, c->head, len);
        for (size_t i = 0; i < c->n_hdrs; i++) {
                const struct hdr *h = &c->hdrs[i];
                if (hdr_is(h, "connection") || hdr_is(h, "keep-alive") || hdr_is(h, "proxy-connection"))
                        continue;
                len += (size_t)snprintf(out + len, sizeof(out) - len, "%.*s: %.*s\r\n", (int)h->fl, h->f, (int)h->vl,
                                        h->v ? h->v : "");
        }
        len += (size_t)snprintf(out + len, sizeof(out) - len, "Connection: close\r\n\r\n");
        if (len >= sizeof(out) || egr_conn_write(c, (uv_stream_t *)&c->client, out, len) < 0) {
                egr_conn_close(c);
                return -EIO;
        }
        c->reply_started = true;
        if (n + 1 < c->head_len &&
            egr_conn_write(c, (uv_stream_t *)&c->client, c->head + n + 1, c->head_len - n - 1) < 0) {
                egr_conn_close(c);
                return -EIO;
        }
        return 1;
}
