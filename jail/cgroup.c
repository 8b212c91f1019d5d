#define _GNU_SOURCE
#include "jail/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"

static int write_at(const char *dir, const char *file, const char *text)
{
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/%s", dir, file);
        _cleanup_close_ int fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t n = strlen(text);
        if (write(fd, text, n) != (ssize_t)n)
                return -errno;
        return 0;
}

static int read_at(const char *dir, const char *file, char *buf, size_t size)
{
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/%s", dir, file);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        return 0;
}

/* "key value" lines, as in memory.stat, memory.events, cpu.stat and memory.oom_control. */
static bool kv_get(const char *text, const char *key, uint64_t *v)
{
        size_t kn = strlen(key);
        for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                if (strncmp(l, key, kn) == 0 && l[kn] == ' ') {
                        *v = strtoull(l + kn + 1, NULL, 10);
                        return true;
                }
        }
        return false;
}

static uint64_t read_u64(const char *dir, const char *file)
{
        char buf[64];
        if (read_at(dir, file, buf, sizeof(buf)) < 0)
                return 0;
        return strtoull(buf, NULL, 10);
}

/* Where hierarchy `want` (a v1 controller, or "" for v2) is mounted, and our path in it. */
static bool find_hierarchy(const char *want, char *mnt, size_t mnt_size, char *own, size_t own_size)
{
        _cleanup_fclose_ FILE *mi = fopen("/proc/self/mountinfo", "re");
        if (!mi)
                return false;
        char line[4096];
        bool found = false;
        while (!found && fgets(line, sizeof(line), mi)) {
                /* id parent maj:min root mountpoint opts ... - fstype source superopts */
                char mp[PATH_MAX], fstype[32], super[1024];
                const char *dash = strstr(line, " - ");
                if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 ||
                    sscanf(dash + 3, "%31s %*s %1023s", fstype, super) != 2)
                        continue;
                if (*want == 0 && strcmp(fstype, "cgroup2") == 0)
                        found = true;
                else if (*want && strcmp(fstype, "cgroup") == 0) {
                        for (char *t = strtok(super, ","); t; t = strtok(NULL, ","))
                                if (strcmp(t, want) == 0)
                                        found = true;
                }
                if (found)
                        snprintf(mnt, mnt_size, "%s", mp);
        }
        if (!found)
                return false;
        _cleanup_fclose_ FILE *pc = fopen("/proc/self/cgroup", "re");
        if (!pc)
                return false;
        while (fgets(line, sizeof(line), pc)) {
                line[strcspn(line, "\n")] = 0;
                char *c1 = strchr(line, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = 0;
                const char *ctrls = c1 + 1;
                bool match = false;
                if (*want == 0)
                        match = strcmp(line, "0") == 0 && *ctrls == 0;
                else {
                        _cleanup_free_ char *dup = strdup(ctrls);
                        for (char *t = dup ? strtok(dup, ",") : NULL; t; t = strtok(NULL, ","))
                                if (strcmp(t, want) == 0)
                                        match = true;
                }
                if (match) {
                        snprintf(own, own_size, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1);
                        return true;
                }
        }
        return false;
}

static bool v2_has(const char *dir, const char *file, const char *ctrl)
{
        char buf[512];
        if (read_at(dir, file, buf, sizeof(buf)) < 0)
                return false;
        for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
                if (strcmp(t, ctrl) == 0)
                        return true;
        return false;
}

static bool init_v2(struct jail_cgroup_sys *sys, const char *instance)
{
        char mnt[PATH_MAX], own[PATH_MAX], dir[PATH_MAX * 2];
        if (!find_hierarchy("", mnt, sizeof(mnt), own, sizeof(own)))
                return false;
        if (snprintf(dir, sizeof(dir), "%s%s", mnt, own) >= (int)sizeof(dir))
                return false;
        if (!v2_has(dir, "cgroup.controllers", "memory") || !v2_has(dir, "cgroup.controllers", "pids"))
                return false;
        /* "No internal processes": outside the root, a cgroup that hands controllers to its
         * children may not hold processes itself. Under systemd (Delegate=yes) the supervisor
         * moves itself into a leaf "supervisor" and makes "runs" beside it. */
        if (*own) {
                char leaf[PATH_MAX * 2 + 16], pid[32];
                snprintf(leaf, sizeof(leaf), "%s/supervisor", dir);
                (void)mkdir(leaf, 0755);
                snprintf(pid, sizeof(pid), "%d", (int)getpid());
                if (write_at(leaf, "cgroup.procs", pid) < 0)
                        return false;
        }
        if (write_at(dir, "cgroup.subtree_control", "+memory +pids") < 0)
                return false;
        (void)write_at(dir, "cgroup.subtree_control", "+cpu");
        if (snprintf(sys->base_mem, sizeof(sys->base_mem), "%s/%s", dir, instance) >= (int)sizeof(sys->base_mem))
                return false;
        if (mkdir(sys->base_mem, 0755) < 0 && errno != EEXIST)
                return false;
        if (write_at(sys->base_mem, "cgroup.subtree_control", "+memory +pids") < 0)
                return false;
        (void)write_at(sys->base_mem, "cgroup.subtree_control", "+cpu");
        sys->mode = JAIL_CG_V2;
        snprintf(sys->description, sizeof(sys->description), "cgroup v2 (memory, pids)");
        return true;
}

