/* The relay of a run granted network (issue 17, docs/egress.md): urllib, requests and every
 * other HTTP client speak to a proxy over TCP only, and the jail's one way out is an AF_UNIX
 * socket, the run's anvil-egress socket, which pid 1 passed the relay alone as an O_PATH fd
 * (JAIL_FD_EGRESS) and which it connects to through that fd's link (JAIL_EGRESS_SOCK,
 * /proc/self/fd/8: the kernel follows it to the socket whatever mount namespace the proxy's
 * socket file is in; no socket file is mounted in the jail). The relay accepts on
 * 127.0.0.1:JAIL_EGRESS_PORT of the jail's own network namespace (HTTP_PROXY and HTTPS_PROXY
 * name it, runner/main.c) and copies each connection's bytes to a new connection to that
 * socket, and back, unchanged. It reads nothing of them and decides nothing: the proxy, outside
 * the jail, does every check (hosts, ports, addresses, bounds) and records every decision.
 *
 * Why here, a child of pid 1 (anvil-init), and not a thread of the runner: the runner is the
 * tool's own process, where the tool's code runs with every byte of memory the relay would
 * use (a thread's buffers and fds are the tool's to read and replace). The relay is a process
 * of its own, which the tool's seccomp filter (no ptrace, no process_vm_*, no pidfd_getfd)
 * and the dumpable flag (cleared by pid 1, P1, and inherited) keep out of reach; it holds
 * nothing but a way to the proxy, which does every check on whatever reaches it, so a relay
 * the tool broke would gain it nothing.
 * It shares the jail's Landlock domain, so it too can bind nothing (its socket was bound at
 * C5, before Landlock) and reach no file the tool cannot.
 *
 * Bounds: JAIL_RELAY_PAIRS connections at once, each a 16 KiB buffer each way (the process
 * is the run's, in its cgroup); one more is accepted and closed at once, so that a client in
 * the jail that holds connections open (slowloris) delays nobody but itself: the proxy cuts a
 * head not complete in time and an idle tunnel, and the relay closes the client's side when
 * the proxy's side ends. Any error on either side ends that pair: the client sees its
 * connection end, never a path around the proxy. The proxy gone (killed, its run closed),
 * each new connection is closed at once (connect to its socket is refused).
 *
 * Only libc, never an allocation: anvil-init is static and small. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "jail/jail.h"

#define RELAY_BUF 16384

struct dir {
        char buf[RELAY_BUF];
        size_t len, off; /* bytes read and not yet written: buf[off, len) */
        bool eof;        /* the reading side ended; the writing side is shut once drained */
        bool shut;
};

struct pair {
        int c; /* the client, TCP in the jail */
        int p; /* the proxy's socket */
        struct dir up, down;
};

static struct pair pairs[JAIL_RELAY_PAIRS];

static void pair_close(struct pair *x)
{
        (void)close(x->c);
        (void)close(x->p);
        memset(x, 0, sizeof(*x));
        x->c = x->p = -1;
}

static int proxy_connect(void)
{
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        memcpy(sa.sun_path, JAIL_EGRESS_SOCK, sizeof(JAIL_EGRESS_SOCK));
        /* An AF_UNIX connect does not wait: done, or refused (no listener, a full backlog) */
        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                (void)close(s);
                return -1;
        }
        return s;
}

static void accept_one(int l)
{
        int c = accept4(l, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0)
                return;
        for (int i = 0; i < JAIL_RELAY_PAIRS; i++) {
                if (pairs[i].c >= 0)
                        continue;
                int p = proxy_connect();
                if (p < 0)
                        break;
                pairs[i].c = c;
                pairs[i].p = p;
                return;
        }
        (void)close(c); /* all in use, or the proxy refused: the client sees the end */
}

/* Moves what it can from one side to the other; false: the pair is done or broken. */
static bool pump(int from, int to, struct dir *d, short rev_from)
{
        if (!d->eof && d->len == 0 && (rev_from & (POLLIN | POLLHUP | POLLERR))) {
                ssize_t n = read(from, d->buf, sizeof(d->buf));
                if (n > 0) {
                        d->len = (size_t)n;
                        d->off = 0;
                } else if (n == 0) {
                        d->eof = true;
                } else if (errno != EAGAIN && errno != EINTR) {
                        return false;
                }
        }
        if (d->len > d->off) { /* tried at once: a non-blocking send takes what fits */
                ssize_t n = send(to, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n > 0)
                        d->off += (size_t)n;
                else if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return false;
                if (d->off == d->len)
                        d->len = d->off = 0;
        }
        if (d->eof && d->len == 0 && !d->shut) {
                (void)shutdown(to, SHUT_WR);
                d->shut = true;
        }
        return true;
}

void jail_relay_main(int l)
{
        for (int i = 0; i < JAIL_RELAY_PAIRS; i++)
                pairs[i].c = pairs[i].p = -1;
        (void)fcntl(l, F_SETFL, O_NONBLOCK);
        struct pollfd fds[1 + 2 * JAIL_RELAY_PAIRS];
        for (;;) {
                fds[0] = (struct pollfd){ .fd = l, .events = POLLIN };
                for (int i = 0; i < JAIL_RELAY_PAIRS; i++) {
                        struct pair *x = &pairs[i];
                        struct pollfd *c = &fds[1 + 2 * i], *p = c + 1;
                        *c = (struct pollfd){ .fd = x->c };
                        *p = (struct pollfd){ .fd = x->p };
                        if (x->c < 0)
                                continue;
                        if (!x->up.eof && x->up.len == 0)
                                c->events |= POLLIN;
                        if (!x->down.eof && x->down.len == 0)
                                p->events |= POLLIN;
                        if (x->up.len)
                                p->events |= POLLOUT;
                        if (x->down.len)
                                c->events |= POLLOUT;
                }
                int n = poll(fds, 1 + 2 * JAIL_RELAY_PAIRS, -1);
                if (n < 0 && errno != EINTR)
                        _exit(127);
                if (n <= 0)
                        continue;
                for (int i = 0; i < JAIL_RELAY_PAIRS; i++) {
                        struct pair *x = &pairs[i];
                        if (x->c < 0)
                                continue;
                        short rc = fds[1 + 2 * i].revents, rp = fds[2 + 2 * i].revents;
                        if (!rc && !rp)
                                continue;
                        if (!pump(x->c, x->p, &x->up, rc) || !pump(x->p, x->c, &x->down, rp) ||
                            (x->up.shut && x->down.shut) || (rc & POLLERR) || (rp & POLLERR))
                                pair_close(x);
                        else if (x->down.eof && x->down.len == 0 && (rc & POLLHUP))
                                pair_close(x);
                }
                if (fds[0].revents & POLLIN)
                        accept_one(l);
        }
}
