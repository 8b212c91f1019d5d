/* egress/: one proxied connection of anvil-egress (unprivileged; egress.h), shared by proxy.c
 * (its life: accepting, resolving, connecting, relaying, ending) and request.c (what HTTP says:
 * the request head parsed and checked, the request and the reply's head rewritten). */
#pragma once

#include <http_parser.h>
#include <netdb.h>

#include "egress/egress.h"

enum conn_state {
        ST_HEAD,
        ST_RESOLVING,
        ST_CONNECTING,
        ST_OPEN,
        ST_FINISHING,
        ST_CLOSING
};

struct hdr {
        const char *f, *v;
        size_t fl, vl;
};

struct egr_conn {
        struct egr_conn *next, **pprev;
        struct egr_run *run;
        enum conn_state state;
        unsigned refs;
        uv_pipe_t client;
        uv_tcp_t up;
        bool up_inited;
        uv_timer_t timer;
        uv_getaddrinfo_t gai;
        struct addrinfo *ai, *ai_next;
        uint64_t t0_ms, last_ms;
        char head[EGR_HEAD_MAX];
        size_t head_len; /* bytes held in head */
        size_t head_end; /* where the head ends in it, once whole */
        http_parser parser;
        struct hdr hdrs[EGR_HEADERS_MAX];
        size_t n_hdrs;
        bool hdr_overflow;
        const char *url;
        size_t url_len;
        bool connect;       /* CONNECT, else an absolute http:// request */
        uint64_t body_left; /* a forwarded request's body still to send (Content-Length) */
        /* A chunked request body: the parser, copied at the head's end, follows its chunks so
         * that exactly the one request is sent and nothing after it (egr_body_take). */
        bool chunked, body_done;
        http_parser body_parser;
        char op[300]; /* "CONNECT host:443", for every message */
        struct egr_host host;
        uint16_t port;
        char addr_text[INET6_ADDRSTRLEN + 8];
        uint64_t out, in; /* bytes client->up, up->client (after the head) */
        bool client_eof, up_eof, client_paused, up_paused, allowed;
        bool cut; /* a cut's event was sent already */
        bool gai_pending;
        bool reply_started; /* a forwarded request's reply head was sent on */
};

/* proxy.c */
int egr_conn_write(struct egr_conn *c, uv_stream_t *to, const void *data, size_t len);
void egr_conn_close(struct egr_conn *c);
/* Sends the refusal (an HTTP reply STATUS whose body is MSG), records it, and ends. */
void egr_conn_refuse(struct egr_conn *c, const char *status, const char *reason, const char *msg);
/* Cuts the connection at once, recorded (bytes, idle, lifetime, the run closed, a bad reply). */
void egr_conn_cut(struct egr_conn *c, const char *reason, const char *msg);
/* The request is approved: resolve its host (or take its approved literal) and connect. */
void egr_conn_decide(struct egr_conn *c);

/* request.c */
/* Parses the head held so far: 1 whole (*head_end: where the rest begins), 0 not yet, <0 bad
 * (refused already). */
int egr_head_parse(struct egr_conn *c, size_t *head_end);
/* The head is whole: checks its target against the run's rules; egr_conn_decide if it passes,
 * refused otherwise. */
void egr_head_done(struct egr_conn *c);
/* Of n bytes from the client in a chunked body, how many are still the request's (the rest,
 * after its last chunk, is dropped); (size_t)-1 when the chunks are malformed (cut already). */
size_t egr_body_take(struct egr_conn *c, const char *data, size_t n);
/* Whether the forwarded request's body has bytes still to come from the client. */
bool egr_body_wanted(const struct egr_conn *c);
/* The forwarded request, rewritten into buf: its length, or size when it does not fit. */
size_t egr_request_rewrite(struct egr_conn *c, char *buf, size_t size);
/* The reply's head in c->head: 1 sent on, rewritten; 0 not whole yet; <0 cut. */
int egr_reply_head(struct egr_conn *c);
