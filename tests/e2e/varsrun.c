/* varsrun: a run request with variables sent as they are, unchecked (anvilctl checks them
 * first), for the end-to-end tests of the runner's refusals (tests/e2e/t_variables.sh).
 *
 *   varsrun SOCKET TOOL.py VARIABLES_FILE
 *
 * Sends a run_request whose `variables` is the file's bytes (any bytes, as long as the frame
 * can be encoded), then prints one line per frame until the run ends:
 *   event <layer> <kind> op=<op or -> message=<message or ->
 *   error code=<code> field=<field or -> message=<message>
 *   result status=<status> variables=<variables or ->
 * and exits 0 after an error or a result frame; 1 with a one-line reason otherwise. Every frame
 * read back goes through the library's own reader and strict decoder. 60 seconds in all. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "proto/proto.h"

static const char *or_dash(const char *s)
{
        return s ? s : "-";
}

int main(int argc, char **argv)
{
        if (argc != 4) {
                fprintf(stderr, "usage: varsrun SOCKET TOOL.py VARIABLES_FILE\n");
                return 1;
        }
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *src, *vars;
        size_t n_src, n_vars;
        if (fd_read_file(argv[2], PROTO_SOURCE_MAX, &src, &n_src, &err) < 0 ||
            fd_read_file(argv[3], PROTO_FRAME_MAX / 2, &vars, &n_vars, &err) < 0) {
                fprintf(stderr, "varsrun: %s\n", err.msg);
                return 1;
        }
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(argv[1]) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "varsrun: socket path too long\n");
                return 1;
        }
        strcpy(sa.sun_path, argv[1]);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct timeval tv = { .tv_sec = 60 };
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
            connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                fprintf(stderr, "varsrun: cannot connect to %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        struct proto_msg m = { .type = PROTO_RUN_REQUEST };
        m.u.run_request.request_id = "varsrun";
        m.u.run_request.source = (char *)src;
        m.u.run_request.variables = (char *)vars;
        if (proto_write_msg(fd, &m, &err) < 0) {
                fprintf(stderr, "varsrun: cannot send: %s\n", err.msg);
                return 1;
        }
        free(src);
        free(vars);
        struct proto_reader rd;
        proto_reader_init(&rd, PROTO_FRAME_MAX);
        int rc = 1;
        for (;;) {
                struct proto_msg in;
                int k = proto_read_msg(fd, &rd, &in, &err);
                if (k <= 0) {
                        fprintf(stderr, "varsrun: %s\n", k == 0 ? "the connection closed before the run ended" : err.msg);
                        break;
                }
                if (in.type == PROTO_RUN_EVENT) {
                        const struct proto_event *e = &in.u.run_event.event;
                        printf("event %s %s op=%s message=%s\n", e->layer, e->kind, or_dash(e->op), or_dash(e->message));
                        proto_msg_free(&in);
                        continue;
                }
                if (in.type == PROTO_ERROR) {
                        printf("error code=%s field=%s message=%s\n", in.u.error.code, or_dash(in.u.error.field),
                               in.u.error.message);
                        rc = 0;
                } else if (in.type == PROTO_RUN_RESULT) {
                        printf("result status=%s variables=%s\n", in.u.run_result.status,
                               or_dash(in.u.run_result.variables));
                        rc = 0;
                } else
                        fprintf(stderr, "varsrun: unexpected %s\n", proto_type_name(in.type));
                proto_msg_free(&in);
                break;
        }
        proto_reader_free(&rd);
        return rc;
}
