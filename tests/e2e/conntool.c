/* conntool: clients that hold a daemon's connections, for the end-to-end tests of its bounds
 * (t_bounds_*.sh). Every frame read back goes through the library's reader and strict decoder.
 *
 *   conntool SOCKET hold N [PARTIAL]
 *        opens N connections (each, with PARTIAL > 0, sends a frame header declaring 16 MiB and
 *        then PARTIAL bytes of it), prints "held N" and waits, reading nothing, until its stdin
 *        ends; then prints what each connection had received (see SUMMARY) and exits 0.
 *   conntool SOCKET await N [PARTIAL [SECONDS]]
 *        as hold, then waits (reading) until the daemon has closed every connection, at most
 *        SECONDS (30); prints SUMMARY and "closed after N ms", or "not closed: N"; exit 0 if
 *        all closed.
 *   conntool SOCKET runs N TOOL.py [OUTPUT_BYTES]
 *        a slow reader: sends N run_requests of TOOL.py on one connection (request_id
 *        slow-1..N, limits.output_bytes if given), prints "sent N", then reads nothing until it gets
 *        SIGUSR1; then reads until the stream ends or N run_results are in, and prints
 *        "run_result K", the error frame's line if one came, and "end eof|reset|all|timeout".
 *        With CONNTOOL_STREAM=1 in its environment, each asks for the tool's output as it is
 *        written (run_request.stream_output).
 *   conntool SOCKET gone TOOL.py
 *        sends one run_request and reads until its first run_event, prints
 *        "run_event run_id=ID" and exits, closing the connection while the run goes on.
 *   conntool SOCKET big TOTAL
 *        sends a minimal run_request (only v, type, source and one input, every optional field
 *        left out) whose frame's payload is exactly TOTAL bytes, and prints the reply: the
 *        error line, or "run_result STATUS STDOUT's first line".
 *
 * SUMMARY: one line per kind, "COUNT error code=C message=M", "COUNT closed" (the end of the
 * stream without an error frame), "COUNT open" (nothing came), sorted by the text. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "proto/proto.h"

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
        va_list ap;
        fputs("conntool: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return 1;
}

static int connect_to(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* A full backlog is EAGAIN for a non-blocking connect: the daemon accepts soon. */
        uint64_t deadline = now_ms() + 10000;
        while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int e = errno;
                if ((e != EAGAIN && e != EINTR) || now_ms() >= deadline) {
                        close(fd);
                        return -e;
                }
                (void)usleep(2000);
        }
        return fd;
}

/* Writes it all, waiting while the socket is full: 0, or -errno (EPIPE: the daemon closed). */
static int send_all(int fd, const void *buf, size_t n)
{
        const uint8_t *p = buf;
        uint64_t deadline = now_ms() + 30000;
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                return -errno;
                        if (now_ms() >= deadline)
                                return -ETIMEDOUT;
                        struct pollfd pf = { .fd = fd, .events = POLLOUT };
                        (void)poll(&pf, 1, 100);
                        continue;
                }
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

/* ---- what a connection received ---- */

struct conn {
        int fd;
        struct proto_reader rd;
        char *error; /* "error code=C message=M" */
        bool eof, reset;
        unsigned results, events;
        char *result;     /* the first run_result's "STATUS STDOUT-line" */
        char run_id[PROTO_ID_MAX + 1];
};

static char *error_line(const struct proto_error *e)
{
        char *s;
        if (asprintf(&s, "error code=%s message=%s", e->code, e->message) < 0)
                return NULL;
        for (char *c = s; *c; c++)
                if ((unsigned char)*c < 0x20)
                        *c = '?';
        return s;
}

/* Takes every whole frame out of the reader. <0: the daemon sent a bad frame. */
static int take_frames(struct conn *c)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        for (;;) {
                const uint8_t *p;
                size_t n;
                int k = proto_reader_next(&c->rd, &p, &n, &err);
                if (k < 0)
                        return fail("a bad frame from the daemon: %s", err.msg);
                if (k == 0)
                        return 0;
                struct proto_msg m;
                if (proto_decode(p, n, &m, &err) < 0)
                        return fail("a malformed message from the daemon: %s", err.msg);
                if (m.type == PROTO_ERROR && !c->error)
                        c->error = error_line(&m.u.error);
                if (m.type == PROTO_RUN_EVENT) {
                        c->events++;
                        if (!c->run_id[0])
                                snprintf(c->run_id, sizeof(c->run_id), "%s", m.u.run_event.run_id);
                }
                if (m.type == PROTO_RUN_RESULT) {
                        c->results++;
                        if (!c->result) {
                                const char *out = m.u.run_result.out_text ? m.u.run_result.out_text : "";
                                if (asprintf(&c->result, "%s %.*s", m.u.run_result.status, (int)strcspn(out, "\n"),
                                             out) < 0)
                                        c->result = NULL;
                        }
                }
                proto_msg_free(&m);
        }
}

