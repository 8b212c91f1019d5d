/* Warm jails (DESIGN §4, "Warm jails"), run by the supervisor as root (or rootless, as
 * itself) on its loop.
 *
 * A warm jail is a run of the supervisor's own, begun ahead of time with the server's default
 * shape (default limits, no capabilities, no inputs, an empty source): its child built,
 * pid 1 verified from outside (S4), its runner under its seccomp filter verified from outside
 * (S6a), Landlock seen enforced by the runner (R6), and numpy, pandas and matplotlib
 * imported (R6w); there the runner waits on fd 0 for the run's own half of the spec. Nothing
 * of any run is in it. A run whose request fits the shape takes one (run.c run_take): its
 * limits applied from outside, its tool.py and inputs written into the run's directory,
 * whose inputs/ the jail sees through its bind, its clock started, then the second half
 * sent. It serves that one run and is torn down as every run is.
 *
 * The pool: --warm of them, one built at a time (the imports cost a core for half a second),
 * with no run in flight, or else only while a core is idle: fewer runs in flight than the
 * supervisor has CPUs (warm_cpus: its affinity mask), and fewer tasks runnable on the machine
 * than that, our own look aside (/proc/loadavg's count at this instant: other work on the
 * machine takes cores too; with no run in flight it takes none of a run's, and a busy
 * machine would otherwise never see the pool refilled). The
 * bound: a build is one process on one core; on an idle core it takes no run's CPU; where
 * every core is busy, a build would take a share of a run's core, and waits until one is
 * idle (a build beside a run on a busy two-core machine doubled that run's time). One at a time
 * bounds what a run admitted during a build shares with it to one core's worth, for half a
 * second. Refilled after each take and each end, so a pool taken under a light load is full
 * again before the next request; none built, and one waiting killed per look, while
 * MemAvailable is under --warm-min-available-mb, said once in the log each way. At stop they
 * are killed with every live run (sup_runs_kill_all) and torn down the normal way. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "policy/reasons.h"
#include "supervisor/run.h"
#include "supervisor/supervisor.h"

#define WARM_LOOK_MS 1000
#define WARM_IDLE_MS 20

static unsigned warm_cpus;

/* Tasks runnable on the machine now, this one aside (/proc/loadavg: "0.5 0.4 0.3 R/T last");
 * the CPUs' count if it cannot be read, so that nothing is built on a guess. */
static unsigned runnable_others(const struct sup_server *srv)
{
        if (srv->cfg.test_machine_idle)
                return 0;
        char buf[128];
        unsigned run, total;
        if (fd_read_small("/proc/loadavg", buf, sizeof(buf), FD_READ_PREFIX, NULL) <= 0 ||
            sscanf(buf, "%*s %*s %*s %u/%u", &run, &total) != 2 || run == 0)
                return warm_cpus;
        return run - 1;
}

static bool warm_pending(const struct sup_run *r)
{
        return r->warm == SUP_WARM_BUILDING || r->warm == SUP_WARM_WAITING;
}

/* MemAvailable in MB, or -1 if it cannot be read. */
static int64_t mem_available_mb(void)
{
        char buf[4096];
        if (fd_read_small("/proc/meminfo", buf, sizeof(buf), FD_READ_PREFIX, NULL) <= 0)
                return -1;
        const char *p = strstr(buf, "MemAvailable:");
        unsigned long long kb;
        if (!p || sscanf(p, "MemAvailable: %llu kB", &kb) != 1)
                return -1;
        return (int64_t)(kb / 1024);
}

/* A warm jail that ended before a run took it: never a run's, nothing to report. */
static void warm_done(struct sup_server *srv, const struct proto_run_result *res, const char *failure, void *data)
{
        (void)data;
        if (!srv->stopping)
                log_warn("warm jail: ended before a run took it: %s", failure              ? failure
                                                                      : res && res->killed ? res->killed
                                                                      : res                ? res->status
                                                                                           : "?");
        sup_warm_kick(srv);
}

