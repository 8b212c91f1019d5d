/* A run's cgroup: created, limited, joined, read back, read and removed, on v2 or v1 through
 * one interface. What differs between the two is which file says what, and that is the table
 * below; everything else is the same code. cgroup-setup.c finds the hierarchies at start-up. */
#define _GNU_SOURCE
#include "jail/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jail/cgroup-fs.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/lines.h"
#include "policy/reasons.h"

const char *const jail_cg_ctl_name[_JAIL_CG_CTL_MAX] = { "memory", "pids", "cpu", "cpuacct" };

/* ---- the files, v2 | v1 ---- */

struct cg_files {
        const char *mem_max;    /* the hard limit */
        const char *mem_peak;   /* the kernel's high-water mark (v2: Linux 5.19) */
        const char *anon;       /* memory.stat's anonymous memory */
        const char *oom_file;   /* where oom_kill is counted (v1: Linux 4.13) */
        const char *throttled;  /* cpu.stat's time throttled by the quota */
        uint64_t throttled_div; /* to microseconds */
};

static const struct cg_files v2_files = { "memory.max", "memory.peak", "anon", "memory.events", "throttled_usec", 1 };
static const struct cg_files v1_files = { "memory.limit_in_bytes", "memory.max_usage_in_bytes", "rss",
                                          "memory.oom_control", "throttled_time", 1000 };

static const struct cg_files *files(const struct jail_cgroup *cg, enum jail_cg_ctl c)
{
        return cg->v2[c] ? &v2_files : &v1_files;
}

/* ---- small helpers, shared with cgroup-setup.c ---- */

int jail_cg_write(const char *dir, const char *file, const char *text)
{
        char p[PATH_MAX + 64];
        if (snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p))
                return -ENAMETOOLONG;
        _cleanup_close_ int fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t n = strlen(text);
        ssize_t w = write(fd, text, n);
        if (w < 0)
                return -errno;
        /* A cgroup file takes a write whole or fails it; a short one is not success (errno
         * would say nothing here). */
        return (size_t)w == n ? 0 : -EIO;
}

/* What a caller reads here fits in its buffer (or only its first part matters): cut to size. */
static int read_path(const char *p, char *buf, size_t size)
{
        ssize_t n = fd_read_small(p, buf, size, FD_READ_PREFIX, NULL);
        return n < 0 ? (int)n : 0;
}

int jail_cg_read(const char *dir, const char *file, char *buf, size_t size)
{
        char p[PATH_MAX + 64];
        if (snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p))
                return -ENAMETOOLONG;
        return read_path(p, buf, size);
}

/* A number alone in a file; "max" (no limit) and a missing file are not numbers. */
static bool read_u64(const char *dir, const char *file, uint64_t *v)
{
        char buf[64], *end;
        if (jail_cg_read(dir, file, buf, sizeof(buf)) < 0 || buf[0] < '0' || buf[0] > '9')
                return false;
        errno = 0;
        *v = strtoull(buf, &end, 10);
        return errno == 0 && (*end == '\n' || *end == 0);
}

bool jail_cgroup_kv(const char *text, const char *key, uint64_t *v)
{
        size_t kn = strlen(key), len;
        struct lines it = lines_of_str(text);
        const char *l;
        while (lines_next(&it, &l, &len)) {
                if (line_starts(l, len, key) && len > kn && l[kn] == ' ') {
                        char *end;
                        errno = 0;
                        *v = strtoull(l + kn + 1, &end, 10);
                        return errno == 0 && end != l + kn + 1;
                }
        }
        return false;
}

static bool kv_file(const char *dir, const char *file, const char *key, uint64_t *v)
{
        char buf[8192];
        return jail_cg_read(dir, file, buf, sizeof(buf)) == 0 && jail_cgroup_kv(buf, key, v);
}

bool jail_cgroup_parse_cpu_max(const char *text, uint64_t *quota_us, uint64_t *period_us)
{
        char q[32];
        unsigned long long p;
        if (sscanf(text, "%31s %llu", q, &p) != 2 || p == 0)
                return false;
        *period_us = p;
        if (strcmp(q, "max") == 0) {
                *quota_us = 0;
                return true;
        }
        char *end;
        errno = 0;
        *quota_us = strtoull(q, &end, 10);
        return errno == 0 && *end == 0 && q[0] >= '0' && q[0] <= '9';
}

