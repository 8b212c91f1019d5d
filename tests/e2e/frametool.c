/* frametool: a deliberately bad client for the end-to-end tests of the daemons' sockets.
 *
 *   frametool SOCKET CLASS   sends one malformed frame of CLASS, reads frames until the server
 *                            closes, prints the error frame it got as one line
 *                              error code=<code> field=<field or -> message=<message>
 *                            and exits 0 if an error frame came and then the connection closed.
 *   frametool SOCKET hello   sends a valid hello and prints "ok <type>" for the reply, or the
 *                            error line (exit 2) if the reply is an error frame.
 *   frametool SOCKET zero:FIELD, nil:FIELD
 *                            sends a well-formed run_request with limits {FIELD: 0} (or nil),
 *                            which no client built with proto_encode sends for an unset limit,
 *                            and prints the first reply like hello does.
 *   frametool SOCKET artifact:ID:PATH
 *                            sends an artifact_request for PATH of the stored run or task ID
 *                            (the path as a tool might have named it, not as a result lists
 *                            it) and prints the first reply like hello does.
 *   frametool SOCKET args:KIND
 *                            sends a run_request whose args are KIND: notarray (a string),
 *                            notstring (["a", 1]), nul (["a\0b"]), toomany (257 of "a"),
 *                            overdecoder (1025 of "a"), long (one of 4097 bytes), total (17 of
 *                            4000 bytes), ok (["x"]); prints the first reply like hello does.
 *
 *   frametool SOCKET fd:KIND  sends a run_request whose one input names fd 0, with fds that a
 *                            client built on anvilctl would not send, and prints the error
 *                            frame as CLASS does: KIND pipe, socket, devzero (fd 0 is one of
 *                            those), count (two fds for the one input), none (no fd), hello (a
 *                            hello with an fd), midframe (the fd sent with the frame's last
 *                            byte rather than its first), opath:PATH and wronly:PATH (PATH
 *                            opened O_PATH, or write-only). The first reply is printed as hello
 *                            does (an error frame: its line, exit 2).
 *
 * CLASS is one of truncated, oversize, wrongtype, missing, deep, trailing, unknowntype (the
 * classes of tests/unit/test_proto.c). The malformed frames are packed by hand, since
 * proto_encode cannot make them; everything read back goes through the library's own reader
 * and strict decoder, so a server that answers with a malformed frame fails the test too.
 * The whole exchange has 10 seconds; anything else exits 1 with a one-line reason on stderr. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "proto/proto.h"

#define TIMEOUT_MS 10000

static uint64_t deadline;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
        va_list ap;
        fputs("frametool: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return 1;
}

/* 1 when fd is ready, 0 when the exchange's time is up. */
static int wait_for(int fd, short events)
{
        for (;;) {
                uint64_t now = now_ms();
                if (now >= deadline)
                        return 0;
                struct pollfd p = { .fd = fd, .events = events };
                int r = poll(&p, 1, (int)(deadline - now));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r > 0)
                        return 1;
        }
}

static int connect_to(const char *path, struct anvil_err *err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return anvil_err_set(err, ENAMETOOLONG, "Socket path %s is too long", path);
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to create a socket");
        /* A non-blocking connect to a Unix socket whose backlog is full fails with EAGAIN
         * rather than completing later: retry until the deadline. */
        while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        return anvil_err_sys(err, errno, "Failed to connect to %s", path);
                if (now_ms() >= deadline)
                        return anvil_err_set(err, ETIMEDOUT, "Timed out connecting to %s", path);
                (void)usleep(10 * 1000);
        }
        return TAKE_FD(fd);
}

/* Returns 0, or -EPIPE if the server closed first (its error frame may still be waiting). */
static int send_all(int fd, const uint8_t *p, size_t n, struct anvil_err *err)
{
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EPIPE || errno == ECONNRESET)
                                return -EPIPE;
                        if (errno != EAGAIN)
                                return anvil_err_sys(err, errno, "Failed to send");
                        int r = wait_for(fd, POLLOUT);
                        if (r < 0)
                                return anvil_err_sys(err, -r, "Failed to poll");
                        if (r == 0)
                                return anvil_err_set(err, ETIMEDOUT, "Timed out sending the frame");
                        continue;
                }
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