/* Memory short: nothing built, and the newest waiting jail goes. True if short. */
static bool warm_shrink(struct sup_server *srv, unsigned pending)
{
        int64_t avail = mem_available_mb();
        bool short_now = avail >= 0 && (uint64_t)avail < srv->cfg.warm_min_available_mb;
        if (short_now != srv->warm_short)
                log_info(short_now ? "warm: MemAvailable %" PRId64 " MB is under %" PRIu64
                                     " MB: the pool shrinks (%u warm)"
                                   : "warm: MemAvailable %" PRId64 " MB, not under %" PRIu64
                                     " MB: the pool refills (%u warm)",
                         avail, srv->cfg.warm_min_available_mb, pending);
        srv->warm_short = short_now;
        if (!short_now)
                return false;
        for (struct sup_run *r = srv->runs; r; r = r->next)
                if (warm_pending(r) && r->verdict == SUP_RUN_NO_VERDICT) {
                        log_info("warm: run %s let go (memory is short)", r->id);
                        sup_run_kill_for(r, POL_KILLED_CANCELLED, "supervisor", 0);
                        break;
                }
        return true;
}

static void warm_look(uv_timer_t *t)
{
        struct sup_server *srv = t->data;
        if (srv->stopping || !srv->cfg.warm)
                return;
        unsigned pending = 0, building = 0;
        for (struct sup_run *r = srv->runs; r; r = r->next)
                if (warm_pending(r) && r->verdict == SUP_RUN_NO_VERDICT) {
                        pending++;
                        building += r->warm == SUP_WARM_BUILDING;
                }
        bool want = !warm_shrink(srv, pending) && building == 0 && pending < srv->cfg.warm;
        if (want && srv->n_runs > 0 && (srv->n_runs >= warm_cpus || runnable_others(srv) >= warm_cpus)) {
                /* Runs in flight and no core idle: the imports would take a share of a run's
                 * (with none in flight, the build takes no run's, whatever else is running). */
                (void)uv_timer_start(t, warm_look, WARM_IDLE_MS, 0);
                return;
        }
        if (want) {
                struct proto_run_request req = { .source = "" };
                struct sup_run_opts o = { .warm = true, .done = warm_done };
                struct anvil_err err = ANVIL_ERR_INIT;
                log_info("warm: building a warm jail (%u run%s in flight)", srv->n_runs, srv->n_runs == 1 ? "" : "s");
                if (sup_run_internal(srv, &req, &o, &err) < 0)
                        log_warn("warm jail: %s", err.msg);
        }
        (void)uv_timer_start(t, warm_look, WARM_LOOK_MS, 0);
}

void sup_warm_kick(struct sup_server *srv)
{
        if (srv->cfg.warm && !srv->stopping)
                (void)uv_timer_start(&srv->warm_timer, warm_look, 0, 0);
}

void sup_warm_start(struct sup_server *srv)
{
        uv_timer_init(srv->loop, &srv->warm_timer);
        srv->warm_timer.data = srv;
        if (srv->cfg.warm && srv->cfg.direct) {
                log_warn("warm: not without user namespaces (the direct rung): every run is cold");
                srv->cfg.warm = 0;
        }
        cpu_set_t set;
        CPU_ZERO(&set);
        int n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
        warm_cpus = n > 0 ? (unsigned)n : 1;
        if (srv->cfg.warm)
                log_info("warm: %u warm jail%s, built while fewer than %u runs are in flight and a core is idle",
                         srv->cfg.warm, srv->cfg.warm == 1 ? "" : "s", warm_cpus);
}

void sup_warm_stop(struct sup_server *srv)
{
        (void)uv_timer_stop(&srv->warm_timer);
        uv_close((uv_handle_t *)&srv->warm_timer, NULL);
}

/* Inputs passed as fds: a warm jail's inputs/ is bound since GO, so nothing can be mounted
 * onto it; its regular files are copied in at the take, on the loop, up to WARM_COPY_MAX in
 * all (a copy of that takes milliseconds), and never from FUSE (a process could stall the
 * loop). A directory, or more, goes cold, where it is mounted or copied on the thread pool. */
#define WARM_COPY_MAX (16ull << 20)

