/* The broker's web UI over HTTP (http*.c, docs/web-api.md): off unless --http is set. Runs
 * in anvil-broker (unprivileged), on its libuv loop: libmicrohttpd in its external-select
 * mode with one epoll fd, polled by a uv_poll, its timeouts a uv_timer; no thread. */
#pragma once

#include <stdbool.h>
#include <sys/socket.h>

#include "lib/err.h"
#include "proto/proto.h"

struct bro_server;
struct bro_client;

struct bro_http_config {
        const char *addr;    /* --http ADDR:PORT, NULL: off */
        const char *web_dir; /* --web-dir; NULL: beside the program, ../share/anvil/web */
        bool allow_remote;   /* --http-allow-remote: an address other than loopback */
        unsigned token_s;    /* a login link's life: HTTP_TOKEN_S (a test build's --test-http-token-s) */
        unsigned session_s;  /* 0, or a test build's --test-http-session-s: a session's idle life, and
                                twice that its whole life */
};

/* "127.0.0.1:8700", "[::1]:8700" into *ss; 0, or -EINVAL. loopback says whether it is one. */
int bro_http_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, bool *loopback);
/* Starts serving (after the clients' socket); <0 with err set: the start-up fails. */
int bro_http_start(struct bro_server *srv, struct anvil_err *err);
/* The broker stops: no new HTTP connection; those open are served on, without keeping the
 * loop up; bro_http_free (after the loop) ends them and the daemon. */
void bro_http_stop(struct bro_server *srv);
void bro_http_free(struct bro_server *srv);
/* A ui_login from a client of the socket (clients.c): answered with a ui_link or an error.
 * Takes the fds that came with it (--inputs), closed when the session ends. */
void bro_http_login(struct bro_client *c, const struct proto_msg *m, int *fds, size_t n_fds);
