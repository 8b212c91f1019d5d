/* Finding the cgroup hierarchies at start-up, and where in them the supervisor may create its
 * cgroups. Runs once, on the main thread, before anything else of the supervisor's exists.
 *
 * Where, on cgroup v2 (jail_cgroup_v2_place):
 *   - the supervisor is in the hierarchy's real root (a machine or VM without systemd, like
 *     the one this was built on): its base goes below the root, which may hold processes;
 *   - its own cgroup is delegated to it: systemd marks a unit's cgroup that has Delegate=yes
 *     with the trusted.delegate xattr (user.delegate for a user manager's), and
 *     `--cgroup delegated` says so for a manager that does not mark it; a cgroup namespace's
 *     root (a container's) is delegated by whoever made it. v2 forbids processes in a cgroup
 *     that hands controllers to its children ("no internal processes"), so the supervisor
 *     first moves itself into a leaf `supervisor/` beside its base, as systemd's
 *     CGROUP_DELEGATION.md describes;
 *   - otherwise its cgroup belongs to whoever manages it (systemd's unit without
 *     Delegate=yes, a login session's scope): creating cgroups there, or at the root beside
 *     systemd's, is what systemd's rules forbid, so v2 is not used and the log says why.
 * The checks that can fail (controllers delegated, files writable) are made before the
 * supervisor moves, so a v2 tree it cannot use is left exactly as it was.
 *
 * On cgroup v1 each controller's base goes below the supervisor's own cgroup in that
 * controller's hierarchy: v1 has no "no internal processes" rule, and systemd delegates v1
 * hierarchies the same way (Delegate=yes) without marking them. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "jail/cgroup-fs.h"
#include "lib/cleanup.h"
#include "lib/lines.h"
#include "lib/fd.h"

/* ---- parsing ---- */

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
        char *o = s;
        for (char *i = s; *i; i++) {
                if (i[0] == '\\' && i[1] >= '0' && i[1] <= '3' && i[2] >= '0' && i[2] <= '7' && i[3] >= '0' &&
                    i[3] <= '7') {
                        *o++ = (char)((i[1] - '0') * 64 + (i[2] - '0') * 8 + (i[3] - '0'));
                        i += 3;
                } else
                        *o++ = *i;
        }
        *o = 0;
}

static bool has_token(const char *list, const char *sep, const char *want)
{
        size_t n = strlen(want);
        for (const char *t = list; t && *t;) {
                size_t len = strcspn(t, sep);
                if (len == n && strncmp(t, want, n) == 0)
                        return true;
                t += len;
                if (*t)
                        t++;
        }
        return false;
}

bool jail_cgroup_find_mount(const char *mountinfo, const char *ctrl, char *mnt, size_t mnt_size, char *root,
                            size_t root_size)
{
        struct lines it = lines_of_str(mountinfo);
        const char *l;
        size_t len;
        while (lines_next(&it, &l, &len)) {
                /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
                char line[8192], r[PATH_MAX], mp[PATH_MAX], fstype[32], super[1024];
                if (len >= sizeof(line))
                        continue;
                memcpy(line, l, len);
                line[len] = 0;
                const char *dash = strstr(line, " - ");
                if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", r, mp) != 2 ||
                    sscanf(dash + 3, "%31s %*s %1023s", fstype, super) != 2)
                        continue;
                bool match = *ctrl ? strcmp(fstype, "cgroup") == 0 && has_token(super, ",", ctrl)
                                   : strcmp(fstype, "cgroup2") == 0;
                if (!match)
                        continue;
                unescape(r);
                unescape(mp);
                if ((size_t)snprintf(mnt, mnt_size, "%s", mp) >= mnt_size ||
                    (size_t)snprintf(root, root_size, "%s", strcmp(r, "/") == 0 ? "" : r) >= root_size)
                        return false;
                return true;
        }
        return false;
}

bool jail_cgroup_find_own(const char *proc_cgroup, const char *ctrl, char *own, size_t size)
{
        struct lines it = lines_of_str(proc_cgroup);
        const char *l;
        size_t len;
        while (lines_next(&it, &l, &len)) {
                /* hierarchy-id:controllers:path */
                const char *c1 = memchr(l, ':', len);
                const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - l)) : NULL;
                if (!c2)
                        continue;
                char ctrls[256];
                size_t cn = (size_t)(c2 - c1 - 1);
                if (cn >= sizeof(ctrls))
                        continue;
                memcpy(ctrls, c1 + 1, cn);
                ctrls[cn] = 0;
                bool match = *ctrl ? has_token(ctrls, ",", ctrl) : (c1 - l == 1 && l[0] == '0' && cn == 0);
                if (!match)
                        continue;
                const char *path = c2 + 1;
                size_t pn = len - (size_t)(path - l);
                if (pn == 1 && path[0] == '/')
                        pn = 0;
                if (pn >= size)
                        return false;
                memcpy(own, path, pn);
                own[pn] = 0;
                return true;
        }
        return false;
}

