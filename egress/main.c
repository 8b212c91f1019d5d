/* anvil-egress: the egress proxy (rules.h says what it is, docs/egress.md how it is used).
 *
 * Theory of operation. One process, one libuv loop, as the unprivileged user anvil-egress (the
 * unit gives it no capability; it needs none: it binds Unix sockets in its own runtime
 * directory and opens TCP connections out). It holds no state on disk and reads no
 * configuration file: every rule comes with the run it is for, over the control socket
 * (control.c), from whoever may connect there (--allow-uid; the broker, in the design of
 * docs/egress.md). So a restart, or a crash, leaves no run open and nothing approved: every
 * run's socket is gone with the process, and a client in a jail sees its connection end or
 * refused, never a path out (fail closed). SIGHUP reloads nothing, for the same reason.
 *   E1  start: the run directory made (0700) and the control socket bound (0660)
 *   E2  a control connection opens a run: its rules parsed, its socket bound, an O_PATH fd
 *       of it sent back
 *   E3  a client connects to a run's socket: its request checked, resolved and connected
 *       (proxy.c); each decision sent as an event to whoever opened the run
 *   E4  the run is closed (asked, or its control connection ended): connections cut, the
 *       socket unlinked, "closed" with the counts
 *   E5  SIGTERM/SIGINT: every run closed as in E4, then exit 0 */
#include "egress/egress.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/err.h"
#include "lib/log.h"

#define EGR_CONTROL_DEFAULT "/run/anvil-egress/control.sock"
#define EGR_RUN_DIR_DEFAULT "/run/anvil-egress/runs"
#define EGR_MAX_RUNS_DEFAULT 64

struct egr_daemon egr_d = {
        .max_runs = EGR_MAX_RUNS_DEFAULT,
        .defaults = { .conns = 8, .bytes = 64ull << 20, .head_s = 10, .idle_s = 30, .lifetime_s = 300 },
        .maxima = { .conns = 64, .bytes = 1ull << 30, .head_s = 60, .idle_s = 600, .lifetime_s = 3600 },
};

static uv_signal_t sig_term, sig_int, sig_hup;

static void usage(FILE *f)
{
        fprintf(f,
                "usage: anvil-egress [--control PATH] [--run-dir DIR] [--allow-uid USER]...\n"
                "The egress proxy: HTTP forward proxy and CONNECT, each run's requests checked against\n"
                "the hosts approved for it (docs/egress.md).\n"
                "  --control PATH    the control socket, SOCK_SEQPACKET, 0660 (default " EGR_CONTROL_DEFAULT ")\n"
                "  --run-dir DIR     where each run's socket is bound, made 0700 (default " EGR_RUN_DIR_DEFAULT ")\n"
                "  --allow-uid USER  a uid or user name that may use the control socket, besides root and\n"
                "                    the daemon's own (up to 16)\n"
                "  --max-runs N      runs open at once, 1..4096 (%u)\n"
                "A run's limits, unless it asks for fewer (at most): connections at once %u (%u),\n"
                "bytes both ways %llu (%llu), request head %u s (%u), idle %u s (%u), one connection's\n"
                "life %u s (%u).\n"
                "  --help            this text\n"
                "  --version         print the version (" ANVIL_VERSION ") and exit\n",
                EGR_MAX_RUNS_DEFAULT, egr_d.defaults.conns, egr_d.maxima.conns,
                (unsigned long long)egr_d.defaults.bytes, (unsigned long long)egr_d.maxima.bytes, egr_d.defaults.head_s,
                egr_d.maxima.head_s, egr_d.defaults.idle_s, egr_d.maxima.idle_s, egr_d.defaults.lifetime_s,
                egr_d.maxima.lifetime_s);
}

static int parse_num(const char *opt, const char *s, unsigned long min, unsigned long max, unsigned *out)
{
        char *end;
        errno = 0;
        unsigned long v = (*s >= '0' && *s <= '9') ? strtoul(s, &end, 10) : 0;
        if (!(*s >= '0' && *s <= '9') || *end || errno || v < min || v > max) {
                fprintf(stderr, "anvil-egress: %s %s: a whole number from %lu to %lu (see --help)\n", opt, s, min, max);
                return -1;
        }
        *out = (unsigned)v;
        return 0;
}

