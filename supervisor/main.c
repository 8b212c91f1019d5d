/* anvil-supervisor: builds jails and runs tools in them (DESIGN §1, §4).
 *
 * Theory of operation
 * -------------------
 * Processes: the supervisor (root, started by systemd, never setuid); per run, the jail's
 * pid 1 (anvil-init, a small static program, jail/pid1.c) and the runner
 * (anvil-py, runner/main.c) with whatever the tool starts.
 *
 * Privilege: root in the initial namespaces, for: creating user namespaces with a uid map to
 * a per-run host uid (uid_base + 1 + slot, never shared by two live runs), mounting each
 * run's artifacts tmpfs, cloning the mount of each input a client passed as an fd (open_tree on
 * the fd: no path a client names is ever opened), creating cgroups; and for the kernel's audit (kaudit.c): reading the
 * audit multicast group (CAP_AUDIT_READ), the drain marker (CAP_AUDIT_WRITE), and, only with
 * --enable-kernel-audit, switching audit on (CAP_AUDIT_CONTROL). After start-up it keeps only
 * a named set (privilege.c: each capability with why, the unit's CapabilityBoundingSet=),
 * under no_new_privs; every child it executes has its signals reset first (lib/proc.c), and
 * run directories are removed by descriptor (lib/fd.c). No Python, no libcurl, no
 * JSON here: clients' frames are decoded by the strict msgpack decoder (proto/) and re-checked
 * (policy/limits.c); audit records by the strict parser of policy/kaudit.c.
 *
 * fds of a run: stdin (the run spec, written then closed), stdout, stderr, fd 3 (events),
 * all pipes; a SOCK_SEQPACKET sync socket to pid 1; a pidfd for pid 1. Shared by all runs:
 * two NETLINK_AUDIT sockets, one for requests, one on the multicast group (kaudit.c).
 *
 * Synchronisation points (the child's steps C*, pid 1's P*, the runner's R* are listed in
 * jail/contain.c, jail/pid1.c and runner/main.c):
 *   S0  a jail child is cloned (C1) with its uid/gid maps and moved into a cgroup of its
 *       own, ahead of time (a spare, pool.c) or when the run starts (the cold path, the
 *       cgroup attach then on the thread pool, in parallel with S1-S3)
 *   S1  the run's directory (first, marked in flight: rundir.c), the cgroup limits, the
 *       artifacts tmpfs, pipes, handles                                     run.c run_spawn.
 *       A failure before GO ends the run at once: the child discarded, the run directory
 *       removed, an error frame to the client (a full state directory: "unavailable")
 *   S2  GO with the run's paths, rlimits and its four fds, then INPUTS with the input trees
 *       cloned from a client's fds (rundir.c), if any  ->  C5 waits for them
 *   S3  child: C4-C11, ends in the exec of pid 1; an error is an ERROR record; at C10 a
 *       LANDLOCK record says which Landlock ABI is in force (none, on a kernel without it)
 *   S4  pid 1: READY (P2)  ->  the supervisor verifies pid 1 from /proc (jail/verify.c):
 *       namespaces differ from ours, capabilities all zero, no_new_privs, uid, rlimits,
 *       cgroup membership and its limits read back (jail/cgroup.c); and that the child
 *       applied the Landlock ABI the kernel has (kaudit.c); only then GO. A failed check
 *       refuses the run: no tool code ever ran.
 *   S5  pid 1 forks and execs the runner (P3); EXEC_OK (P4)
 *   S6  the runner reads the spec (R1), starts its interpreter (R4), checks Landlock is
 *       enforced (R6), sends events on fd 3 (R6-R10). Meanwhile the kernel's audit records
 *       of Landlock's denials arrive on the multicast group and become the run's events
 *       (kaudit.c)
 *   S6a before it reads a byte of the request's (the variables, the source for the
 *       pre-check: R6a, R6b) the runner loads its seccomp filter and sends the listener to
 *       pid 1, which passes it on as NOTIFY (SCM_RIGHTS) on the sync socket; the supervisor
 *       checks the filter in the runner's /proc status, watches the listener, records event
 *       "seccomp_verified" and answers NOTIFY_OK; only then does the runner go on, its first
 *       event "in_force". From then on every refused call waits in the kernel until notify.c
 *       has recorded it and answered EPERM (a non-native ABI's call: recorded, and the run
 *       killed)
 *   S7  wall-clock timer and the 20 ms memory sampler may kill pid 1 (SIGKILL by pidfd):
 *       the kernel then kills every process of the pid namespace
 *   S8  pid 1 reports EXIT with the runner's wait status and rusage (P5) and exits
 *   S9  the pidfd turns readable: reaped; stdout, stderr and events reach end of file; then
 *       a marker sent through the kernel's audit queue comes back: every record of the run's
 *       denials has been read (at most 1 s is waited)
 *   S10 artifacts copied out of the tmpfs, on the thread pool (their sha256 is the broker's)
 *   S11 the cgroup's figures read (the kernel's peak, OOM kills, pids, throttling), then
 *       run_result (or an error frame "sandbox_failed": the sandbox's failure is never
 *       reported as the tool's) to the client; just before it, the run is no longer marked
 *       in flight
 *   S12 cgroup removed (EBUSY retried, a failure logged), slot freed and with it the run's
 *       place among --max-runs, handles closed, old run directories pruned
 *
 * Admission: a run holds its place among --max-runs from S1 until its slot is free again
 * (S12, after the teardown on the thread pool), so a run admitted always finds a slot; past
 * that, a client gets "busy". Slots are max-runs + spares + warm: each spare and each warm
 * jail (warm.c) holds one too; a warm jail takes a place among --max-runs only once a run
 * takes it.
 *
 * If the supervisor dies (SIGKILL, a crash), every jail dies with it, by two independent
 * means, each enough alone:
 *   - the parent-death signal (SIGKILL), armed in C2 and again after each change of
 *     credentials, which clears it (C4; C11, after C9 and C10), each time with the
 *     supervisor checked to be alive through its pidfd (it may have died before the re-arm);
 *     pid 1 keeps it across its exec, and the pid namespace ends with pid 1 (direct: the
 *     runner has its own from pid 1, P3);
 *   - pid 1 watches the sync socket (P4a, P5): the supervisor's end closes with it, and
 *     pid 1 then kills the runner and exits. A child still being built reads the same
 *     socket (C3, C5) and exits at its end.
 * A test build can switch off either (--test-no-pdeathsig, --test-no-sync-watch). A new
 * supervisor on the same state directory sweeps at start-up the cgroups left behind and the
 * run directories of runs that never finished (rundir.c: each is marked in flight from
 * before its directory exists until its result is out). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/config.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/startup.h"
#include "policy/limits.h"
#include "policy/reasons.h"
#include "supervisor/supervisor.h"

#if defined(ANVIL_TEST_BUILD) && !defined(__SANITIZE_ADDRESS__)
/* A test build's guard: the jail's child allocates nothing between its clone and its exec
 * (jail/contain.c, step_wait_go: a lock held by a pool thread at the clone would never be
 * released). malloc, calloc and realloc are the supervisor's own here, which glibc's functions
 * and every library call too; in the child (jail_child_sync set) each fails the run, so every
 * end-to-end test of a test build checks the rule. Not with ASan, whose allocator is its own. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static void child_allocated(void)
{
        const int *sync = jail_child_sync;
        if (sync) {
                jail_sync_send(*sync, JAIL_MSG_ERROR, 0,
                               "The jail's child allocated memory before exec (a test build's guard)");
                _exit(127);
        }
}

void *malloc(size_t n)
{
        child_allocated();
        return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
        child_allocated();
        return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
        child_allocated();
        return __libc_realloc(p, n);
}
#endif

/* Where `make install` puts the runner and pid 1, seen from where it puts this binary (the
 * Makefile's LIBEXECDIR relative to its SBINDIR: /usr/sbin -> /usr/lib/anvil). */