enum jail_cg_v2_place jail_cgroup_v2_place(const char *own, bool real_root, bool marked, bool assume_delegated)
{
        if (*own == 0 && real_root)
                return JAIL_CG_V2_AT_ROOT;
        /* A cgroup namespace's root: the container's manager gave us this subtree. */
        if (*own == 0)
                return JAIL_CG_V2_DELEGATED;
        if (marked || assume_delegated)
                return JAIL_CG_V2_DELEGATED;
        return JAIL_CG_V2_NOT_OURS;
}

/* ---- start-up ---- */

struct host {
        char *mountinfo;
        char *cgroup; /* /proc/self/cgroup */
};

static void note(struct jail_cgroup_sys *sys, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct jail_cgroup_sys *sys, const char *fmt, ...)
{
        size_t n = strlen(sys->notes);
        if (n + 3 >= sizeof(sys->notes))
                return;
        if (n) {
                strcpy(sys->notes + n, "; ");
                n += 2;
        }
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sys->notes + n, sizeof(sys->notes) - n, fmt, ap);
        va_end(ap);
}

/* Our cgroup in hierarchy ctrl ("" for v2): its directory, and its path as /proc names it. */
static bool locate(const struct host *h, const char *ctrl, char *dir, size_t dir_size, char *own, size_t own_size)
{
        char mnt[PATH_MAX], root[PATH_MAX];
        if (!jail_cgroup_find_mount(h->mountinfo, ctrl, mnt, sizeof(mnt), root, sizeof(root)) ||
            !jail_cgroup_find_own(h->cgroup, ctrl, own, own_size))
                return false;
        /* The mount may show a subtree only (a bind mount): our path must be inside it. */
        size_t rn = strlen(root);
        if (strncmp(own, root, rn) != 0 || (own[rn] != 0 && own[rn] != '/'))
                return false;
        return (size_t)snprintf(dir, dir_size, "%s%s", mnt, own + rn) < dir_size;
}

/* systemd's mark of a delegated cgroup (systemd's own cg_is_delegated() reads the same two):
 * the xattr's name, or NULL. */
static const char *delegate_mark(const char *dir)
{
        static const char *const names[] = { "trusted.delegate", "user.delegate" };
        for (unsigned i = 0; i < ELEMENTSOF(names); i++) {
                char v[8];
                ssize_t n = getxattr(dir, names[i], v, sizeof(v));
                if (n == 1 && v[0] == '1')
                        return names[i];
        }
        return NULL;
}