/* ---- the frames ---- */

static void pstr(msgpack_packer *pk, const char *s)
{
        size_t n = strlen(s);
        msgpack_pack_str(pk, n);
        msgpack_pack_str_body(pk, s, n);
}

static void head(msgpack_packer *pk, size_t n, const char *type)
{
        msgpack_pack_map(pk, n + 2);
        pstr(pk, "v");
        msgpack_pack_uint64(pk, PROTO_VERSION);
        pstr(pk, "type");
        pstr(pk, type);
}

static void b_wrongtype(msgpack_packer *pk)
{
        head(pk, 2, "run_request");
        pstr(pk, "source"), pstr(pk, "print(1)");
        pstr(pk, "limits"), msgpack_pack_map(pk, 1), pstr(pk, "wall_s"), pstr(pk, "10");
}

static void b_missing(msgpack_packer *pk)
{
        head(pk, 1, "run_request");
        pstr(pk, "request_id"), pstr(pk, "frametool");
}

static void b_deep(msgpack_packer *pk)
{
        head(pk, 2, "run_request");
        pstr(pk, "source"), pstr(pk, "print(1)");
        pstr(pk, "junk");
        for (int i = 0; i < 12; i++)
                msgpack_pack_array(pk, 1);
        msgpack_pack_nil(pk);
}

static void b_trailing(msgpack_packer *pk)
{
        head(pk, 1, "hello");
        pstr(pk, "role"), pstr(pk, "client");
        msgpack_pack_nil(pk), msgpack_pack_nil(pk), msgpack_pack_nil(pk);
}

static void b_unknowntype(msgpack_packer *pk)
{
        head(pk, 0, "bogus");
}

static const struct {
        const char *name;
        void (*build)(msgpack_packer *pk);
} classes[] = {
        { "wrongtype", b_wrongtype }, { "missing", b_missing },         { "deep", b_deep },
        { "trailing", b_trailing },   { "unknowntype", b_unknowntype },
};

static int encode_hello(uint8_t **out, size_t *len, struct anvil_err *err)
{
        struct proto_msg m = { .type = PROTO_HELLO };
        m.u.hello.role = "client";
        m.u.hello.software = "frametool";
        return proto_encode(&m, out, len, err);
}

/* A run_request whose limits hold one field, given as 0 or as nil. */
static int encode_limit(const char *field, bool zero, uint8_t **out, size_t *len, struct anvil_err *err)
{
        msgpack_sbuffer sb;
        msgpack_packer pk;
        msgpack_sbuffer_init(&sb);
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        (void)msgpack_sbuffer_write(&sb, "\0\0\0\0", 4);
        head(&pk, 2, "run_request");
        pstr(&pk, "source"), pstr(&pk, "print('limits as given')");
        pstr(&pk, "limits"), msgpack_pack_map(&pk, 1), pstr(&pk, field);
        if (zero)
                msgpack_pack_uint64(&pk, 0);
        else
                msgpack_pack_nil(&pk);
        if (!sb.data)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        uint32_t be = htonl((uint32_t)(sb.size - 4));
        memcpy(sb.data, &be, 4);
        *len = sb.size;
        *out = (uint8_t *)msgpack_sbuffer_release(&sb);
        return 0;
}

/* artifact:ID:PATH */
static int encode_artifact(const char *spec, uint8_t **out, size_t *len, struct anvil_err *err)
{
        _cleanup_free_ char *id = strdup(spec);
        char *path = id ? strchr(id, ':') : NULL;
        if (!path)
                return anvil_err_set(err, EINVAL, "expected artifact:ID:PATH");
        *path++ = 0;
        struct proto_msg m = { .type = PROTO_ARTIFACT_REQUEST };
        m.u.artifact_request = (struct proto_artifact_request){ .request_id = "frametool", .id = id, .path = path };
        return proto_encode(&m, out, len, err);
}