#ifndef ANVIL_LIBEXEC_REL
#define ANVIL_LIBEXEC_REL "../lib/anvil"
#endif

/* The jail's uid must reach what is bound in: every directory above it searchable by others. */
static int check_reachable(const char *path, struct anvil_err *err)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s", path);
        for (char *slash = strrchr(p, '/'); slash && slash != p; slash = strrchr(p, '/')) {
                *slash = 0;
                struct stat st;
                if (stat(p, &st) < 0)
                        return anvil_err_sys(err, errno, "Failed to stat %s", p);
                if (!(st.st_mode & S_IXOTH))
                        return anvil_err_set(err, EACCES,
                                             "%s is not searchable by other users, so jails cannot reach %s below it",
                                             p, path);
        }
        return 0;
}

static int setup_state(struct sup_server *srv, struct anvil_err *err)
{
        const char *sd = srv->cfg.state_dir;
        if (mkdir(sd, 0711) < 0 && errno != EEXIST)
                return anvil_err_sys(err, errno, "Failed to create %s", sd);
        struct stat st;
        if (lstat(sd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                return anvil_err_set(err, EPERM, "%s must be a directory owned by %s", sd,
                                     srv->cfg.rootless ? "this user" : "root");
        if (chmod(sd, 0711) < 0)
                return anvil_err_sys(err, errno, "Failed to chmod %s", sd);
        char real[PATH_MAX];
        if (!realpath(sd, real))
                return anvil_err_sys(err, errno, "Failed to resolve %s", sd);
        if (snprintf(srv->runs_dir, sizeof(srv->runs_dir), "%s/runs", real) >= (int)sizeof(srv->runs_dir))
                return anvil_err_set(err, ENAMETOOLONG, "State directory path is too long");
        if (mkdir(srv->runs_dir, 0711) < 0 && errno != EEXIST)
                return anvil_err_sys(err, errno, "Failed to create %s", srv->runs_dir);
        if (chmod(srv->runs_dir, 0711) < 0)
                return anvil_err_sys(err, errno, "Failed to chmod %s", srv->runs_dir);
        /* Every jail mounts its root on this one empty directory, each in its own mount
         * namespace: nothing is ever mounted on it on the host. */
        if (snprintf(srv->jail_root, sizeof(srv->jail_root), "%s/jailroot", real) >= (int)sizeof(srv->jail_root))
                return anvil_err_set(err, ENAMETOOLONG, "State directory path is too long");
        if (mkdir(srv->jail_root, 0755) < 0 && errno != EEXIST)
                return anvil_err_sys(err, errno, "Failed to create %s", srv->jail_root);
        return check_reachable(srv->runs_dir, err);
}

/* The runner and pid 1 are copied into the state directory: jails reach them there whatever
 * the permissions of the directory they were built in (a checkout under /root, say), and a
 * rebuild of the checkout never changes a binary under a live supervisor. `path` is the
 * source and becomes the installed copy. */
static int install_binary(struct sup_server *srv, const char *name, char *path, size_t size, struct anvil_err *err)
{
        char dir[PATH_MAX], tmp[PATH_MAX + 32], dst[PATH_MAX + 32];
        if (snprintf(dir, sizeof(dir), "%s/bin", srv->cfg.state_dir) >= (int)sizeof(dir))
                return anvil_err_set(err, ENAMETOOLONG, "State directory path is too long");
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return anvil_err_sys(err, errno, "Failed to create %s", dir);
        snprintf(tmp, sizeof(tmp), "%s/.%s.new", dir, name);
        snprintf(dst, sizeof(dst), "%s/%s", dir, name);
        uint8_t *data;
        size_t len;
        int r = fd_read_file(path, 64u << 20, &data, &len, err);
        if (r < 0)
                return r;
        (void)unlink(tmp);
        r = fd_write_file_at(AT_FDCWD, tmp, data, len, 0755, err);
        free(data);
        if (r < 0)
                return r;
        if (rename(tmp, dst) < 0)
                return anvil_err_sys(err, errno, "Failed to install %s", dst);
        if (!realpath(dst, path) || strlen(path) >= size)
                return anvil_err_sys(err, errno, "Failed to resolve %s", dst);
        return check_reachable(path, err);
}

/* A program that ships beside this one (a build tree), else where `make install` puts it:
 * ANVIL_LIBEXEC_REL (the Makefile's LIBEXECDIR as seen from its SBINDIR, compiled in) from
 * this binary's directory, so that a tree installed under any PREFIX or DESTDIR finds its
 * own; unless its path was given. */
static int beside_me(const char *name, char *path, size_t size, struct anvil_err *err)
{
        if (!path[0]) {
                char self[PATH_MAX];
                ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
                if (n < 0)
                        return anvil_err_sys(err, errno, "Failed to find this binary");
                self[n] = 0;
                char *dir = dirname(self);
                snprintf(path, size, "%s/%s", dir, name);
                if (access(path, X_OK) < 0 && errno == ENOENT) {
                        /* Installed, it is in LIBEXECDIR (relative to this binary's directory):
                         * where that directory exists, path names the place there, found or
                         * not (the start-up check names it); else (a build tree) path keeps
                         * the place beside this binary. */
                        char libexec[PATH_MAX + 64], resolved[PATH_MAX];
                        snprintf(libexec, sizeof(libexec), "%s/%s", dir, ANVIL_LIBEXEC_REL);
                        if (!realpath(libexec, resolved))
                                return anvil_err_sys(err, ENOENT, "%s is neither beside %s/ nor in %s", name, dir, libexec);
                        if ((size_t)snprintf(path, size, "%s/%s", resolved, name) >= size)
                                return anvil_err_sys(err, ENAMETOOLONG, "%s/%s", resolved, name);
                }
        }
        if (access(path, X_OK) < 0)
                return anvil_err_sys(err, errno, "%s", path);
        return 0;
}

static unsigned long long file_size(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0;
}

/* Before anything is made (lib/startup.c; each failure one line of POL_STARTUP, naming the
 * path and the fix): the runner and pid 1, then the socket's directory and what is at its
 * path (it is bound only after the probe, seconds later: a missing directory would otherwise
 * stop the start after the state directory is made), then the state directory, probed for
 * what runs need of it: writable, room for the copies of the two programs (and a run's
 * files), files given to the jails' uids (a root supervisor's run directories are theirs), and
 * executable (jails execute the runner and pid 1 from DIR/bin). nosuid and nodev do not
 * matter: nothing there is setuid or a device, and the jail's root is a tmpfs of its own. */
static int check_startup(struct sup_server *srv, int found_runner, int found_init, const char *init_path)
{
        char msg[STARTUP_MSG_MAX], hint[160];
        if (startup_program_check("the runner anvil-py", srv->cfg.runner_path, found_runner,
                                  POL_STARTUP_MSG(hint, sizeof(hint), PROGRAM_HINT_RUNNER), msg, sizeof(msg)) < 0 ||
            startup_program_check("the jail's pid 1 anvil-init", init_path, found_init,
                                  POL_STARTUP_MSG(hint, sizeof(hint), PROGRAM_HINT_INIT), msg, sizeof(msg)) < 0) {
                log_error("%s", msg);
                return -1;
        }
        int r = startup_socket_check("--listen", srv->cfg.listen_path, msg, sizeof(msg));
        if (r < 0) {
                log_error("%s", msg);
                return -1;
        }
        if (r > 0)
                log_info("%s", msg);
        unsigned long long need = file_size(srv->cfg.runner_path) + file_size(init_path) + (1ull << 20);
        if (startup_state_check(srv->cfg.state_dir, 0711, srv->cfg.rootless ? (uid_t)-1 : srv->cfg.uid_base, true,
                                need, msg, sizeof(msg)) < 0) {
                log_error("%s", msg);
                return -1;
        }
        return 0;
}

static void on_signal(uv_signal_t *s, int signum)
{
        struct sup_server *srv = s->data;
        log_info("signal %d: stopping; live runs are killed and their results sent", signum);
        srv->stopping = true;
        sup_runs_kill_all(srv);
        sup_pool_stop(srv);
        sup_warm_stop(srv);
        sup_kaudit_stop(srv);
        if (!uv_is_closing((uv_handle_t *)&srv->listener))
                uv_close((uv_handle_t *)&srv->listener, NULL);
        sup_server_stop_when_idle(srv);
        uv_close((uv_handle_t *)&srv->sigterm, NULL);
        uv_close((uv_handle_t *)&srv->sigint, NULL);
        /* The loop ends once every run has finished and every handle is closed. */
}

static int exit_code;

/* Each connection holds an fd, and each run (or spare) about a dozen: the pipes' four ends,
 * the sync socket, the pidfd, the four namespaces held, the artifacts mount, the seccomp
 * listener. With the defaults (32 runs, 2 spares, 512 connections) that is over the usual soft
 * limit of 1024, so it is raised to what the configuration can need, within the hard limit.
 * Jails have their own (JAIL_NOFILE, set at C7), which a jail cannot raise past the hard
 * limit it inherits: under a lower one every run would fail, so the supervisor does not start. */
static int raise_nofile(const struct sup_config *cfg)
{
        rlim_t want = (rlim_t)cfg->bounds.max_conns + 16 * (rlim_t)(cfg->max_runs + cfg->spares) + 64;
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return 0;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < JAIL_NOFILE) {
                log_error("the open file limit's hard limit is %lu, under the %d each jail's tool is given: raise it "
                          "(ulimit -Hn, or LimitNOFILE= in the unit)",
                          (unsigned long)rl.rlim_max, JAIL_NOFILE);
                return -1;
        }
        if (rl.rlim_cur >= want)
                return 0;
        rlim_t got = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
        if (got > rl.rlim_cur) {
                rl.rlim_cur = got;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
                        log_warn("Failed to raise the open file limit to %lu: %s, ignoring", (unsigned long)got,
                                 strerror(errno));
                        return 0;
                }
        }
        if (got < want)
                log_warn("the open file limit is %lu (its hard limit), under the %lu that --max-conns %u and "
                         "--max-runs %u can need: connections and runs past it fail",
                         (unsigned long)rl.rlim_cur, (unsigned long)want, cfg->bounds.max_conns, cfg->max_runs);
        return 0;
}