/* Reads what is there (non-blocking). 1 once the stream has ended, 0 if it is still open. */
static int read_some(struct conn *c)
{
        if (c->eof || c->reset)
                return 1;
        for (;;) {
                uint8_t buf[65536];
                ssize_t got = read(c->fd, buf, sizeof(buf));
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0 && errno == EAGAIN)
                        return 0;
                if (got < 0 && errno == ECONNRESET) {
                        c->reset = true; /* it closed with our bytes unread: after what it sent */
                        return 1;
                }
                if (got < 0) {
                        fail("read: %s", strerror(errno));
                        c->reset = true;
                        return 1;
                }
                if (got == 0) {
                        c->eof = true;
                        return 1;
                }
                struct anvil_err err = ANVIL_ERR_INIT;
                if (proto_reader_feed(&c->rd, buf, (size_t)got, &err) < 0 || take_frames(c) < 0) {
                        c->reset = true;
                        return 1;
                }
        }
}

/* What a connection holds, given back before the tool returns: LeakSanitizer checks this tool
 * too (make check SANITIZE=1). */
static void conn_free(struct conn *c)
{
        if (c->fd >= 0)
                (void)close(c->fd);
        c->fd = -1;
        proto_reader_free(&c->rd);
        free(c->error);
        free(c->result);
        c->error = c->result = NULL;
}

static void conns_free(struct conn *cs, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                conn_free(&cs[i]);
        free(cs);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void summary(struct conn *cs, unsigned n)
{
        const char **kind = calloc(n, sizeof(*kind));
        if (!kind)
                return;
        for (unsigned i = 0; i < n; i++)
                kind[i] = cs[i].error ? cs[i].error : (cs[i].eof || cs[i].reset) ? "closed" : "open";
        qsort(kind, n, sizeof(*kind), cmp_str);
        for (unsigned i = 0; i < n;) {
                unsigned j = i;
                while (j < n && strcmp(kind[j], kind[i]) == 0)
                        j++;
                printf("%u %s\n", j - i, kind[i]);
                i = j;
        }
        free(kind);
}

/* Until the test says go on: SIGUSR1 (blocked from the start, so it is never missed). */
static void wait_release(void)
{
        sigset_t set;
        int sig;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        (void)sigwait(&set, &sig);
}

/* ---- hold, await ---- */

static int open_conns(const char *sock, unsigned n, size_t partial, struct conn **out)
{
        struct conn *cs = calloc(n, sizeof(*cs));
        if (!cs)
                return fail("out of memory");
        uint8_t *part = NULL;
        if (partial) {
                part = calloc(1, partial + 4);
                if (!part)
                        return fail("out of memory");
                uint32_t be = htonl(PROTO_FRAME_MAX);
                memcpy(part, &be, 4);
        }
        for (unsigned i = 0; i < n; i++) {
                cs[i].fd = connect_to(sock);
                if (cs[i].fd < 0)
                        return fail("connection %u of %u: connect: %s", i + 1, n, strerror(-cs[i].fd));
                proto_reader_init(&cs[i].rd, 0);
                if (part) {
                        int r = send_all(cs[i].fd, part, partial + 4);
                        if (r < 0 && r != -EPIPE && r != -ECONNRESET)
                                return fail("connection %u: send: %s", i + 1, strerror(-r));
                }
        }
        free(part);
        *out = cs;
        return 0;
}

static int cmd_hold(const char *sock, unsigned n, size_t partial, bool await, unsigned secs)
{
        struct conn *cs = NULL;
        if (open_conns(sock, n, partial, &cs))
                return 1;
        printf("held %u\n", n);
        fflush(stdout);
        if (!await) {
                wait_release();
                for (unsigned i = 0; i < n; i++)
                        (void)read_some(&cs[i]);
                summary(cs, n);
                conns_free(cs, n);
                return 0;
        }
        uint64_t t0 = now_ms(), deadline = t0 + secs * 1000ull;
        unsigned left;
        for (;;) {
                left = 0;
                for (unsigned i = 0; i < n; i++)
                        left += !read_some(&cs[i]);
                if (!left || now_ms() >= deadline)
                        break;
                (void)usleep(20000);
        }
        summary(cs, n);
        conns_free(cs, n);
        if (left) {
                printf("not closed: %u\n", left);
                return 1;
        }
        printf("closed after %llu ms\n", (unsigned long long)(now_ms() - t0));
        return 0;
}

/* ---- runs, gone, big ---- */

static int read_tool(const char *path, char **src)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *data;
        size_t len;
        if (fd_read_file(path, PROTO_SOURCE_MAX, &data, &len, &err) < 0)
                return fail("%s", err.msg);
        *src = (char *)data;
        return 0;
}

