/* cgroups, v2 and v1 behind one interface (after crun's cgroup-*.c): a memory limit, a pids
 * limit, and the figures read back: non-reclaimable memory now (anon + shmem, so page cache of
 * the CSVs a tool reads never counts as its memory), the kernel's peak, OOM kills, CPU time. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

enum jail_cg_mode { JAIL_CG_NONE, JAIL_CG_V1, JAIL_CG_V2 };

struct jail_cgroup_sys {
        enum jail_cg_mode mode;
        char base_mem[PATH_MAX]; /* v2: the base for everything; v1: the memory hierarchy's */
        char base_pids[PATH_MAX]; /* v1 only, "" if the pids controller is not mounted */
        char base_cpu[PATH_MAX];  /* v1 only, "" if cpuacct is not mounted */
        char description[160];    /* what is in force, for logs and the result */
};

struct jail_cgroup {
        enum jail_cg_mode mode;
        char mem[PATH_MAX];
        char pids[PATH_MAX];
        char cpu[PATH_MAX];
};

struct jail_cgroup_stats {
        uint64_t mem_bytes;  /* anon + shmem now */
        uint64_t peak_bytes; /* the kernel's peak usage (page cache included), 0 if unknown */
        uint64_t oom_kills;
        uint64_t cpu_us;
        bool has_cpu;
};

/* Finds what this host offers and sets up the base directories, named `instance` below the
 * caller's own cgroup in each hierarchy (so two supervisors on one host never share one).
 * Never fails for lack of cgroups: mode NONE says so, with the reason in description. */
void jail_cgroup_sys_init(struct jail_cgroup_sys *sys, const char *instance);
/* Removes run cgroups a previous supervisor left behind. */
void jail_cgroup_sys_sweep(const struct jail_cgroup_sys *sys);
/* Removes the base directories, at exit (they are empty by then). */
void jail_cgroup_sys_fini(const struct jail_cgroup_sys *sys);

int jail_cgroup_prepare(const struct jail_cgroup_sys *sys, const char *name, uint64_t mem_limit,
                        uint64_t pids_max, struct jail_cgroup *cg, struct anvil_err *err);
/* Sets (or changes) the limits of a prepared cgroup. */
int jail_cgroup_set_limits(const struct jail_cgroup *cg, uint64_t mem_limit, uint64_t pids_max, struct anvil_err *err);
int jail_cgroup_parent(const struct jail_cgroup *cg, pid_t pid, struct anvil_err *err);
int jail_cgroup_read(const struct jail_cgroup *cg, struct jail_cgroup_stats *st);
/* True if pid is a member of the run's memory cgroup, read back from /proc. */
bool jail_cgroup_contains(const struct jail_cgroup *cg, pid_t pid);
void jail_cgroup_destroy(struct jail_cgroup *cg);