static bool init_v1_one(const char *ctrl, const char *instance, char *base, size_t size)
{
        char mnt[PATH_MAX], own[PATH_MAX];
        if (!find_hierarchy(ctrl, mnt, sizeof(mnt), own, sizeof(own)))
                return false;
        if (snprintf(base, size, "%s%s/%s", mnt, own, instance) >= (int)size)
                return false;
        return mkdir(base, 0755) == 0 || errno == EEXIST;
}

void jail_cgroup_sys_init(struct jail_cgroup_sys *sys, const char *instance)
{
        memset(sys, 0, sizeof(*sys));
        if (init_v2(sys, instance))
                return;
        memset(sys, 0, sizeof(*sys));
        if (!init_v1_one("memory", instance, sys->base_mem, sizeof(sys->base_mem))) {
                snprintf(sys->description, sizeof(sys->description),
                         "no cgroup: neither a v2 hierarchy with memory and pids nor a v1 memory hierarchy is usable");
                return;
        }
        if (!init_v1_one("pids", instance, sys->base_pids, sizeof(sys->base_pids)))
                sys->base_pids[0] = 0;
        if (!init_v1_one("cpuacct", instance, sys->base_cpu, sizeof(sys->base_cpu)))
                sys->base_cpu[0] = 0;
        sys->mode = JAIL_CG_V1;
        snprintf(sys->description, sizeof(sys->description), "cgroup v1 (memory%s%s)",
                 sys->base_pids[0] ? ", pids" : "", sys->base_cpu[0] ? ", cpuacct" : "");
}

static void sweep(const char *base)
{
        if (!*base)
                return;
        _cleanup_closedir_ DIR *d = opendir(base);
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_type == DT_DIR && de->d_name[0] != '.')
                        (void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
}

void jail_cgroup_sys_sweep(const struct jail_cgroup_sys *sys)
{
        sweep(sys->base_mem);
        sweep(sys->base_pids);
        sweep(sys->base_cpu);
}

void jail_cgroup_sys_fini(const struct jail_cgroup_sys *sys)
{
        const char *bases[] = { sys->base_mem, sys->base_pids, sys->base_cpu };
        for (unsigned i = 0; i < ELEMENTSOF(bases); i++)
                if (bases[i][0])
                        (void)rmdir(bases[i]);
}

static int mk(const char *base, const char *run_id, char *out, size_t size, struct anvil_err *err)
{
        if (snprintf(out, size, "%s/%s", base, run_id) >= (int)size)
                return anvil_err_set(err, ENAMETOOLONG, "cgroup path under %s is too long", base);
        if (mkdir(out, 0755) < 0)
                return anvil_err_sys(err, errno, "Failed to create cgroup %s", out);
        return 0;
}

int jail_cgroup_set_limits(const struct jail_cgroup *cg, uint64_t mem_limit, uint64_t pids_max, struct anvil_err *err)
{
        char num[32], pids[32];
        int r;
        snprintf(num, sizeof(num), "%" PRIu64, mem_limit);
        snprintf(pids, sizeof(pids), "%" PRIu64, pids_max);
        switch (cg->mode) {
        case JAIL_CG_NONE:
                return 0;
        case JAIL_CG_V2:
                if ((r = write_at(cg->mem, "memory.max", num)) < 0 || (r = write_at(cg->mem, "pids.max", pids)) < 0)
                        return anvil_err_sys(err, -r, "Failed to set limits in %s", cg->mem);
                (void)write_at(cg->mem, "memory.swap.max", "0"); /* absent without swap accounting */
                return 0;
        case JAIL_CG_V1:
                /* memsw (memory + swap) must never be below the memory limit: raise it first
                 * when the limit goes up, lower it after when the limit goes down. Both are
                 * absent without swap accounting. */
                (void)write_at(cg->mem, "memory.memsw.limit_in_bytes", num);
                if ((r = write_at(cg->mem, "memory.limit_in_bytes", num)) < 0)
                        return anvil_err_sys(err, -r, "Failed to set memory.limit_in_bytes in %s", cg->mem);
                (void)write_at(cg->mem, "memory.memsw.limit_in_bytes", num);
                if (cg->pids[0] && (r = write_at(cg->pids, "pids.max", pids)) < 0)
                        return anvil_err_sys(err, -r, "Failed to set pids.max in %s", cg->pids);
                return 0;
        }
        return 0;
}