static int send_run(int fd, const char *src, const char *rid, uint64_t output_bytes)
{
        struct proto_msg m = { .type = PROTO_RUN_REQUEST };
        m.u.run_request.source = (char *)src;
        m.u.run_request.request_id = (char *)rid;
        m.u.run_request.limits.output_bytes = output_bytes;
        const char *stream = getenv("CONNTOOL_STREAM");
        m.u.run_request.stream_output = stream && strcmp(stream, "1") == 0;
        uint8_t *buf;
        size_t len;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (proto_encode(&m, &buf, &len, &err) < 0)
                return fail("%s", err.msg);
        int r = send_all(fd, buf, len);
        free(buf);
        return r < 0 ? fail("send: %s", strerror(-r)) : 0;
}

/* Reads c until the stream ends (or until stop says so), at most secs. */
static void read_until(struct conn *c, unsigned secs, bool (*stop)(const struct conn *c))
{
        uint64_t deadline = now_ms() + secs * 1000ull;
        while (!read_some(c) && !(stop && stop(c)) && now_ms() < deadline) {
                struct pollfd pf = { .fd = c->fd, .events = POLLIN };
                (void)poll(&pf, 1, 100);
        }
}

static unsigned runs_wanted;

static bool got_all(const struct conn *c)
{
        return c->results >= runs_wanted;
}

static int cmd_runs(const char *sock, unsigned n, const char *tool, uint64_t output_bytes)
{
        _cleanup_free_ char *src = NULL;
        if (read_tool(tool, &src))
                return 1;
        struct conn c = { .fd = connect_to(sock) };
        if (c.fd < 0)
                return fail("connect: %s", strerror(-c.fd));
        proto_reader_init(&c.rd, 0);
        for (unsigned i = 0; i < n; i++) {
                char rid[32];
                snprintf(rid, sizeof(rid), "slow-%u", i + 1);
                if (send_run(c.fd, src, rid, output_bytes))
                        return 1;
        }
        printf("sent %u\n", n);
        fflush(stdout);
        wait_release();
        runs_wanted = n;
        read_until(&c, 60, got_all);
        printf("run_result %u\n", c.results);
        if (c.error)
                printf("%s\n", c.error);
        printf("end %s\n", c.eof ? "eof" : c.reset ? "reset" : c.results >= n ? "all" : "timeout");
        conn_free(&c);
        return 0;
}

static bool got_event(const struct conn *c)
{
        return c->events > 0 || c->error || c->results;
}

static int cmd_gone(const char *sock, const char *tool)
{
        _cleanup_free_ char *src = NULL;
        if (read_tool(tool, &src))
                return 1;
        struct conn c = { .fd = connect_to(sock) };
        if (c.fd < 0)
                return fail("connect: %s", strerror(-c.fd));
        proto_reader_init(&c.rd, 0);
        if (send_run(c.fd, src, "gone-1", 0))
                return 1;
        read_until(&c, 30, got_event);
        if (!c.events)
                return fail("no run_event came (%s)", c.error ? c.error : c.results ? "a run_result" : "nothing");
        printf("run_event run_id=%s\n", c.run_id);
        conn_free(&c); /* the connection closes as the process ends */
        return 0;
}