/* --allow-uid: a uid, or a user's name (the unit's "anvil", whatever uid sysusers gave it). */
static int allow_uid(const char *s, unsigned *out)
{
        if (*s >= '0' && *s <= '9')
                return parse_num("--allow-uid", s, 0, 4294967294ul, out);
        struct passwd *pw = getpwnam(s);
        if (!pw) {
                fprintf(stderr, "anvil-egress: --allow-uid %s: no such user (see --help)\n", s);
                return -1;
        }
        *out = (unsigned)pw->pw_uid;
        return 0;
}

/* A run directory of an earlier instance (killed: nothing of it cleaned up) may hold its runs'
 * sockets, which nothing listens on any more: they go, or a new run's name would be taken. */
static int sweep_run_dir(const char *dir)
{
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d)
                return -errno;
        struct dirent *de;
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                if (de->d_type == DT_SOCK && n > 5 && !strcmp(de->d_name + n - 5, ".sock"))
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        }
        return 0;
}

static void on_signal(uv_signal_t *s, int signum)
{
        (void)s;
        if (signum == SIGHUP) {
                log_info("SIGHUP: nothing to reload: each run keeps the rules it was opened with");
                return;
        }
        /* E5 */
        log_info("signal %d: stopping: every run closed, its connections cut", signum);
        egr_ctl_close_all();
        uv_close((uv_handle_t *)&sig_term, NULL);
        uv_close((uv_handle_t *)&sig_int, NULL);
        uv_close((uv_handle_t *)&sig_hup, NULL);
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "control", required_argument, NULL, 'c' },
                { "run-dir", required_argument, NULL, 'r' },
                { "allow-uid", required_argument, NULL, 'u' },
                { "max-runs", required_argument, NULL, 'm' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { NULL, 0, NULL, 0 },
        };
        const char *control = EGR_CONTROL_DEFAULT, *run_dir = EGR_RUN_DIR_DEFAULT;
        unsigned uids[16];
        size_t n_uids = 0;
        int o;
        log_set_program("anvil-egress");
        while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (o) {
                case 'c': control = optarg; break;
                case 'r': run_dir = optarg; break;
                case 'u':
                        if (n_uids == ELEMENTSOF(uids)) {
                                fprintf(stderr, "anvil-egress: --allow-uid: at most 16 (see --help)\n");
                                return 2;
                        }
                        if (allow_uid(optarg, &uids[n_uids++]) < 0)
                                return 2;
                        break;
                case 'm':
                        if (parse_num("--max-runs", optarg, 1, 4096, &egr_d.max_runs) < 0)
                                return 2;
                        break;
                case 'h': usage(stdout); return 0;
                case 'V': printf("anvil-egress " ANVIL_VERSION "\n"); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "anvil-egress: unexpected argument '%s' (see --help)\n", argv[optind]);
                return 2;
        }
        if (strlen(run_dir) > EGR_RUN_DIR_MAX || run_dir[0] != '/') {
                fprintf(stderr, "anvil-egress: --run-dir %s: an absolute path of at most %d bytes\n", run_dir,
                        EGR_RUN_DIR_MAX);
                return 2;
        }
        strcpy(egr_d.run_dir, run_dir);
        (void)signal(SIGPIPE, SIG_IGN);
        umask(0077);
        /* E1 */
        if ((mkdir(run_dir, 0700) < 0 && errno != EEXIST) || (errno = -sweep_run_dir(run_dir)) > 0) {
                log_error("Failed to make --run-dir %s: %s", run_dir, strerror(errno));
                return 1;
        }
        egr_d.loop = uv_default_loop();
        struct anvil_err err = ANVIL_ERR_INIT;
        if (egr_ctl_listen(control, uids, n_uids, &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        (void)uv_signal_init(egr_d.loop, &sig_term);
        (void)uv_signal_init(egr_d.loop, &sig_int);
        (void)uv_signal_init(egr_d.loop, &sig_hup);
        (void)uv_signal_start(&sig_term, on_signal, SIGTERM);
        (void)uv_signal_start(&sig_int, on_signal, SIGINT);
        (void)uv_signal_start(&sig_hup, on_signal, SIGHUP);
        log_info("listening on %s (runs in %s)", control, run_dir);
        (void)uv_run(egr_d.loop, UV_RUN_DEFAULT);
        (void)unlink(control);
        log_info("stopped");
        return 0;
}
