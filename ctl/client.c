/* anvilctl's connection to the broker (ctl/client.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/render.h"
#include "ctl/client.h"
#include "lib/cleanup.h"
#include "lib/err.h"
#include "lib/fd.h"

const char *ctl_prog = "anvilctl";

const char *ctl_socket_path(void)
{
        const char *p = getenv("ANVIL_SOCKET");
        return p && *p ? p : "/run/anvil.sock";
}

/* One line of what ended a request: on stderr, or kept in *failed (the first one only). */
static void say(char **failed, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(char **failed, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        if (!failed) {
                fprintf(stderr, "%s: ", ctl_prog);
                vfprintf(stderr, fmt, ap);
                fputc('\n', stderr);
        } else if (!*failed && vasprintf(failed, fmt, ap) < 0) {
                *failed = NULL;
        }
        va_end(ap);
}

static int connect_broker(char **failed)
{
        const char *path = ctl_socket_path();
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path)) {
                say(failed, "socket path %s is too long", path);
                return -1;
        }
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                say(failed, "cannot reach Anvil at %s: %s (is anvil-broker running? set ANVIL_SOCKET)", path,
                    strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return fd;
}

/* The broker closed the connection while a request was being sent (it refuses a connection
 * over one of its bounds with an error frame, then closes it without reading the request):
 * its error frame, if one came, says why. Returns the exit status. */
static int closed_while_sending(int fd, const char *what, char **failed)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_reader rd;
        struct proto_msg in;
        proto_reader_init(&rd, PROTO_FRAME_MAX);
        int k = proto_read_msg(fd, &rd, &in, &err);
        proto_reader_free(&rd);
        int rc = EXIT_CONNECT;
        if (k == 1 && in.type == PROTO_ERROR) {
                say(failed, "%s: %s", in.u.error.code, in.u.error.message);
                rc = ctl_error_exit(in.u.error.code);
        } else {
                say(failed, "the broker closed the connection before it took %s", what);
        }
        if (k == 1)
                proto_msg_free(&in);
        return rc;
}

/* Connects to the broker and sends m (what names it in the error: "the run"): the connected
 * fd, or minus the exit status once it has said why. SIGPIPE is ignored (main): a broker that
 * closes first is an EPIPE here, never a silent death. */
int ctl_send_request(const struct proto_msg *m, const char *what)
{
        return ctl_send_request_fds(m, what, NULL, 0);
}

/* The fds go with the frame's 4-byte header (SCM_RIGHTS), then the rest of the frame: the
 * receiver attaches them to the frame that begins there (docs/protocol.md). */
static int write_msg_fds(int fd, const struct proto_msg *m, const int *fds, size_t n, struct anvil_err *err)
{
        if (n == 0)
                return proto_write_msg(fd, m, err);
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len;
        int r = proto_encode(m, &buf, &len, err);
        if (r < 0 || (r = fd_send_fds(fd, buf, 4, fds, n, err)) < 0)
                return r;
        return fd_write_all(fd, buf + 4, len - 4, err);
}

int ctl_send_request_fds(const struct proto_msg *m, const char *what, const int *fds, size_t n)
{
        return ctl_send_request_why(m, what, fds, n, NULL);
}

int ctl_send_request_why(const struct proto_msg *m, const char *what, const int *fds, size_t n, char **failed)
{
        int fd = connect_broker(failed);
        if (fd < 0)
                return -EXIT_CONNECT;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (write_msg_fds(fd, m, fds, n, &err) < 0) {
                int rc = EXIT_CONNECT;
                if (err.code == EPIPE || err.code == ECONNRESET)
                        rc = closed_while_sending(fd, what, failed);
                else
                        say(failed, "cannot send %s to %s: %s", what, ctl_socket_path(), err.msg);
                close(fd);
                return -rc;
        }
        return fd;
}

/* The message for a read that ended the connection: the broker's closing it (end of stream,
 * or a reset when it closed with our bytes unread) said as such. */
static void say_read_failed(int k, const struct anvil_err *err, const char *what, char **failed)
{
        if (k == 0 || err->code == ECONNRESET)
                say(failed, "the broker closed the connection before %s ended", what);
        else
                say(failed, "%s", err->msg);
}

int ctl_error_exit(const char *code)
{
        return code && strcmp(code, "sandbox_failed") == 0 ? EXIT_SANDBOX : EXIT_REFUSED;
}

int ctl_follow(int fd, const char *what, ctl_frame_fn on_frame, void *ctx, char **failed)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_reader rd;
        proto_reader_init(&rd, PROTO_FRAME_MAX);
        int rc = EXIT_CONNECT;
        for (;;) {
                struct proto_msg in;
                int k = proto_read_msg(fd, &rd, &in, &err);
                if (k <= 0) {
                        say_read_failed(k, &err, what, failed);
                        break;
                }
                int r;
                /* A supervisor talked to directly sends facts where a broker sends prose. */
                char unhashed[PROTO_PATH_MAX + 128] = "";
                if (bro_render(&in) < 0 || (in.type == PROTO_RUN_RESULT &&
                                            bro_hash_artifacts(&in.u.run_result, unhashed, sizeof(unhashed)) < 0)) {
                        say(failed, "out of memory");
                        proto_msg_free(&in);
                        break;
                }
                if (unhashed[0])
                        fprintf(stderr, "%s: an artifact is not hashed: %s\n", ctl_prog, unhashed);
                if (in.type == PROTO_ERROR) {
                        say(failed, "%s: %s", in.u.error.code, in.u.error.message);
                        rc = ctl_error_exit(in.u.error.code);
                        r = 0;
                } else if ((r = on_frame(fd, &in, ctx, &rc)) < 0) {
                        say(failed, "unexpected %s from the server", proto_type_name(in.type));
                }
                proto_msg_free(&in);
                if (r <= 0)
                        break;
        }
        proto_reader_free(&rd);
        return rc;
}

int ctl_artifact_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        struct ctl_artifact_rx *rx = ctx;
        if (in->type == PROTO_ARTIFACT_DATA) {
                const struct proto_bytes *d = &in->u.artifact_data.data;
                int go = rx->piece(rx, d, rc);
                if (go <= 0)
                        return go;
                SHA256Update(&rx->h, d->data, d->len);
                rx->got += d->len;
                return 1;
        }
        if (in->type != PROTO_ARTIFACT_END)
                return -1;
        rx->end = in->u.artifact_end;
        memset(&in->u, 0, sizeof(in->u)); /* taken */
        rx->ended = true;
        *rc = 0;
        return 0;
}