/* rmdir, retried while the kernel still holds the cgroup: a cgroup whose last task has been
 * reaped can report EBUSY for a moment (v2 releases a dying task's membership
 * asynchronously). Bounded: about a second in all. */
int jail_cg_rmdir(const char *dir)
{
        unsigned delay_ms = 1;
        for (unsigned i = 0;; i++) {
                if (rmdir(dir) == 0 || errno == ENOENT)
                        return 0;
                if (errno != EBUSY || i >= 12)
                        return -errno;
                struct timespec ts = { 0, (long)delay_ms * 1000000L };
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
                delay_ms = delay_ms * 2 > 200 ? 200 : delay_ms * 2;
        }
}

/* Kills whatever is left in a cgroup: v2's cgroup.kill (Linux 5.14) kills it all at once;
 * otherwise each member, through a pidfd opened while it is listed and checked to be listed
 * still, so a pid reused by an unrelated process is never signalled (nothing but the
 * supervisor ever moves a process into these cgroups). */
int jail_cg_kill_members(const char *dir, bool v2)
{
        if (v2 && jail_cg_write(dir, "cgroup.kill", "1") == 0)
                return 0;
        enum { SIZE = 65536 };
        _cleanup_free_ char *buf = malloc(SIZE), *again = malloc(SIZE + 1);
        if (!buf || !again)
                return -ENOMEM;
        int r = jail_cg_read(dir, "cgroup.procs", buf, SIZE);
        if (r < 0)
                return r;
        int killed = 0;
        char *save = NULL;
        for (char *t = strtok_r(buf, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
                pid_t pid = (pid_t)strtol(t, NULL, 10);
                if (pid <= 0)
                        continue;
                _cleanup_close_ int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
                if (pfd < 0)
                        continue;
                char want[32];
                snprintf(want, sizeof(want), "\n%d\n", (int)pid);
                again[0] = '\n';
                if (jail_cg_read(dir, "cgroup.procs", again + 1, SIZE) < 0 || !strstr(again, want))
                        continue;
                if (pidfd_send_signal(pfd, SIGKILL, NULL, 0) == 0)
                        killed++;
        }
        return killed;
}

/* Controllers that share a directory (co-mounted v1 hierarchies, or all of v2) are handled
 * once, by the first of them. */
static bool first_of_dir(const struct jail_cgroup *cg, enum jail_cg_ctl c)
{
        if (!cg->dir[c][0])
                return false;
        for (unsigned o = 0; o < (unsigned)c; o++)
                if (strcmp(cg->dir[o], cg->dir[c]) == 0)
                        return false;
        return true;
}

bool jail_cgroup_has(const struct jail_cgroup *cg, enum jail_cg_ctl c)
{
        return cg->mode != JAIL_CG_NONE && cg->dir[c][0];
}

/* ---- a run's cgroup ---- */

int jail_cgroup_prepare(const struct jail_cgroup_sys *sys, const char *name, uint64_t mem_limit,
                        uint64_t pids_max, struct jail_cgroup *cg, struct anvil_err *err)
{
        memset(cg, 0, sizeof(*cg));
        cg->mode = sys->mode;
        if (sys->mode == JAIL_CG_NONE)
                return 0;
        cg->cpu_quota_us = sys->cpu_quota_us;
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++) {
                if (!sys->base[c][0])
                        continue;
                if (snprintf(cg->dir[c], sizeof(cg->dir[c]), "%s/%s", sys->base[c], name) >= (int)sizeof(cg->dir[c]) ||
                    snprintf(cg->rel[c], sizeof(cg->rel[c]), "%s/%s", sys->rel[c], name) >= (int)sizeof(cg->rel[c])) {
                        memset(cg->dir, 0, sizeof(cg->dir));
                        return anvil_err_set(err, ENAMETOOLONG, "cgroup path under %s is too long", sys->base[c]);
                }
                cg->v2[c] = sys->v2[c];
        }
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++) {
                if (!first_of_dir(cg, c))
                        continue;
                /* A name that exists already is a leftover the sweep could not remove: its
                 * counters are another run's, so it is never reused. */
                if (mkdir(cg->dir[c], 0755) < 0) {
                        int r = anvil_err_sys(err, errno, "Failed to create cgroup %s", cg->dir[c]);
                        /* Only what this call made is removed. */
                        for (unsigned o = 0; o < c; o++)
                                if (first_of_dir(cg, o))
                                        (void)jail_cg_rmdir(cg->dir[o]);
                        memset(cg->dir, 0, sizeof(cg->dir));
                        return r;
                }
        }
        int r = jail_cgroup_set_limits(cg, mem_limit, pids_max, err);
        if (r < 0)
                (void)jail_cgroup_destroy(cg, NULL); /* the error above is the one to report */
        return r;
}