static int mkdir_p1(const char *dir)
{
        return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

/* Enables ctrls (space-separated, "+memory +pids") below dir. */
static int enable(const char *dir, const char *ctrls)
{
        return jail_cg_write(dir, "cgroup.subtree_control", ctrls);
}

struct v2_setup {
        char base[PATH_MAX];
        char rel[PATH_MAX];
        bool cpu; /* the cpu controller is enabled below base */
};

/* Sets up a base in the v2 hierarchy with the controllers in need ("memory pids", or "cpu"
 * alone), and cpu as well if want_cpu and it is there. false: v2 is not used, and why is noted. */
static bool v2_init(struct jail_cgroup_sys *sys, const struct host *h, const char *instance,
                    const struct jail_cgroup_opts *o, const char *const *need, unsigned n_need, bool want_cpu,
                    struct v2_setup *out)
{
        char dir[PATH_MAX], own[PATH_MAX], ctrls[512], type[64];
        if (!locate(h, "", dir, sizeof(dir), own, sizeof(own)))
                return false;
        const char *shown = *own ? own : "/";
        /* Whose the cgroup is, first: it decides whether anything here may be touched. */
        bool real_root = jail_cg_read(dir, "cgroup.type", type, sizeof(type)) == -ENOENT;
        const char *mark = delegate_mark(dir);
        enum jail_cg_v2_place place = jail_cgroup_v2_place(own, real_root, mark != NULL, o->assume_delegated);
        if (place == JAIL_CG_V2_NOT_OURS) {
                note(sys,
                     "cgroup v2: not used: %s is not delegated to this supervisor (no trusted.delegate or "
                     "user.delegate xattr: run it under systemd with Delegate=yes, or pass --cgroup delegated)",
                     shown);
                return false;
        }
        if (place == JAIL_CG_V2_DELEGATED)
                note(sys, "cgroup v2: %s is delegated to this supervisor (%s)", shown,
                     mark ? mark : *own ? "--cgroup delegated" : "the root of its cgroup namespace");
        if (jail_cg_read(dir, "cgroup.controllers", ctrls, sizeof(ctrls)) < 0)
                ctrls[0] = 0;
        ctrls[strcspn(ctrls, "\n")] = 0;
        for (unsigned i = 0; i < n_need; i++)
                if (!has_token(ctrls, " ", need[i])) {
                        note(sys, "cgroup v2: %s has no %s controller (its cgroup.controllers: '%s')", shown, need[i],
                             ctrls);
                        return false;
                }
        char want[128] = "";
        for (unsigned i = 0; i < n_need; i++)
                snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s+%s", i ? " " : "", need[i]);
        bool cpu = want_cpu && has_token(ctrls, " ", "cpu");
        if (access(dir, W_OK) < 0 || access(dir, X_OK) < 0) {
                note(sys, "cgroup v2: %s is not writable here: %s", shown, strerror(errno));
                return false;
        }
        char leaf[PATH_MAX + 16] = "";
        int r;
        out->base[0] = 0;
        if (place == JAIL_CG_V2_DELEGATED) {
                /* No internal processes: out of our cgroup into a leaf, before our cgroup hands
                 * controllers down. */
                char pid[32];
                snprintf(leaf, sizeof(leaf), "%s/supervisor", dir);
                snprintf(pid, sizeof(pid), "%d", (int)getpid());
                if ((r = mkdir_p1(leaf)) < 0 || (r = jail_cg_write(leaf, "cgroup.procs", pid)) < 0) {
                        note(sys, "cgroup v2: cannot move into %s/supervisor: %s", shown, strerror(-r));
                        if (r != -EEXIST)
                                (void)rmdir(leaf);
                        return false;
                }
        }
        if ((r = enable(dir, want)) < 0) {
                note(sys, "cgroup v2: cannot enable %s in %s/cgroup.subtree_control: %s%s", want, shown, strerror(-r),
                     r == -EBUSY ? " (other processes are in it)" : "");
                goto undo;
        }
        if (cpu && enable(dir, "+cpu") < 0)
                cpu = false;
        if ((size_t)snprintf(out->base, sizeof(out->base), "%s/%s", dir, instance) >= sizeof(out->base) ||
            (size_t)snprintf(out->rel, sizeof(out->rel), "%s/%s", own, instance) >= sizeof(out->rel)) {
                note(sys, "cgroup v2: the path of %s is too long", shown);
                out->base[0] = 0;
                goto undo;
        }
        if ((r = mkdir_p1(out->base)) < 0 || (r = enable(out->base, want)) < 0) {
                note(sys, "cgroup v2: cannot set up %s/%s: %s", shown, instance, strerror(-r));
                goto undo;
        }
        out->cpu = cpu && enable(out->base, "+cpu") == 0;
        if (leaf[0])
                snprintf(sys->leaf, sizeof(sys->leaf), "%s", leaf);
        return true;
undo:
        if (leaf[0]) {
                /* The tree as we found it, and back where we were: the controllers we enabled go
                 * first (a cgroup that hands them down may hold no process). */
                char pid[32];
                snprintf(pid, sizeof(pid), "%d", (int)getpid());
                if (out->base[0])
                        (void)rmdir(out->base);
                (void)enable(dir, "-cpu");
                (void)enable(dir, "-memory -pids");
                (void)jail_cg_write(dir, "cgroup.procs", pid);
                (void)rmdir(leaf);
        }
        return false;
}

static bool v1_init(const struct host *h, const char *ctrl, const char *instance, char *base, size_t base_size,
                    char *rel, size_t rel_size)
{
        char dir[PATH_MAX], own[PATH_MAX];
        if (!locate(h, ctrl, dir, sizeof(dir), own, sizeof(own)))
                return false;
        if ((size_t)snprintf(base, base_size, "%s/%s", dir, instance) >= base_size ||
            (size_t)snprintf(rel, rel_size, "%s/%s", own, instance) >= rel_size)
                return false;
        return mkdir_p1(base) == 0;
}

static void set_ctl(struct jail_cgroup_sys *sys, enum jail_cg_ctl c, const char *base, const char *rel, bool v2)
{
        snprintf(sys->base[c], sizeof(sys->base[c]), "%s", base);
        snprintf(sys->rel[c], sizeof(sys->rel[c]), "%s", rel);
        sys->v2[c] = v2;
}

/* A quota the kernel takes: written to a probe cgroup below the base and read back, so that a
 * kernel without CFS bandwidth control, or a parent whose own quota is lower (v1 refuses a
 * child's larger quota), is found now rather than in every run. */
static bool cpu_quota_works(struct jail_cgroup_sys *sys)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct jail_cgroup probe;
        memset(&probe, 0, sizeof(probe));
        probe.mode = sys->mode;
        probe.cpu_quota_us = sys->cpu_quota_us;
        probe.v2[JAIL_CG_CPU] = sys->v2[JAIL_CG_CPU];
        char *dir = probe.dir[JAIL_CG_CPU];
        if ((size_t)snprintf(dir, sizeof(probe.dir[JAIL_CG_CPU]), "%s/quota-probe", sys->base[JAIL_CG_CPU]) >=
            sizeof(probe.dir[JAIL_CG_CPU]))
                return false;
        (void)jail_cg_rmdir(dir);
        if (mkdir(dir, 0755) < 0) {
                note(sys, "cpu quota: cannot create %s: %s", dir, strerror(errno));
                return false;
        }
        /* The probe has a cpu directory only: set_limits writes memory first, so the quota is
         * written here the way set_limits writes it, through the same table. */
        struct jail_cgroup_limits lim;
        int r = jail_cg_set_cpu(&probe, sys->cpu_quota_us, JAIL_CG_CPU_PERIOD_US, &err);
        bool ok = r == 0 && jail_cgroup_read_limits(&probe, &lim) == 0 && lim.cpu_quota_us == sys->cpu_quota_us &&
                  lim.cpu_period_us == JAIL_CG_CPU_PERIOD_US;
        if (!ok)
                note(sys, "cpu quota: not usable in %s: %s", sys->base[JAIL_CG_CPU],
                     r < 0 ? err.msg : "the quota written does not read back");
        (void)jail_cg_rmdir(dir);
        return ok;
}

