/* anvil-broker: the unprivileged daemon between clients and anvil-supervisor (DESIGN §1, §8).
 *
 * Theory of operation
 * -------------------
 * For now the broker is a pass-through: the agent loop, the model client and the HTTP UI
 * come later. It runs as any user ('anvil' under systemd) and never builds a jail: it links
 * only proto/ and lib/ objects, and holds no privilege beyond the right to connect to the
 * supervisor's socket.
 *
 * Processes: one, single-threaded on a libuv loop, plus libuv's thread pool for writing
 * results to disk (store.c).
 *
 * Sockets:
 *   --listen      clients (anvilctl, later the UI); 0660; at most BRO_MAX_CLIENTS at once.
 *                 Every connection is a proto_stream: strict decoding, an error frame and a
 *                 close for a malformed frame, the daemon goes on serving everyone else.
 *   --supervisor  one NEW connection per run_request or probe_request (relay.c), connected
 *                 asynchronously. Requests of one client never share a supervisor connection,
 *                 so every frame that comes back on it belongs to that one request, and
 *                 closing it is how a run is abandoned: the supervisor kills the runs of a
 *                 client that has gone.
 *
 * A request's life (relay.c):
 *   B1  a run_request/probe_request arrives; at most BRO_MAX_INFLIGHT per client ("busy")
 *   B2  uv_pipe_connect to the supervisor; failure -> error "unavailable" to the client
 *   B3  connected: the decoded request is re-encoded and sent (never raw client bytes)
 *   B4  run_event frames are relayed as they come; the first names the run_id, which
 *       lets a later cancel by request_id be forwarded with the run_id the supervisor needs
 *   B5  run_result: the supervisor connection is closed, the result is rendered as JSON and
 *       written to DIR/results/<run_id>.json on the thread pool, then relayed to the client;
 *       probe_result or error: relayed, connection closed
 *   B6  the supervisor connection ends early -> error "supervisor_gone"; a malformed frame
 *       from it -> logged, error "internal" to the client
 *   B7  the client disconnects -> all its supervisor connections are closed
 *
 * Memory: a client is freed in its stream's close callback; a relay once its supervisor
 * connection's close callback has run and no result write is pending (libuv discipline). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/broker.h"
#include "lib/ids.h"
#include "lib/log.h"

/* 128 clients with 8 requests each is over a thousand fds: more than the usual soft limit. */
#define NOFILE_WANTED 4096

static void usage(FILE *f)
{
        fprintf(f, "usage: anvil-broker --supervisor PATH --listen PATH --state-dir DIR\n"
                   "  --supervisor PATH   the supervisor's Unix socket\n"
                   "  --listen PATH       Unix socket for clients (created 0660)\n"
                   "  --state-dir DIR     stored results in DIR/results (created 0750)\n"
                   "  --socket-group GRP  the group that may use the --listen socket (0660)\n"
                   "  --help              this text\n");
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        fprintf(stderr, "anvil-broker: %s (see --help)\n", line);
        return -1;
}

static int check_socket_path(const char *opt, const char *path)
{
        struct sockaddr_un sa;
        if (!*path)
                return bad_usage("%s: the path is empty", opt);
        /* libuv 1.44 silently truncates a longer path to fit sun_path. */
        if (strlen(path) >= sizeof(sa.sun_path))
                return bad_usage("%s: the path is longer than a Unix socket allows (%zu bytes)", opt,
                                 sizeof(sa.sun_path) - 1);
        return 0;
}

static int parse_args(int argc, char **argv, struct bro_config *cfg)
{
        static const struct option opts[] = {
                { "supervisor", required_argument, NULL, 'S' },
                { "listen", required_argument, NULL, 'l' },
                { "state-dir", required_argument, NULL, 's' },
                { "socket-group", required_argument, NULL, 'g' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        opterr = 0; /* our own one-line messages */
        cfg->socket_group = (gid_t)-1;
        int c;
        while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
                switch (c) {
                case 'S':
                        cfg->supervisor_path = optarg;
                        break;
                case 'l':
                        cfg->listen_path = optarg;
                        break;
                case 's':
                        cfg->state_dir = optarg;
                        break;
                case 'g': {
                        struct anvil_err err = ANVIL_ERR_INIT;
                        if (parse_group(optarg, &cfg->socket_group, &err) < 0)
                                return bad_usage("--socket-group: %s", err.msg);
                        break;
                }
                case 'h':
                        usage(stdout);
                        exit(0);
                case ':':
                        return bad_usage("%s needs an argument", argv[optind - 1]);
                default:
                        return bad_usage("unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return bad_usage("unexpected argument '%s'", argv[optind]);
        if (!cfg->supervisor_path)
                return bad_usage("%s is required", "--supervisor");
        if (!cfg->listen_path)
                return bad_usage("%s is required", "--listen");
        if (!cfg->state_dir)
                return bad_usage("%s is required", "--state-dir");
        if (!*cfg->state_dir)
                return bad_usage("%s: the path is empty", "--state-dir");
        if (check_socket_path("--supervisor", cfg->supervisor_path) < 0 ||
            check_socket_path("--listen", cfg->listen_path) < 0)
                return -1;
        if (strcmp(cfg->supervisor_path, cfg->listen_path) == 0)
                return bad_usage("--listen and --supervisor are the same path, %s", cfg->listen_path);
        return 0;
}

static void raise_nofile(void)
{
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= NOFILE_WANTED)
                return;
        rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > NOFILE_WANTED ? NOFILE_WANTED : rl.rlim_max;
        if (want <= rl.rlim_cur)
                return;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_warn("Failed to raise the open file limit to %lu: %s, ignoring", (unsigned long)want,
                         strerror(errno));
}

static void on_signal(uv_signal_t *s, int signum)
{
        struct bro_server *srv = s->data;
        log_info("signal %d: stopping; requests in flight are abandoned", signum);
        bro_server_stop(srv);
        uv_close((uv_handle_t *)&srv->sigterm, NULL);
        uv_close((uv_handle_t *)&srv->sigint, NULL);
        /* The loop ends once every connection is closed and every result write has finished. */
}

int main(int argc, char **argv)
{
        log_set_program("anvil-broker");
        static struct bro_server srv;
        if (parse_args(argc, argv, &srv.cfg) < 0)
                return 2;
        struct anvil_err err = ANVIL_ERR_INIT;
        (void)signal(SIGPIPE, SIG_IGN);
        raise_nofile();
        srv.results_dirfd = -1;
        if (bro_store_init(&srv, &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        srv.loop = uv_default_loop();
        if (bro_server_listen(&srv, &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        int r;
        if ((r = uv_signal_init(srv.loop, &srv.sigterm)) < 0 || (r = uv_signal_init(srv.loop, &srv.sigint)) < 0) {
                log_error("Failed to watch signals: %s", uv_strerror(r));
                (void)unlink(srv.cfg.listen_path);
                return 1;
        }
        srv.sigterm.data = srv.sigint.data = &srv;
        (void)uv_signal_start(&srv.sigterm, on_signal, SIGTERM);
        (void)uv_signal_start(&srv.sigint, on_signal, SIGINT);
        log_info("listening on %s (supervisor %s, results in %s)", srv.cfg.listen_path, srv.cfg.supervisor_path,
                 srv.results_dir);
        uv_run(srv.loop, UV_RUN_DEFAULT);
        (void)unlink(srv.cfg.listen_path);
        if (srv.results_dirfd >= 0)
                (void)close(srv.results_dirfd);
        (void)uv_loop_close(srv.loop);
        log_info("stopped");
        return 0;
}