static int set_memory(const struct jail_cgroup *cg, uint64_t bytes, struct anvil_err *err)
{
        const char *dir = cg->dir[JAIL_CG_MEMORY];
        char num[32];
        int r;
        snprintf(num, sizeof(num), "%" PRIu64, bytes);
        if (cg->v2[JAIL_CG_MEMORY]) {
                if ((r = jail_cg_write(dir, "memory.max", num)) < 0)
                        return anvil_err_sys(err, -r, "Failed to set memory.max in %s", dir);
                (void)jail_cg_write(dir, "memory.swap.max", "0"); /* absent without swap accounting */
                return 0;
        }
        /* memsw (memory + swap) must never be below the memory limit: raise it first when the
         * limit goes up, lower it after when the limit goes down. Both writes fail, and are
         * ignored, without swap accounting. */
        (void)jail_cg_write(dir, "memory.memsw.limit_in_bytes", num);
        if ((r = jail_cg_write(dir, "memory.limit_in_bytes", num)) < 0)
                return anvil_err_sys(err, -r, "Failed to set memory.limit_in_bytes in %s", dir);
        (void)jail_cg_write(dir, "memory.memsw.limit_in_bytes", num);
        return 0;
}

int jail_cg_set_cpu(const struct jail_cgroup *cg, uint64_t quota_us, uint64_t period_us, struct anvil_err *err)
{
        const char *dir = cg->dir[JAIL_CG_CPU];
        char num[64];
        int r;
        if (cg->v2[JAIL_CG_CPU]) {
                snprintf(num, sizeof(num), "%" PRIu64 " %" PRIu64, quota_us, period_us);
                if ((r = jail_cg_write(dir, "cpu.max", num)) < 0)
                        return anvil_err_sys(err, -r, "Failed to set cpu.max in %s", dir);
                return 0;
        }
        snprintf(num, sizeof(num), "%" PRIu64, period_us);
        if ((r = jail_cg_write(dir, "cpu.cfs_period_us", num)) < 0)
                return anvil_err_sys(err, -r, "Failed to set cpu.cfs_period_us in %s", dir);
        snprintf(num, sizeof(num), "%" PRIu64, quota_us);
        if ((r = jail_cg_write(dir, "cpu.cfs_quota_us", num)) < 0)
                return anvil_err_sys(err, -r, "Failed to set cpu.cfs_quota_us in %s", dir);
        return 0;
}

int jail_cgroup_set_limits(struct jail_cgroup *cg, uint64_t mem_limit, uint64_t pids_max, struct anvil_err *err)
{
        if (cg->mode == JAIL_CG_NONE)
                return 0;
        struct jail_cgroup_limits want = { .memory_max = mem_limit };
        int r = set_memory(cg, mem_limit, err);
        if (r < 0)
                return r;
        if (jail_cgroup_has(cg, JAIL_CG_PIDS)) {
                char num[32];
                snprintf(num, sizeof(num), "%" PRIu64, pids_max);
                if ((r = jail_cg_write(cg->dir[JAIL_CG_PIDS], "pids.max", num)) < 0)
                        return anvil_err_sys(err, -r, "Failed to set pids.max in %s", cg->dir[JAIL_CG_PIDS]);
                want.pids_max = pids_max;
        }
        if (jail_cgroup_has(cg, JAIL_CG_CPU) && cg->cpu_quota_us) {
                if ((r = jail_cg_set_cpu(cg, cg->cpu_quota_us, JAIL_CG_CPU_PERIOD_US, err)) < 0)
                        return r;
                want.cpu_quota_us = cg->cpu_quota_us;
                want.cpu_period_us = JAIL_CG_CPU_PERIOD_US;
        }
        cg->want = want;
        return 0;
}

int jail_cgroup_parent(const struct jail_cgroup *cg, pid_t pid, struct anvil_err *err)
{
        char num[32];
        snprintf(num, sizeof(num), "%d", (int)pid);
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++) {
                if (!first_of_dir(cg, c))
                        continue;
                int r = jail_cg_write(cg->dir[c], "cgroup.procs", num);
                if (r < 0)
                        return anvil_err_sys(err, -r, "Failed to move pid %d into %s", (int)pid, cg->dir[c]);
        }
        return 0;
}