static const char *userns_refused(void)
{
        static char why[128];
        pid_t p = fork();
        if (p == 0)
                _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff));
        int status = 0;
        if (p < 0 || waitpid(p, &status, 0) < 0) {
                snprintf(why, sizeof(why), "cannot test: %s", strerror(errno));
                return why;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return "";
        snprintf(why, sizeof(why), "unshare(CLONE_NEWUSER): %s",
                 WIFEXITED(status) ? strerror(WEXITSTATUS(status)) : "the test child died");
        return why;
}

static void on_probed(struct sup_server *srv)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        if (srv->stopping)
                return;
        if (sup_server_listen(srv, &err) < 0) {
                log_error("%s", err.msg);
                exit_code = 1;
                sup_runs_kill_all(srv);
                uv_stop(srv->loop);
                return;
        }
        log_info("listening on %s (state in %s, runner %s; isolation tier %s)", srv->cfg.listen_path,
                 srv->cfg.state_dir, srv->cfg.runner_path, srv->tier);
        sup_warm_kick(srv); /* warm jails are built with what the probe found (the tier) */
}

int main(int argc, char **argv)
{
        log_set_program("anvil-supervisor");
        static struct sup_server srv;
        if (sup_parse_args(argc, argv, &srv.cfg) < 0)
                return 2;
        if (srv.cfg.config_path)
                log_info("configuration: %s", srv.cfg.config_path);
        else
                log_info("configuration: none (%s does not exist)", ANVIL_CONFIG_DEFAULT);
        struct anvil_err err = ANVIL_ERR_INIT;
        srv.cfg.rootless = geteuid() != 0;
        if (srv.cfg.rootless)
                log_warn("rootless: running as uid %u, not root: every jail maps its uid %d to this one (runs share "
                         "a host uid), cgroups only where delegated, the kernel's audit unreadable",
                         (unsigned)geteuid(), JAIL_UID);
        (void)signal(SIGPIPE, SIG_IGN);
        if (raise_nofile(&srv.cfg) < 0)
                return 1;
        umask(022);
        /* Root's supplementary groups would otherwise be inherited, unmapped, by every jail. */
        if (!srv.cfg.rootless && setgroups(0, NULL) < 0) {
                log_error("Failed to drop supplementary groups: %s", strerror(errno));
                return 1;
        }
        char init_path[PATH_MAX] = "";
        int found_runner = beside_me("anvil-py", srv.cfg.runner_path, sizeof(srv.cfg.runner_path), &err);
        int found_init = beside_me("anvil-init", init_path, sizeof(init_path), &err);
        if (check_startup(&srv, found_runner, found_init, init_path) < 0)
                return 1;
        if (setup_state(&srv, &err) < 0 ||
            install_binary(&srv, "anvil-py", srv.cfg.runner_path, sizeof(srv.cfg.runner_path), &err) < 0 ||
            install_binary(&srv, "anvil-init", init_path, sizeof(init_path), &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        srv.init_exe_fd = open(init_path, O_RDONLY | O_CLOEXEC);
        if (srv.init_exe_fd < 0) {
                log_error("Failed to open %s: %s", init_path, strerror(errno));
                return 1;
        }
        /* Every jail child holds it until its pid 1 is executed (C2-C11): readable once we
         * have exited, it tells a child that re-armed its parent-death signal too late. */
        srv.self_pidfd = pidfd_open(getpid(), 0);
        if (srv.self_pidfd < 0) {
                log_error("Failed to open a pidfd for this process: %s", strerror(errno));
                return 1;
        }
        unsigned unfinished = 0;
        if (sup_rundir_sweep(&srv, &unfinished, &err) < 0)
                log_warn("%s", err.msg);
        if (unfinished)
                log_info("removed %u run directories a previous supervisor left unfinished", unfinished);
        /* One cgroup base per state directory: stable across restarts (so a new supervisor
         * sweeps what its predecessor left), distinct for two supervisors on one host. */
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
        for (const char *c = srv.runs_dir; *c; c++)
                h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
        char instance[32];
        snprintf(instance, sizeof(instance), "anvil-%016llx", (unsigned long long)h);
        if (srv.cfg.no_cgroup)
                snprintf(srv.cg.description, sizeof(srv.cg.description), "no cgroup (--cgroup none)");
        else {
                struct jail_cgroup_opts o = { .cpu_quota_pct = srv.cfg.cpu_quota_pct,
                                              .assume_delegated = srv.cfg.cgroup_delegated };
                jail_cgroup_sys_init(&srv.cg, instance, &o);
                if (srv.cg.mode == JAIL_CG_NONE)
                        snprintf(srv.cg.description, sizeof(srv.cg.description), "no cgroup");
        }
        if (srv.cg.notes[0])
                log_info("cgroups: %s", srv.cg.notes);
        if (srv.cfg.cpu_quota_given && srv.cfg.cpu_quota_pct && !srv.cg.cpu_quota_us)
                log_warn("--cpu-quota %u is not in force: no usable cpu controller (see above); runs report no quota",
                         srv.cfg.cpu_quota_pct);
        unsigned swept = 0;
        if (jail_cgroup_sys_sweep(&srv.cg, &swept, &err) < 0)
                log_warn("%s", err.msg);
        if (swept)
                log_info("removed %u cgroups a previous supervisor left behind", swept);
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++)
                if (srv.cg.base[c][0])
                        log_info("cgroup base (%s): %s", jail_cg_ctl_name[c], srv.cg.base[c]);
        if (srv.cg.leaf[0])
                log_info("moved into %s: runs' cgroups are created beside it", srv.cg.leaf);
        log_info("%s, as %s", srv.cg.description, instance);
        if (sup_fontcache_build(&srv, &err) < 0)
                log_warn("matplotlib's font cache is not available to jails: %s", err.msg);
        if (sup_prewarm_platform(&srv, &err) < 0)
                log_warn("platform's processor is not pre-warmed (pandas' import will try `uname -p` and be refused): %s",
                         err.msg);
        /* The thread pool's work waits on the kernel more than it computes (cgroup attaches and
         * teardowns wait for RCU grace periods): enough threads that a run's artifact
         * collection never queues behind them. Read by libuv at its first use. */
        (void)setenv("UV_THREADPOOL_SIZE", "16", 0);
        srv.loop = uv_default_loop();
        const char *no_userns = srv.cfg.test_no_userns ? "test mode (--test-no-userns)" : userns_refused();
        srv.cfg.direct = no_userns[0] != 0;
        snprintf(srv.no_userns, sizeof(srv.no_userns), "%s", no_userns);
        if (srv.cfg.direct)
                log_warn("no user namespace can be made here (%s): jails run on the host's paths, held by Landlock "
                         "and seccomp alone (the landlock+seccomp rung)",
                         no_userns);
        srv.jail = (struct jail_static){
                .rootless = srv.cfg.rootless,
                .direct = srv.cfg.direct,
                .root_dir = srv.jail_root,
                .runner_path = srv.cfg.runner_path,
                .font_cache_dir = srv.font_cache_dir[0] ? srv.font_cache_dir : NULL,
                .init_exe_fd = srv.init_exe_fd,
                .sync_fd = -1,
                .parent_pidfd = srv.self_pidfd,
                .env = sup_jail_env,
                .landlock_abi = jail_landlock_abi(),
                .test_skip_landlock = srv.cfg.test_skip_landlock,
                .test_no_pdeathsig = srv.cfg.test_no_pdeathsig,
                .test_no_sync_watch = srv.cfg.test_no_sync_watch,
                .test_no_signal_reset = srv.cfg.test_no_signal_reset,
                .test_child_alloc = srv.cfg.test_child_alloc,
                .test_child_fail_before_go = srv.cfg.test_child_fail_before_go,
        };
        if (srv.jail.landlock_abi > 0) {
                char ll[96];
                jail_landlock_describe(srv.jail.landlock_abi, ll, sizeof(ll));
                log_info("%s, in every jail", ll);
        } else
                log_warn("landlock: this kernel has none (ABI 0): jails run without it, and their results say so");
        /* Before any jail is cloned: it decides whether jails ask for their denials logged. */
        if (sup_kaudit_start(&srv, srv.cfg.enable_kernel_audit, &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        if (srv.cfg.test_skip_seccomp)
                log_warn("TEST MODE: runners load no seccomp filter");
        if (srv.cfg.test_machine_idle)
                log_warn("TEST MODE: the warm pool counts no other load on the machine");
        if (srv.cfg.test_no_exit_flush)
                log_warn("TEST MODE: runners end without joining threads, atexit or flushing files");
        if (srv.cfg.test_skip_landlock)
                log_warn("TEST MODE: jails apply no Landlock; runners are told to expect it and must refuse");
        if (srv.cfg.test_no_pdeathsig)
                log_warn("TEST MODE: jails set no parent-death signal");
        if (srv.cfg.test_no_sync_watch)
                log_warn("TEST MODE: jails' pid 1 does not watch its sync socket");
        if (srv.cfg.test_no_signal_reset)
                log_warn("TEST MODE: children execute with the supervisor's signal dispositions and mask");
        /* Start-up's privileged work is done (the open-file limit, the audit group joined):
         * from here on, the named set (privilege.c). Before the pool and the probe: no
         * thread yet, and the probe's jails are built as every run's are. */
        sup_privilege_describe(&srv);
        if (sup_privilege_drop(&srv, &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        sup_pool_start(&srv);
        sup_warm_start(&srv);
        uv_signal_init(srv.loop, &srv.sigterm);
        uv_signal_init(srv.loop, &srv.sigint);
        srv.sigterm.data = srv.sigint.data = &srv;
        uv_signal_start(&srv.sigterm, on_signal, SIGTERM);
        uv_signal_start(&srv.sigint, on_signal, SIGINT);
        if (srv.cfg.test_no_python_layers)
                log_warn("TEST MODE: the Python layers (pre-check, audit hook) are off in every run");
        /* The probe first (DESIGN §6): clients are served once what is in force is known. */
        if (sup_probe_startup(&srv, on_probed) < 0) {
                log_error("Failed to start the isolation probe: out of memory");
                return 1;
        }
        uv_run(srv.loop, UV_RUN_DEFAULT);
        sup_kaudit_free(&srv);
        if (exit_code)
                return exit_code;
        jail_cgroup_sys_fini(&srv.cg);
        (void)unlink(srv.cfg.listen_path);
        log_info("stopped");
        return 0;
}
