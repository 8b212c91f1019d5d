/* cgroups, v2 and v1 behind one interface (after crun's cgroup-*.c): a run's cgroup with a
 * memory limit, a pids limit and a CPU quota, each read back before the tool starts; and the
 * kernel's figures read at the end: non-reclaimable memory now (anon + shmem, so page cache of
 * the CSVs a tool reads never counts as its memory), the kernel's peak, OOM kills, processes
 * at their peak and forks refused, CPU time and time throttled by the quota.
 *
 * Each controller is found where this host has it: in the v2 hierarchy, or in a v1 hierarchy
 * of its own (or co-mounted with others: "cpu,cpuacct"). The memory controller decides the
 * mode; the CPU quota comes from whichever hierarchy has the cpu controller usable.
 * cgroup-setup.c finds them at start-up (and decides where in the v2 tree the supervisor may
 * create cgroups, see jail_cgroup_v2_place); cgroup.c does a run's cgroup. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

enum jail_cg_mode { JAIL_CG_NONE, JAIL_CG_V1, JAIL_CG_V2 };

/* The controllers Anvil uses. CPUACCT is v1's CPU time (v2 has cpu.stat in every cgroup). */
enum jail_cg_ctl { JAIL_CG_MEMORY, JAIL_CG_PIDS, JAIL_CG_CPU, JAIL_CG_CPUACCT, _JAIL_CG_CTL_MAX };
extern const char *const jail_cg_ctl_name[_JAIL_CG_CTL_MAX]; /* "memory", ... as v1 names them */

#define JAIL_CG_CPU_PERIOD_US 100000u /* the kernel's default CFS period */

struct jail_cgroup_opts {
        unsigned cpu_quota_pct; /* percent of one CPU per run; 0: no quota */
        bool assume_delegated;  /* --cgroup delegated: our own v2 cgroup is ours to use */
};

/* Where the controllers are, for every run of this supervisor. */
struct jail_cgroup_sys {
        enum jail_cg_mode mode;             /* where memory is; NONE: no cgroup at all */
        char base[_JAIL_CG_CTL_MAX][PATH_MAX]; /* per controller: the instance directory, "" if absent */
        char rel[_JAIL_CG_CTL_MAX][PATH_MAX];  /* the base as /proc/PID/cgroup names it */
        bool v2[_JAIL_CG_CTL_MAX];          /* that controller is in the v2 hierarchy */
        uint64_t cpu_quota_us;              /* per JAIL_CG_CPU_PERIOD_US; 0: none */
        char leaf[PATH_MAX];                /* v2, delegated: the leaf the supervisor moved into */
        char description[256];              /* what is in force, for the log */
        char notes[768];                    /* what was not used, and why, for the log */
};

/* Limits of one run's cgroup: as written, or as read back. 0: not in force. */
struct jail_cgroup_limits {
        uint64_t memory_max; /* bytes */
        uint64_t pids_max;
        uint64_t cpu_quota_us;
        uint64_t cpu_period_us;
};

struct jail_cgroup {
        enum jail_cg_mode mode;
        char dir[_JAIL_CG_CTL_MAX][PATH_MAX]; /* "" where the controller is absent; co-mounted
                                                 controllers (and all of v2) share one */
        char rel[_JAIL_CG_CTL_MAX][PATH_MAX]; /* as /proc/PID/cgroup names it */
        bool v2[_JAIL_CG_CTL_MAX];
        uint64_t cpu_quota_us; /* the supervisor's quota, from jail_cgroup_sys */
        struct jail_cgroup_limits want;    /* written by jail_cgroup_set_limits */
        struct jail_cgroup_limits applied; /* read back by jail_cgroup_verify */
        bool verified;                     /* applied holds what the kernel said */
};

/* A figure is known only if its has_ flag is set: kernels differ in what they offer. */
struct jail_cgroup_stats {
        uint64_t mem_bytes; /* anon + shmem now */
        bool has_peak, has_oom, has_cpu, has_pids_peak, has_forks_refused, has_throttled;
        uint64_t peak_bytes;    /* the kernel's high-water mark (page cache and kernel memory included) */
        uint64_t oom_kills;     /* v2 memory.events oom_kill; v1 memory.oom_control oom_kill */
        uint64_t cpu_us;        /* v2 cpu.stat usage_usec; v1 cpuacct.usage */
        uint64_t pids_peak;     /* pids.peak */
        uint64_t forks_refused; /* pids.events max: forks refused at pids.max */
        uint64_t throttled_us;  /* cpu.stat throttled_usec (v2) or throttled_time (v1, ns) */
};

/* ---- the supervisor's (cgroup-setup.c) ---- */