int jail_cgroup_read_limits(const struct jail_cgroup *cg, struct jail_cgroup_limits *lim)
{
        memset(lim, 0, sizeof(*lim));
        if (cg->mode == JAIL_CG_NONE)
                return -ENOENT;
        if (!jail_cgroup_has(cg, JAIL_CG_MEMORY) ||
            !read_u64(cg->dir[JAIL_CG_MEMORY], files(cg, JAIL_CG_MEMORY)->mem_max, &lim->memory_max))
                lim->memory_max = 0; /* "max": none */
        if (jail_cgroup_has(cg, JAIL_CG_PIDS) && !read_u64(cg->dir[JAIL_CG_PIDS], "pids.max", &lim->pids_max))
                lim->pids_max = 0;
        if (!jail_cgroup_has(cg, JAIL_CG_CPU))
                return 0;
        const char *dir = cg->dir[JAIL_CG_CPU];
        if (cg->v2[JAIL_CG_CPU]) {
                char buf[64];
                if (jail_cg_read(dir, "cpu.max", buf, sizeof(buf)) < 0 ||
                    !jail_cgroup_parse_cpu_max(buf, &lim->cpu_quota_us, &lim->cpu_period_us))
                        lim->cpu_quota_us = lim->cpu_period_us = 0;
        } else if (!read_u64(dir, "cpu.cfs_quota_us", &lim->cpu_quota_us) || /* -1: none */
                   !read_u64(dir, "cpu.cfs_period_us", &lim->cpu_period_us))
                lim->cpu_quota_us = lim->cpu_period_us = 0;
        if (!lim->cpu_quota_us)
                lim->cpu_period_us = 0;
        return 0;
}

bool jail_cgroup_contains(const struct jail_cgroup *cg, pid_t pid)
{
        if (cg->mode == JAIL_CG_NONE)
                return false;
        char p[64], buf[8192], own[PATH_MAX];
        snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
        if (read_path(p, buf, sizeof(buf)) < 0)
                return false;
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++) {
                if (!cg->dir[c][0])
                        continue;
                if (!jail_cgroup_find_own(buf, cg->v2[c] ? "" : jail_cg_ctl_name[c], own, sizeof(own)) ||
                    strcmp(own, cg->rel[c]) != 0)
                        return false;
        }
        return true;
}

static int refuse(struct anvil_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct anvil_err *err, const char *fmt, ...)
{
        char ev[200], msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ev, sizeof(ev), fmt, ap);
        va_end(ap);
        return anvil_err_set(err, EPERM, "%s", POL_REASON(msg, sizeof(msg), REFUSED_NOT_IN_FORCE, "cgroup", ev));
}

int jail_cgroup_verify(struct jail_cgroup *cg, pid_t pid, char *mechanism, size_t size, struct anvil_err *err)
{
        cg->verified = false;
        if (!jail_cgroup_contains(cg, pid))
                return refuse(err, "pid 1 is not in the run's cgroup in every hierarchy");
        struct jail_cgroup_limits got;
        (void)jail_cgroup_read_limits(cg, &got);
        const struct jail_cgroup_limits *w = &cg->want;
        /* The kernel keeps a memory limit in whole pages. */
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        if (got.memory_max != w->memory_max / page * page)
                return refuse(err, "%s reads back %" PRIu64 ", expected %" PRIu64, files(cg, JAIL_CG_MEMORY)->mem_max,
                              got.memory_max, w->memory_max);
        if (got.pids_max != w->pids_max)
                return refuse(err, "pids.max reads back %" PRIu64 ", expected %" PRIu64, got.pids_max, w->pids_max);
        if (w->cpu_quota_us && (got.cpu_quota_us != w->cpu_quota_us || got.cpu_period_us != w->cpu_period_us))
                return refuse(err, "the CPU quota reads back %" PRIu64 "/%" PRIu64 " us, expected %" PRIu64 "/%" PRIu64 " us",
                              got.cpu_quota_us, got.cpu_period_us, w->cpu_quota_us, w->cpu_period_us);
        cg->applied = got;
        cg->applied.cpu_quota_us = w->cpu_quota_us ? got.cpu_quota_us : 0; /* only what we set */
        cg->applied.cpu_period_us = w->cpu_quota_us ? got.cpu_period_us : 0;
        cg->verified = true;
        int n = snprintf(mechanism, size, "cgroup %s (memory hard limit %" PRIu64 " MB",
                         cg->mode == JAIL_CG_V2 ? "v2" : "v1", got.memory_max >> 20);
        if (got.pids_max && n > 0 && (size_t)n < size)
                n += snprintf(mechanism + n, size - (size_t)n, ", pids %" PRIu64, got.pids_max);
        if (cg->applied.cpu_quota_us && n > 0 && (size_t)n < size)
                n += snprintf(mechanism + n, size - (size_t)n, ", cpu quota %" PRIu64 "%% of a CPU",
                              cg->applied.cpu_quota_us * 100 / cg->applied.cpu_period_us);
        if (n > 0 && (size_t)n < size)
                snprintf(mechanism + n, size - (size_t)n, ")");
        return 0;
}