static void pstr(msgpack_packer *pk, const char *s)
{
        size_t n = strlen(s);
        msgpack_pack_str(pk, n);
        msgpack_pack_str_body(pk, s, n);
}

/* The minimal run_request with an input of x bytes, framed. */
static int pack_big(size_t x, const uint8_t *data, msgpack_sbuffer *sb)
{
        msgpack_packer pk;
        msgpack_sbuffer_init(sb);
        msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
        (void)msgpack_sbuffer_write(sb, "\0\0\0\0", 4);
        msgpack_pack_map(&pk, 4);
        pstr(&pk, "v");
        msgpack_pack_uint64(&pk, PROTO_VERSION);
        pstr(&pk, "type");
        pstr(&pk, "run_request");
        pstr(&pk, "source");
        pstr(&pk, "import os\nprint(os.path.getsize('./inputs/big.bin'))\n");
        pstr(&pk, "inputs");
        msgpack_pack_array(&pk, 1);
        msgpack_pack_map(&pk, 2);
        pstr(&pk, "name");
        pstr(&pk, "big.bin");
        pstr(&pk, "data");
        msgpack_pack_bin(&pk, x);
        msgpack_pack_bin_body(&pk, data, x);
        if (!sb->data)
                return fail("out of memory");
        uint32_t be = htonl((uint32_t)(sb->size - 4));
        memcpy(sb->data, &be, 4);
        return 0;
}

static bool got_reply(const struct conn *c)
{
        return c->error || c->results;
}

static int cmd_big(const char *sock, size_t total)
{
        const size_t probe = 1 << 20;
        _cleanup_free_ uint8_t *data = calloc(1, total);
        if (!data || total < 2 * probe)
                return fail("TOTAL must be at least 2 MiB");
        msgpack_sbuffer sb;
        if (pack_big(probe, data, &sb))
                return 1;
        size_t overhead = sb.size - 4 - probe;
        msgpack_sbuffer_destroy(&sb);
        if (pack_big(total - overhead, data, &sb))
                return 1;
        if (sb.size - 4 != total)
                return fail("packed %zu bytes, not %zu", sb.size - 4, total);
        struct conn c = { .fd = connect_to(sock) };
        if (c.fd < 0)
                return fail("connect: %s", strerror(-c.fd));
        proto_reader_init(&c.rd, 0);
        int r = send_all(c.fd, sb.data, sb.size);
        msgpack_sbuffer_destroy(&sb);
        if (r < 0 && r != -EPIPE && r != -ECONNRESET)
                return fail("send: %s", strerror(-r));
        read_until(&c, 120, got_reply);
        if (c.error)
                printf("%s\n", c.error);
        else if (c.result)
                printf("run_result %s\n", c.result);
        else
                r = fail("neither an error nor a run_result came (%s)", c.eof ? "eof" : c.reset ? "reset" : "timeout");
        conn_free(&c);
        return r < 0 ? 0 : r;
}

int main(int argc, char **argv)
{
        if (argc < 3)
                return fail("usage: see the top of tests/e2e/conntool.c");
        const char *sock = argv[1], *cmd = argv[2];
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        (void)sigprocmask(SIG_BLOCK, &usr1, NULL);
        /* Many connections: as many fds as the hard limit allows. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        if ((strcmp(cmd, "hold") == 0 || strcmp(cmd, "await") == 0) && argc >= 4) {
                bool await = cmd[0] == 'a';
                unsigned secs = argc >= 6 ? (unsigned)strtoul(argv[5], NULL, 10) : 30;
                return cmd_hold(sock, (unsigned)strtoul(argv[3], NULL, 10),
                                argc >= 5 ? (size_t)strtoull(argv[4], NULL, 10) : 0, await, secs);
        }
        if (strcmp(cmd, "runs") == 0 && argc >= 5)
                return cmd_runs(sock, (unsigned)strtoul(argv[3], NULL, 10), argv[4],
                                argc >= 6 ? strtoull(argv[5], NULL, 10) : 0);
        if (strcmp(cmd, "gone") == 0 && argc == 4)
                return cmd_gone(sock, argv[3]);
        if (strcmp(cmd, "big") == 0 && argc == 4)
                return cmd_big(sock, (size_t)strtoull(argv[3], NULL, 10));
        return fail("usage: see the top of tests/e2e/conntool.c");
}