static void describe(struct jail_cgroup_sys *sys)
{
        char cpu[96] = "";
        if (sys->cpu_quota_us)
                snprintf(cpu, sizeof(cpu), ", cpu quota %" PRIu64 "%% of a CPU%s",
                         sys->cpu_quota_us * 100 / JAIL_CG_CPU_PERIOD_US,
                         sys->v2[JAIL_CG_CPU] != sys->v2[JAIL_CG_MEMORY] ? (sys->v2[JAIL_CG_CPU] ? " (v2)" : " (v1)")
                                                                          : "");
        snprintf(sys->description, sizeof(sys->description), "cgroup %s (memory%s%s%s)%s",
                 sys->mode == JAIL_CG_V2 ? "v2" : "v1", sys->base[JAIL_CG_PIDS][0] ? ", pids" : "", cpu,
                 sys->base[JAIL_CG_CPUACCT][0] ? ", cpuacct" : "", sys->leaf[0] ? ", in a delegated subtree" : "");
}

void jail_cgroup_sys_init(struct jail_cgroup_sys *sys, const char *instance, const struct jail_cgroup_opts *o)
{
        memset(sys, 0, sizeof(*sys));
        unsigned pct = o ? o->cpu_quota_pct : 0;
        struct jail_cgroup_opts none = { 0 };
        if (!o)
                o = &none;
        struct anvil_err err = ANVIL_ERR_INIT;
        _cleanup_free_ uint8_t *mi = NULL, *pc = NULL;
        size_t n;
        if (fd_read_file("/proc/self/mountinfo", 4u << 20, &mi, &n, &err) < 0 ||
            fd_read_file("/proc/self/cgroup", 1u << 20, &pc, &n, &err) < 0) {
                note(sys, "no cgroup: %s", err.msg);
                return;
        }
        struct host h = { (char *)mi, (char *)pc };
        static const char *const mem_pids[] = { "memory", "pids" };
        struct v2_setup v2;
        if (v2_init(sys, &h, instance, o, mem_pids, 2, pct > 0, &v2)) {
                sys->mode = JAIL_CG_V2;
                set_ctl(sys, JAIL_CG_MEMORY, v2.base, v2.rel, true);
                set_ctl(sys, JAIL_CG_PIDS, v2.base, v2.rel, true);
                if (v2.cpu)
                        set_ctl(sys, JAIL_CG_CPU, v2.base, v2.rel, true);
                else if (pct)
                        note(sys, "cpu quota: no cpu controller in the v2 hierarchy below %s", v2.base);
        } else {
                char base[PATH_MAX], rel[PATH_MAX];
                if (!v1_init(&h, "memory", instance, base, sizeof(base), rel, sizeof(rel))) {
                        note(sys, "no cgroup: neither a v2 hierarchy with memory and pids nor a v1 memory hierarchy "
                                  "is usable");
                        return;
                }
                sys->mode = JAIL_CG_V1;
                set_ctl(sys, JAIL_CG_MEMORY, base, rel, false);
                if (v1_init(&h, "pids", instance, base, sizeof(base), rel, sizeof(rel)))
                        set_ctl(sys, JAIL_CG_PIDS, base, rel, false);
                else
                        note(sys, "cgroup v1: no pids hierarchy (processes are bounded by RLIMIT_NPROC alone)");
                if (v1_init(&h, "cpuacct", instance, base, sizeof(base), rel, sizeof(rel)))
                        set_ctl(sys, JAIL_CG_CPUACCT, base, rel, false);
                if (pct && v1_init(&h, "cpu", instance, base, sizeof(base), rel, sizeof(rel)))
                        set_ctl(sys, JAIL_CG_CPU, base, rel, false);
                else if (pct) {
                        /* Memory on v1, cpu perhaps on v2 (a hybrid host whose cpu controller
                         * is not bound to a v1 hierarchy). */
                        static const char *const cpu_only[] = { "cpu" };
                        if (v2_init(sys, &h, instance, o, cpu_only, 1, false, &v2))
                                set_ctl(sys, JAIL_CG_CPU, v2.base, v2.rel, true);
                        else
                                note(sys, "cpu quota: no usable cpu controller in v1 or v2");
                }
        }
        if (pct && sys->base[JAIL_CG_CPU][0]) {
                sys->cpu_quota_us = (uint64_t)pct * JAIL_CG_CPU_PERIOD_US / 100;
                if (!cpu_quota_works(sys)) {
                        sys->cpu_quota_us = 0;
                        /* The v1 cpu base is ours alone (v2's is the memory base): remove it. */
                        if (!sys->v2[JAIL_CG_CPU] || sys->mode == JAIL_CG_V1)
                                if (strcmp(sys->base[JAIL_CG_CPU], sys->base[JAIL_CG_MEMORY]) != 0 &&
                                    strcmp(sys->base[JAIL_CG_CPU], sys->base[JAIL_CG_CPUACCT]) != 0)
                                        (void)rmdir(sys->base[JAIL_CG_CPU]);
                        sys->base[JAIL_CG_CPU][0] = 0;
                }
        }
        describe(sys);
}