/* Finds what this host offers and sets up the base directories, named `instance` (so two
 * supervisors on one host never share one), and moves the supervisor into a leaf when its own
 * v2 cgroup is delegated to it. Never fails for lack of cgroups: mode NONE says so, with the
 * reason in notes. */
void jail_cgroup_sys_init(struct jail_cgroup_sys *sys, const char *instance, const struct jail_cgroup_opts *o);
/* Removes run cgroups a previous supervisor left behind, killing what is still in them (a jail
 * whose supervisor died is killed by its parent-death signal; this is the backstop). Returns
 * how many were removed; err holds the first that could not be. */
int jail_cgroup_sys_sweep(const struct jail_cgroup_sys *sys, unsigned *removed, struct anvil_err *err);
/* Removes the base directories, at exit (they are empty by then). */
void jail_cgroup_sys_fini(const struct jail_cgroup_sys *sys);

/* ---- a run's (cgroup.c) ---- */

int jail_cgroup_prepare(const struct jail_cgroup_sys *sys, const char *name, uint64_t mem_limit,
                        uint64_t pids_max, struct jail_cgroup *cg, struct anvil_err *err);
/* Sets (or changes) the limits of a prepared cgroup, and the supervisor's CPU quota. */
int jail_cgroup_set_limits(struct jail_cgroup *cg, uint64_t mem_limit, uint64_t pids_max, struct anvil_err *err);
int jail_cgroup_parent(const struct jail_cgroup *cg, pid_t pid, struct anvil_err *err);
/* Before the tool starts: pid is a member of every hierarchy's run cgroup, and the limits read
 * back are those written. Fills cg->applied and a line for the mechanisms ("cgroup v1 (memory
 * hard limit 640 MB, pids 64, cpu quota 50% of a CPU)"); a difference is a refusal, as
 * jail/verify.c words it. */
int jail_cgroup_verify(struct jail_cgroup *cg, pid_t pid, char *mechanism, size_t size, struct anvil_err *err);
int jail_cgroup_read(const struct jail_cgroup *cg, struct jail_cgroup_stats *st);
/* The sampler's one figure (every 20 ms): anon + shmem now, from memory.stat alone. */
int jail_cgroup_read_memory(const struct jail_cgroup *cg, uint64_t *bytes);
/* What the kernel says the limits are now. */
int jail_cgroup_read_limits(const struct jail_cgroup *cg, struct jail_cgroup_limits *lim);
/* True if pid is a member of the run's cgroup in every hierarchy, read back from /proc. */
bool jail_cgroup_contains(const struct jail_cgroup *cg, pid_t pid);
/* Removes the run's cgroups, retrying (bounded, about a second) while the kernel still holds
 * one (EBUSY as its last tasks are released). Waits: callers run it off the event loop. */
int jail_cgroup_destroy(struct jail_cgroup *cg, struct anvil_err *err);
bool jail_cgroup_has(const struct jail_cgroup *cg, enum jail_cg_ctl c);

/* ---- pure pieces, exposed for the unit tests ---- */

/* Where a cgroup v2 hierarchy lets the supervisor create its cgroups. */
enum jail_cg_v2_place {
        JAIL_CG_V2_AT_ROOT,   /* we are in the hierarchy's real root: below it */
        JAIL_CG_V2_DELEGATED, /* our cgroup is ours: move into a leaf, create beside it */
        JAIL_CG_V2_NOT_OURS,  /* our cgroup belongs to whoever manages it: v2 is not used */
};
/* own: our path in the hierarchy as /proc/self/cgroup shows it ("" for "/"); real_root: the
 * directory has no cgroup.type (only the real root lacks it: a cgroup namespace's root has
 * it); marked: the trusted.delegate or user.delegate xattr is "1". */
enum jail_cg_v2_place jail_cgroup_v2_place(const char *own, bool real_root, bool marked, bool assume_delegated);
/* From /proc/self/mountinfo's text: where hierarchy `ctrl` (a v1 controller, or "" for v2)
 * is mounted, and which of its cgroups the mount shows at its top (root: "" for "/"). */
bool jail_cgroup_find_mount(const char *mountinfo, const char *ctrl, char *mnt, size_t mnt_size, char *root,
                            size_t root_size);
/* From /proc/PID/cgroup's text: the path in hierarchy `ctrl` ("" for v2), "" for the root. */
bool jail_cgroup_find_own(const char *proc_cgroup, const char *ctrl, char *own, size_t size);
/* "key value" lines (memory.stat, memory.events, cpu.stat, pids.events, memory.oom_control). */
bool jail_cgroup_kv(const char *text, const char *key, uint64_t *v);
/* cpu.max: "50000 100000" or "max 100000" (quota 0). */
bool jail_cgroup_parse_cpu_max(const char *text, uint64_t *quota_us, uint64_t *period_us);
