/* runspec: the runner's side of the supervisor, for tests that run anvil-py outside a jail.
 *
 *   runspec encode TOOL.py [VARIABLES]
 *                            writes a run_spec frame for TOOL.py on stdout (the jail's roots,
 *                            the Python layers on; the file VARIABLES's bytes as its
 *                            variables, unchecked), as the supervisor sends it on the runner's
 *                            stdin
 *   runspec events           reads runner_event frames on stdin until it ends and prints each
 *                            as "<layer> <kind>: <message>"
 * Exit 0, or 1 with a one-line reason on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fd.h"
#include "proto/proto.h"

int main(int argc, char **argv)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        if ((argc == 3 || argc == 4) && strcmp(argv[1], "encode") == 0) {
                uint8_t *src, *vars = NULL;
                size_t len, n_vars;
                if (fd_read_file(argv[2], PROTO_SOURCE_MAX, &src, &len, &err) < 0 ||
                    (argc == 4 && fd_read_file(argv[3], PROTO_VARIABLES_MAX, &vars, &n_vars, &err) < 0)) {
                        fprintf(stderr, "runspec: %s\n", err.msg);
                        return 1;
                }
                char *reads[] = { "/work/inputs", "/work/artifacts" }, *writes[] = { "/work/artifacts" };
                struct proto_msg m = { .type = PROTO_RUN_SPEC };
                m.u.run_spec.source = (char *)src;
                m.u.run_spec.workdir = "/work";
                m.u.run_spec.read_roots = (struct proto_strv){ reads, 2 };
                m.u.run_spec.write_roots = (struct proto_strv){ writes, 1 };
                m.u.run_spec.scratch = "/tmp";
                m.u.run_spec.variables = (char *)vars;
                int r = proto_write_msg(1, &m, &err);
                free(src);
                free(vars);
                if (r < 0) {
                        fprintf(stderr, "runspec: %s\n", err.msg);
                        return 1;
                }
                return 0;
        }
        if (argc == 2 && strcmp(argv[1], "events") == 0) {
                struct proto_reader rd;
                proto_reader_init(&rd, PROTO_FRAME_MAX);
                for (;;) {
                        struct proto_msg m;
                        int k = proto_read_msg(0, &rd, &m, &err);
                        if (k == 0) {
                                proto_reader_free(&rd); /* LeakSanitizer checks this tool too */
                                return 0;
                        }
                        if (k < 0 || m.type != PROTO_RUNNER_EVENT) {
                                fprintf(stderr, "runspec: %s\n", k < 0 ? err.msg : "not a runner_event");
                                if (k > 0)
                                        proto_msg_free(&m);
                                proto_reader_free(&rd);
                                return 1;
                        }
                        const struct proto_event *e = &m.u.runner_event.event;
                        printf("%s %s: %s\n", e->layer, e->kind, e->message ? e->message : "");
                        proto_msg_free(&m);
                }
        }
        fprintf(stderr, "usage: runspec encode TOOL.py [VARIABLES] | runspec events\n");
        return 1;
}