static bool fds_cold_reason(const int *fds, size_t n_fds, char *msg, size_t size)
{
        uint64_t total = 0;
        for (size_t i = 0; i < n_fds; i++) {
                struct stat st;
                struct statfs sf;
                if (fstat(fds[i], &st) < 0 || !S_ISREG(st.st_mode) || fstatfs(fds[i], &sf) < 0 ||
                    sf.f_type == FUSE_SUPER_MAGIC) {
                        POL_REASON(msg, size, WARM_COLD_NOT_COPIED);
                        return true;
                }
                total += (uint64_t)st.st_size;
        }
        if (total > WARM_COPY_MAX) {
                POL_REASON(msg, size, WARM_COLD_TOO_LARGE, (unsigned long long)total,
                           (unsigned long long)WARM_COPY_MAX);
                return true;
        }
        return false;
}

bool sup_warm_cold_reason(const struct sup_server *srv, const struct proto_run_request *req,
                          const struct proto_limits *lim, const int *fds, size_t n_fds, char *msg, size_t size)
{
        uint64_t files = srv->cfg.limits.r[PROTO_LIMIT_FILES_BYTES].dflt;
        uint64_t mem = srv->cfg.limits.r[PROTO_LIMIT_MEMORY_MB].dflt;
        if (req->capabilities_requested.n || req->egress.set) /* a granted run is never warm */
                POL_REASON(msg, size, WARM_COLD_CAPS);
        else if (req->python_layers_off)
                POL_REASON(msg, size, WARM_COLD_LAYERS_OFF);
        else if (lim->files_bytes != files)
                POL_REASON(msg, size, WARM_COLD_FILES, (unsigned long long)lim->files_bytes, (unsigned long long)files);
        else if (lim->memory_mb < mem) /* the imports hold ~90 MB of it: a small cap is the tool's alone, cold */
                POL_REASON(msg, size, WARM_COLD_MEMORY, (unsigned long long)lim->memory_mb, (unsigned long long)mem);
        else
                return fds_cold_reason(fds, n_fds, msg, size);
        return true;
}

/* A waiting warm jail whose pid 1 and runner are alive and quiet: a jail that died, or whose
 * runner ended, in this turn of the loop (its end not yet read) is left to its own end. */