/* A run_request whose args are of KIND (the usage above). */
static int encode_args(const char *kind, uint8_t **out, size_t *len, struct anvil_err *err)
{
        static char big[4097];
        memset(big, 'a', sizeof(big));
        msgpack_sbuffer sb;
        msgpack_packer pk;
        msgpack_sbuffer_init(&sb);
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        (void)msgpack_sbuffer_write(&sb, "\0\0\0\0", 4);
        head(&pk, 2, "run_request");
        pstr(&pk, "source"), pstr(&pk, "import sys; print(sys.argv)");
        pstr(&pk, "args");
        size_t n = strcmp(kind, "toomany") == 0 ? 257 : strcmp(kind, "overdecoder") == 0 ? 1025 : 17;
        if (strcmp(kind, "notarray") == 0) {
                pstr(&pk, "a");
        } else if (strcmp(kind, "notstring") == 0) {
                msgpack_pack_array(&pk, 2), pstr(&pk, "a"), msgpack_pack_int(&pk, 1);
        } else if (strcmp(kind, "nul") == 0) {
                msgpack_pack_array(&pk, 1), msgpack_pack_str(&pk, 3), msgpack_pack_str_body(&pk, "a\0b", 3);
        } else if (strcmp(kind, "long") == 0) {
                msgpack_pack_array(&pk, 1), msgpack_pack_str(&pk, 4097), msgpack_pack_str_body(&pk, big, 4097);
        } else if (strcmp(kind, "total") == 0) {
                msgpack_pack_array(&pk, n);
                for (size_t i = 0; i < n; i++)
                        msgpack_pack_str(&pk, 4000), msgpack_pack_str_body(&pk, big, 4000);
        } else if (strcmp(kind, "toomany") == 0 || strcmp(kind, "overdecoder") == 0) {
                msgpack_pack_array(&pk, n);
                for (size_t i = 0; i < n; i++)
                        pstr(&pk, "a");
        } else if (strcmp(kind, "ok") == 0) {
                msgpack_pack_array(&pk, 1), pstr(&pk, "x");
        } else {
                msgpack_sbuffer_destroy(&sb);
                return anvil_err_set(err, EINVAL, "Unknown args kind '%s'", kind);
        }
        if (!sb.data)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        uint32_t be = htonl((uint32_t)(sb.size - 4));
        memcpy(sb.data, &be, 4);
        *len = sb.size;
        *out = (uint8_t *)msgpack_sbuffer_release(&sb);
        return 0;
}

/* The bytes to send for CLASS, and whether to shut our side down after them. */
static int build(const char *cls, uint8_t **out, size_t *len, bool *shut, struct anvil_err *err)
{
        *shut = false;
        if (strcmp(cls, "hello") == 0)
                return encode_hello(out, len, err);
        if (strncmp(cls, "artifact:", 9) == 0)
                return encode_artifact(cls + 9, out, len, err);
        if (strncmp(cls, "zero:", 5) == 0 || strncmp(cls, "nil:", 4) == 0)
                return encode_limit(strchr(cls, ':') + 1, cls[0] == 'z', out, len, err);
        if (strncmp(cls, "args:", 5) == 0)
                return encode_args(cls + 5, out, len, err);
        if (strcmp(cls, "truncated") == 0) {
                /* A valid frame with its last bytes missing, then end of stream. */
                int r = encode_hello(out, len, err);
                if (r < 0)
                        return r;
                *len -= 3;
                *shut = true;
                return 0;
        }
        if (strcmp(cls, "oversize") == 0) {
                /* The header alone: a server must refuse it without waiting for 16 MiB. */
                uint32_t be = htonl(PROTO_FRAME_MAX + 1);
                if (!(*out = malloc(4)))
                        return anvil_err_set(err, ENOMEM, "Out of memory");
                memcpy(*out, &be, 4);
                *len = 4;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(classes); i++) {
                if (strcmp(cls, classes[i].name) != 0)
                        continue;
                msgpack_sbuffer sb;
                msgpack_packer pk;
                msgpack_sbuffer_init(&sb);
                msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
                (void)msgpack_sbuffer_write(&sb, "\0\0\0\0", 4);
                classes[i].build(&pk);
                if (!sb.data)
                        return anvil_err_set(err, ENOMEM, "Out of memory");
                uint32_t be = htonl((uint32_t)(sb.size - 4));
                memcpy(sb.data, &be, 4);
                *len = sb.size;
                *out = (uint8_t *)msgpack_sbuffer_release(&sb);
                return 0;
        }
        return anvil_err_set(err, EINVAL, "Unknown class '%s'", cls);
}