int jail_cgroup_read_memory(const struct jail_cgroup *cg, uint64_t *bytes)
{
        *bytes = 0;
        if (!jail_cgroup_has(cg, JAIL_CG_MEMORY))
                return -ENOENT;
        char buf[8192];
        uint64_t a = 0, s = 0;
        int r = jail_cg_read(cg->dir[JAIL_CG_MEMORY], "memory.stat", buf, sizeof(buf));
        if (r < 0)
                return r;
        (void)jail_cgroup_kv(buf, files(cg, JAIL_CG_MEMORY)->anon, &a);
        (void)jail_cgroup_kv(buf, "shmem", &s);
        *bytes = a + s;
        return 0;
}

int jail_cgroup_read(const struct jail_cgroup *cg, struct jail_cgroup_stats *st)
{
        memset(st, 0, sizeof(*st));
        if (cg->mode == JAIL_CG_NONE)
                return -ENOENT;
        const char *mem = cg->dir[JAIL_CG_MEMORY];
        const struct cg_files *f = files(cg, JAIL_CG_MEMORY);
        int r = jail_cgroup_read_memory(cg, &st->mem_bytes);
        if (r < 0)
                return r;
        st->has_peak = read_u64(mem, f->mem_peak, &st->peak_bytes);
        st->has_oom = kv_file(mem, f->oom_file, "oom_kill", &st->oom_kills);
        if (jail_cgroup_has(cg, JAIL_CG_PIDS)) {
                st->has_pids_peak = read_u64(cg->dir[JAIL_CG_PIDS], "pids.peak", &st->pids_peak); /* Linux 6.1 */
                st->has_forks_refused = kv_file(cg->dir[JAIL_CG_PIDS], "pids.events", "max", &st->forks_refused);
        }
        /* CPU time: v2 keeps it in every cgroup's cpu.stat; v1 in cpuacct. */
        if (cg->v2[JAIL_CG_MEMORY])
                st->has_cpu = kv_file(mem, "cpu.stat", "usage_usec", &st->cpu_us);
        else if (jail_cgroup_has(cg, JAIL_CG_CPU) && cg->v2[JAIL_CG_CPU])
                st->has_cpu = kv_file(cg->dir[JAIL_CG_CPU], "cpu.stat", "usage_usec", &st->cpu_us);
        else if (jail_cgroup_has(cg, JAIL_CG_CPUACCT) && read_u64(cg->dir[JAIL_CG_CPUACCT], "cpuacct.usage", &st->cpu_us)) {
                st->cpu_us /= 1000u;
                st->has_cpu = true;
        }
        if (jail_cgroup_has(cg, JAIL_CG_CPU) && cg->want.cpu_quota_us) {
                const struct cg_files *fc = files(cg, JAIL_CG_CPU);
                st->has_throttled = kv_file(cg->dir[JAIL_CG_CPU], "cpu.stat", fc->throttled, &st->throttled_us);
                st->throttled_us /= fc->throttled_div;
        }
        return 0;
}

int jail_cgroup_destroy(struct jail_cgroup *cg, struct anvil_err *err)
{
        int first = 0;
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++) {
                if (!first_of_dir(cg, c))
                        continue;
                int r = jail_cg_rmdir(cg->dir[c]);
                if (r < 0 && first == 0)
                        first = anvil_err_sys(err, -r, "Failed to remove cgroup %s", cg->dir[c]);
        }
        memset(cg->dir, 0, sizeof(cg->dir));
        return first;
}