int jail_cgroup_prepare(const struct jail_cgroup_sys *sys, const char *name, uint64_t mem_limit,
                        uint64_t pids_max, struct jail_cgroup *cg, struct anvil_err *err)
{
        memset(cg, 0, sizeof(*cg));
        cg->mode = sys->mode;
        if (sys->mode == JAIL_CG_NONE)
                return 0;
        int r = mk(sys->base_mem, name, cg->mem, sizeof(cg->mem), err);
        if (r >= 0 && sys->mode == JAIL_CG_V1 && sys->base_pids[0])
                r = mk(sys->base_pids, name, cg->pids, sizeof(cg->pids), err);
        if (r >= 0 && sys->mode == JAIL_CG_V1 && sys->base_cpu[0])
                r = mk(sys->base_cpu, name, cg->cpu, sizeof(cg->cpu), err);
        if (r >= 0)
                r = jail_cgroup_set_limits(cg, mem_limit, pids_max, err);
        if (r < 0)
                jail_cgroup_destroy(cg);
        return r;
}

int jail_cgroup_parent(const struct jail_cgroup *cg, pid_t pid, struct anvil_err *err)
{
        char num[32];
        snprintf(num, sizeof(num), "%d", (int)pid);
        const char *dirs[] = { cg->mem, cg->pids, cg->cpu };
        for (unsigned i = 0; i < ELEMENTSOF(dirs); i++) {
                if (!dirs[i][0])
                        continue;
                int r = write_at(dirs[i], "cgroup.procs", num);
                if (r < 0)
                        return anvil_err_sys(err, -r, "Failed to move pid %d into %s", (int)pid, dirs[i]);
        }
        return 0;
}

int jail_cgroup_read(const struct jail_cgroup *cg, struct jail_cgroup_stats *st)
{
        memset(st, 0, sizeof(*st));
        if (cg->mode == JAIL_CG_NONE)
                return -ENOENT;
        char buf[8192];
        uint64_t a = 0, s = 0;
        if (read_at(cg->mem, "memory.stat", buf, sizeof(buf)) < 0)
                return -errno;
        if (cg->mode == JAIL_CG_V2) {
                (void)kv_get(buf, "anon", &a);
                (void)kv_get(buf, "shmem", &s);
                st->mem_bytes = a + s;
                st->peak_bytes = read_u64(cg->mem, "memory.peak"); /* Linux 5.19 */
                if (read_at(cg->mem, "memory.events", buf, sizeof(buf)) == 0)
                        (void)kv_get(buf, "oom_kill", &st->oom_kills);
                if (read_at(cg->mem, "cpu.stat", buf, sizeof(buf)) == 0)
                        st->has_cpu = kv_get(buf, "usage_usec", &st->cpu_us);
                return 0;
        }
        (void)kv_get(buf, "rss", &a);
        (void)kv_get(buf, "shmem", &s);
        st->mem_bytes = a + s;
        st->peak_bytes = read_u64(cg->mem, "memory.max_usage_in_bytes");
        if (read_at(cg->mem, "memory.oom_control", buf, sizeof(buf)) == 0)
                (void)kv_get(buf, "oom_kill", &st->oom_kills);
        if (cg->cpu[0]) {
                st->cpu_us = read_u64(cg->cpu, "cpuacct.usage") / 1000u;
                st->has_cpu = true;
        }
        return 0;
}

bool jail_cgroup_contains(const struct jail_cgroup *cg, pid_t pid)
{
        if (cg->mode == JAIL_CG_NONE)
                return false;
        char p[64], buf[4096];
        snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = 0;
        /* Our view of the run's path: its directory name, which is the run id, ends a line. */
        const char *name = strrchr(cg->mem, '/');
        char want[PATH_MAX + 2];
        if (snprintf(want, sizeof(want), "%s\n", name ? name : cg->mem) >= (int)sizeof(want))
                return false;
        return strstr(buf, want) != NULL;
}

void jail_cgroup_destroy(struct jail_cgroup *cg)
{
        char *dirs[] = { cg->mem, cg->pids, cg->cpu };
        for (unsigned i = 0; i < ELEMENTSOF(dirs); i++) {
                if (dirs[i][0])
                        (void)rmdir(dirs[i]);
                dirs[i][0] = 0;
        }
}