/* ---- the reply ---- */

/* One line whatever the server put in a string. */
static const char *oneline(const char *s, char *buf, size_t size)
{
        size_t i = 0;
        for (; s[i] && i + 1 < size; i++)
                buf[i] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
        buf[i] = 0;
        return buf;
}

static void print_error(const struct proto_error *e)
{
        char code[64], field[512], msg[8192];
        printf("error code=%s field=%s message=%s\n", oneline(e->code, code, sizeof(code)),
               e->field && *e->field ? oneline(e->field, field, sizeof(field)) : "-",
               oneline(e->message, msg, sizeof(msg)));
        fflush(stdout);
}

static int exchange(int fd, bool hello)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_reader r;
        bool got_error = false;
        int ret = 1;
        proto_reader_init(&r, 0);
        for (;;) {
                const uint8_t *p;
                size_t n;
                int k = proto_reader_next(&r, &p, &n, &err);
                if (k < 0) {
                        ret = fail("the server sent a bad frame: %s", err.msg);
                        break;
                }
                if (k == 1) {
                        struct proto_msg m;
                        if (proto_decode(p, n, &m, &err) < 0) {
                                ret = fail("the server sent a malformed message: %s", err.msg);
                                break;
                        }
                        if (hello) {
                                /* An error in answer to a hello (e.g. "forbidden") is printed
                                 * as one, and is not a success. */
                                if (m.type == PROTO_ERROR)
                                        print_error(&m.u.error);
                                else
                                        printf("ok %s\n", proto_type_name(m.type));
                                ret = m.type == PROTO_ERROR ? 2 : 0;
                                proto_msg_free(&m);
                                break;
                        }
                        if (m.type == PROTO_ERROR && !got_error) {
                                print_error(&m.u.error);
                                got_error = true;
                        }
                        proto_msg_free(&m);
                        continue;
                }
                int w = wait_for(fd, POLLIN);
                if (w < 0) {
                        ret = fail("poll: %s", strerror(-w));
                        break;
                }
                if (w == 0) {
                        if (got_error)
                                ret = fail("the server sent an error frame but did not close the connection "
                                           "within 10 s");
                        else
                                ret = fail("no %s within 10 s", hello ? "reply" : "error frame");
                        break;
                }
                uint8_t buf[65536];
                ssize_t got = read(fd, buf, sizeof(buf));
                if (got < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                /* A server that closes with our bytes still unread makes the kernel report
                 * ECONNRESET after what it sent us: that too is the server closing. */
                if (got == 0 || (got < 0 && errno == ECONNRESET)) {
                        if (proto_reader_partial(&r))
                                ret = fail("the server closed the connection inside a frame");
                        else if (hello)
                                ret = fail("the server closed the connection without replying");
                        else if (!got_error)
                                ret = fail("the server closed the connection without an error frame");
                        else
                                ret = 0;
                        break;
                }
                if (got < 0) {
                        ret = fail("read: %s", strerror(errno));
                        break;
                }
                if (proto_reader_feed(&r, buf, (size_t)got, &err) < 0) {
                        ret = fail("%s", err.msg);
                        break;
                }
        }
        proto_reader_free(&r);
        return ret;
}

/* fd:KIND (above). */
static const char *path_arg = "/etc/hostname"; /* fd:opath:PATH, fd:wronly:PATH */

