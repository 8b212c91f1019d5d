/* The web UI's way into the broker (http_int.h struct http_link). Runs in anvil-broker
 * (unprivileged). What the page asks is not served by a second copy of the broker's rules:
 * each request becomes frames on one end of a socketpair whose other end is a client of the
 * broker's own (clients.c bro_client_adopt), given the session's uid where a socket client's
 * comes from SO_PEERCRED. So a listing, a show, an artifact's bytes, a run, a task and a
 * cancel go exactly the path a socket client's go: the same owner checks (serve.c, the .meta
 * records), the same bounds per uid, the same errors. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/http_int.h"
#include "lib/log.h"
#include "policy/http_texts.h"

static void on_link_msg(struct proto_stream *s, struct proto_msg *m)
{
        struct http_link *l = s->data;
        if (l->on_msg)
                l->on_msg(l->owner, m);
        else
                proto_msg_free(m);
}

static void on_link_bad(struct proto_stream *s, const char *code, const char *message)
{
        log_error("http: the broker's answer on a link was malformed (%s: %s)", code, message);
        proto_stream_close(s);
}

static void on_link_closed(struct proto_stream *s)
{
        struct http_link *l = s->data;
        if (l->on_gone)
                l->on_gone(l->owner);
        free(l);
}

struct http_link *http_link_open(struct bro_http *h, uid_t uid, void *owner, void (*on_msg)(void *, struct proto_msg *),
                                 void (*on_gone)(void *), struct anvil_err *err)
{
        int sv[2];
        if (h->srv->stopping) {
                anvil_err_set(err, ESHUTDOWN, "The broker is stopping");
                return NULL;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
                anvil_err_set(err, errno, "Failed to make a socketpair: %m");
                return NULL;
        }
        struct http_link *l = calloc(1, sizeof(*l));
        if (!l || proto_stream_init(h->srv->loop, &l->stream, on_link_msg, on_link_closed, l) < 0) {
                free(l);
                (void)close(sv[0]);
                (void)close(sv[1]);
                anvil_err_set(err, ENOMEM, "out of memory");
                return NULL;
        }
        l->h = h;
        l->owner = owner;
        l->on_msg = on_msg;
        l->on_gone = on_gone;
        l->stream.on_bad = on_link_bad;
        l->stream.max_queue = 64u << 20;
        if (proto_stream_open(&l->stream, sv[1], err) < 0) {
                (void)close(sv[0]);
                (void)close(sv[1]);
                l->on_gone = NULL;
                proto_stream_close(&l->stream);
                return NULL;
        }
        snprintf(l->stream.name, sizeof(l->stream.name), "web link uid %u", (unsigned)uid);
        int r = bro_client_adopt(h->srv, sv[0], uid, err);
        if (r < 0 || proto_stream_start(&l->stream) < 0) {
                char why[128], msg[256];
                if (r == -EBUSY || r == -ESHUTDOWN) {
                        if (r == -EBUSY)
                                POL_HTTP_MSG(why, sizeof(why), LINK_WHY_CAP);
                        else
                                POL_HTTP_MSG(why, sizeof(why), LINK_WHY_STOPPING);
                        anvil_err_set(err, -r, "%s", POL_HTTP_MSG(msg, sizeof(msg), LINK_REFUSED, (unsigned)uid, why));
                }
                l->on_gone = NULL;
                proto_stream_close(&l->stream);
                return NULL;
        }
        return l;
}

void http_link_close(struct http_link *l)
{
        l->on_msg = NULL;
        l->on_gone = NULL;
        proto_stream_close(&l->stream);
}

int http_link_send(struct http_link *l, const struct proto_msg *m, const int *fds, size_t n_fds)
{
        return n_fds ? proto_stream_send_fds(&l->stream, m, fds, n_fds) : proto_stream_send(&l->stream, m);
}