struct sup_run *sup_warm_take(struct sup_server *srv)
{
        for (struct sup_run *r = srv->runs; r; r = r->next) {
                if (r->warm != SUP_WARM_WAITING || r->verdict != SUP_RUN_NO_VERDICT || r->reaped)
                        continue;
                siginfo_t si;
                memset(&si, 0, sizeof(si));
                if (waitid(P_PIDFD, (id_t)r->jp.pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid != 0)
                        continue;
                char c;
                if (recv(r->jp.sync_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0)
                        continue; /* a record (the runner's EXIT) or the socket's end */
                return r;
        }
        return NULL;
}

/* One input from its fd (a regular file, within WARM_COPY_MAX: fds_cold_reason), as root's
 * 0644 file, as the cold path's copies are. */
static int copy_input(int fd, int ifd, const char *name, struct anvil_err *err)
{
        _cleanup_close_ int out = openat(ifd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (out < 0)
                return anvil_err_sys(err, errno, "Failed to create the input %s", name);
        char buf[65536];
        for (off_t off = 0;;) {
                ssize_t k = pread(fd, buf, sizeof(buf), off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return anvil_err_sys(err, errno, "Failed to copy the input %s", name);
                if (k == 0 || off + k > (off_t)WARM_COPY_MAX)
                        return k == 0 ? 0
                                      : anvil_err_set(err, EFBIG, "The input %s grew past %llu bytes", name,
                                                      (unsigned long long)WARM_COPY_MAX);
                int r = fd_write_all(out, buf, (size_t)k, err);
                if (r < 0)
                        return r;
                off += k;
        }
}

/* At the take: the run's tool.py and its inputs (bytes, checked at run_begin) written into
 * its directory, whose inputs/ the jail has bound read-only since GO and sees as they come. */
int sup_warm_place(const struct sup_run *run, const struct proto_run_request *req, const int *fds,
                   struct anvil_err *err)
{
        _cleanup_close_ int dfd = open(run->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s", run->dir);
        (void)unlinkat(dfd, "tool.py", 0); /* the warm shape's empty one */
        int r = fd_write_file_at(dfd, "tool.py", req->source, strlen(req->source), 0644, err);
        _cleanup_close_ int ifd = r < 0 ? -1 : openat(dfd, "inputs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (r == 0 && ifd < 0)
                r = anvil_err_sys(err, errno, "Failed to open %s/inputs", run->dir);
        const struct proto_input *in = req->inputs.items;
        for (size_t i = 0; r == 0 && i < req->inputs.n; i++)
                r = in[i].fd.set ? copy_input(fds[in[i].fd.v], ifd, in[i].name, err)
                                 : fd_write_file_at(ifd, in[i].name, in[i].data.data, in[i].data.len, 0644, err);
        return r;
}

/* The runner's CPU time so far, in whole seconds rounded up (its /proc stat). */
static int runner_cpu_s(pid_t runner, uint64_t *s, struct anvil_err *err)
{
        char p[64], buf[1024];
        snprintf(p, sizeof(p), "/proc/%d/stat", (int)runner);
        if (fd_read_small(p, buf, sizeof(buf), FD_READ_PREFIX, NULL) <= 0)
                return anvil_err_set(err, ESRCH, "The warm jail's runner is gone");
        const char *q = strrchr(buf, ')');
        unsigned long long ut, st;
        /* after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
        if (!q || sscanf(q + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
                return anvil_err_set(err, EINVAL, "The warm jail's runner's /proc stat cannot be read");
        long tck = sysconf(_SC_CLK_TCK);
        *s = (ut + st + (unsigned long long)tck - 1) / (unsigned long long)(tck > 0 ? tck : 100);
        return 0;
}

/* One rlimit set on the runner, and read back (as S4 reads pid 1's): a refusal otherwise. */
static int set_rlimit(pid_t runner, int res, const struct rlimit *want, struct anvil_err *err)
{
        struct rlimit got;
        if (prlimit(runner, res, want, NULL) < 0 || prlimit(runner, res, NULL, &got) < 0)
                return anvil_err_sys(err, errno, "Failed to set the warm jail's runner's rlimits");
        if (got.rlim_cur != want->rlim_cur || got.rlim_max != want->rlim_max)
                return anvil_err_set(err, EPERM, "The warm jail's runner's rlimit %d reads %llu/%llu, not %llu/%llu",
                                     res, (unsigned long long)got.rlim_cur, (unsigned long long)got.rlim_max,
                                     (unsigned long long)want->rlim_cur, (unsigned long long)want->rlim_max);
        return 0;
}

/* At the take: the run's rlimits on the runner, from outside (prlimit), as the child set the
 * warm shape's at C7. RLIMIT_CPU counts from the runner's start: the run's CPU seconds come on
 * top of what the imports took. rl is the run's (run.c run_rlimits); it becomes what was set. */
int sup_warm_rlimits(struct sup_run *run, struct jail_rlimits *rl, struct anvil_err *err)
{
        char p[96], buf[256];
        snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)run->jp.pid, (int)run->jp.pid);
        int runner = 0;
        if (fd_read_small(p, buf, sizeof(buf), FD_READ_PREFIX, NULL) <= 0 || sscanf(buf, "%d", &runner) != 1 ||
            runner <= 0)
                return anvil_err_set(err, ESRCH, "The warm jail's runner is gone");
        uint64_t used = 0;
        int r = runner_cpu_s(runner, &used, err);
        if (r < 0)
                return r;
        rl->cpu_s += used;
        struct rlimit cpu = { rl->cpu_s, rl->cpu_s + 1 }, nproc = { rl->nproc, rl->nproc },
                      as = { rl->as_bytes, rl->as_bytes };
        if ((r = set_rlimit(runner, RLIMIT_CPU, &cpu, err)) < 0 ||
            (rl->nproc && (r = set_rlimit(runner, RLIMIT_NPROC, &nproc, err)) < 0) ||
            (rl->as_bytes && (r = set_rlimit(runner, RLIMIT_AS, &as, err)) < 0))
                return r;
        log_info("run %s: rlimits set on the warm runner %d (RLIMIT_CPU %" PRIu64 " s: %" PRIu64
                 " s of imports + the run's)",
                 run->id, runner, rl->cpu_s, used);
        return 0;
}