static int fd_class(const char *sock, const char *kind_arg)
{
        char kind[16];
        snprintf(kind, sizeof(kind), "%s", kind_arg);
        char *colon = strchr(kind, ':');
        if (colon) {
                *colon = 0;
                path_arg = strchr(kind_arg, ':') + 1;
        }
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m = { .type = PROTO_RUN_REQUEST };
        struct proto_input in = { .name = "x.csv", .fd = { .set = true, .v = 0 } };
        m.u.run_request.source = "print(open('inputs/x.csv').read(10))";
        m.u.run_request.inputs = (struct proto_array){ &in, 1 };
        if (strcmp(kind, "hello") == 0) {
                m = (struct proto_msg){ .type = PROTO_HELLO };
                m.u.hello.role = "client";
        }
        _cleanup_free_ uint8_t *frame = NULL;
        size_t len;
        if (proto_encode(&m, &frame, &len, &err) < 0)
                return fail("%s", err.msg);
        int fds[2] = { -1, -1 }, pair[2] = { -1, -1 }, n = 1;
        if (strcmp(kind, "pipe") == 0) {
                if (pipe2(pair, O_CLOEXEC) < 0)
                        return fail("pipe: %s", strerror(errno));
                fds[0] = pair[0];
        } else if (strcmp(kind, "socket") == 0) {
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                        return fail("socketpair: %s", strerror(errno));
                fds[0] = pair[0];
        } else if (strcmp(kind, "devzero") == 0) {
                fds[0] = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        } else if (strcmp(kind, "count") == 0) {
                fds[0] = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
                fds[1] = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
                n = 2;
        } else if (strcmp(kind, "opath") == 0) {
                fds[0] = open(path_arg, O_PATH | O_CLOEXEC);
        } else if (strcmp(kind, "wronly") == 0) {
                fds[0] = open(path_arg, O_WRONLY | O_CLOEXEC);
        } else if (strcmp(kind, "none") == 0) {
                n = 0;
        } else if (strcmp(kind, "hello") == 0 || strcmp(kind, "midframe") == 0) {
                fds[0] = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
        } else
                return fail("unknown fd kind %s", kind);
        if (n && fds[0] < 0)
                return fail("open: %s", strerror(errno));
        _cleanup_close_ int fd = connect_to(sock, &err);
        if (fd < 0)
                return fail("%s", err.msg);
        int r;
        if (n == 0)
                r = send_all(fd, frame, len, &err);
        else if (strcmp(kind, "midframe") == 0) {
                if ((r = send_all(fd, frame, len - 1, &err)) == 0) {
                        usleep(200 * 1000); /* the first bytes read on their own */
                        r = fd_send_fds(fd, frame + len - 1, 1, fds, 1, &err);
                }
        } else if ((r = fd_send_fds(fd, frame, 4, fds, (size_t)n, &err)) == 0)
                r = send_all(fd, frame + 4, len - 4, &err);
        if (r < 0 && r != -EPIPE)
                return fail("%s", err.msg);
        return exchange(fd, true); /* the first reply: the error line, exit 2 */
}

int main(int argc, char **argv)
{
        if (argc == 3 && strncmp(argv[2], "fd:", 3) == 0) {
                deadline = now_ms() + TIMEOUT_MS;
                return fd_class(argv[1], argv[2] + 3);
        }
        if (argc != 3)
                return fail("usage: frametool SOCKET hello|truncated|oversize|wrongtype|missing|deep|trailing|"
                            "unknowntype|zero:FIELD|nil:FIELD|artifact:ID:PATH|args:KIND");
        deadline = now_ms() + TIMEOUT_MS;
        struct anvil_err err = ANVIL_ERR_INIT;
        _cleanup_free_ uint8_t *frame = NULL;
        size_t len;
        bool shut;
        if (build(argv[2], &frame, &len, &shut, &err) < 0)
                return fail("%s", err.msg);
        _cleanup_close_ int fd = connect_to(argv[1], &err);
        if (fd < 0)
                return fail("%s", err.msg);
        int r = send_all(fd, frame, len, &err);
        if (r < 0 && r != -EPIPE)
                return fail("%s", err.msg);
        if (shut && r == 0 && shutdown(fd, SHUT_WR) < 0)
                return fail("shutdown: %s", strerror(errno));
        return exchange(fd, strcmp(argv[2], "hello") == 0 || strchr(argv[2], ':'));
}