/* Each distinct base once (co-mounted hierarchies, and all of v2, share one). */
static bool first_base(const struct jail_cgroup_sys *sys, unsigned c)
{
        if (!sys->base[c][0])
                return false;
        for (unsigned o = 0; o < c; o++)
                if (strcmp(sys->base[o], sys->base[c]) == 0)
                        return false;
        return true;
}

int jail_cgroup_sys_sweep(const struct jail_cgroup_sys *sys, unsigned *removed, struct anvil_err *err)
{
        int first = 0;
        *removed = 0;
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++) {
                if (!first_base(sys, c))
                        continue;
                _cleanup_closedir_ DIR *d = opendir(sys->base[c]);
                if (!d)
                        continue;
                struct dirent *de;
                while ((de = readdir(d))) {
                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        char dir[PATH_MAX];
                        if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", sys->base[c], de->d_name) >= sizeof(dir))
                                continue;
                        (void)jail_cg_kill_members(dir, sys->v2[c]);
                        int r = jail_cg_rmdir(dir);
                        if (r == 0)
                                (*removed)++;
                        else if (first == 0)
                                first = anvil_err_sys(err, -r, "Failed to remove the leftover cgroup %s", dir);
                }
        }
        return first;
}

void jail_cgroup_sys_fini(const struct jail_cgroup_sys *sys)
{
        /* The supervisor stays in its leaf (sys->leaf): its own cgroup hands controllers
         * down, so it may not move back, and the service manager removes both after it. */
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++)
                if (first_base(sys, c))
                        (void)jail_cg_rmdir(sys->base[c]);
}
