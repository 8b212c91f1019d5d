#define _GNU_SOURCE
#include "jail/verify.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/lines.h"
#include "lib/proc.h"
#include "policy/reasons.h"

static int refuse(struct anvil_err *err, const char *layer, const char *evidence)
{
        char buf[256];
        return anvil_err_set(err, EPERM, "%s",
                             POL_REASON(buf, sizeof(buf), REFUSED_NOT_IN_FORCE, layer, evidence));
}

static int push(struct proto_strv *v, const char *s, struct anvil_err *err)
{
        if (proto_strv_push(v, s) < 0)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        return 0;
}

static int check_ns(pid_t pid, struct proto_strv *mech, struct anvil_err *err)
{
        static const char *const ns[] = { "user", "mnt", "pid", "net", "ipc", "uts", "cgroup" };
        for (unsigned i = 0; i < ELEMENTSOF(ns); i++) {
                char mine[64], theirs[64], ev[160];
                struct stat a, b;
                snprintf(mine, sizeof(mine), "/proc/self/ns/%s", ns[i]);
                snprintf(theirs, sizeof(theirs), "/proc/%d/ns/%s", (int)pid, ns[i]);
                if (stat(mine, &a) < 0 || stat(theirs, &b) < 0) {
                        snprintf(ev, sizeof(ev), "cannot read %s: %s", theirs, strerror(errno));
                        return refuse(err, "namespaces", ev);
                }
                if (a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
                        snprintf(ev, sizeof(ev), "%s namespace is the supervisor's (inode %llu)", ns[i],
                                 (unsigned long long)b.st_ino);
                        return refuse(err, "namespaces", ev);
                }
                char name[32];
                snprintf(name, sizeof(name), "%sns", ns[i]);
                int r = push(mech, name, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int check_status(pid_t pid, uid_t host_uid, bool keeps_bounding, struct proto_strv *mech,
                        struct anvil_err *err)
{
        char p[64], buf[8192], v[128], ev[200];
        snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
        if (fd_read_small(p, buf, sizeof(buf), 0, NULL) <= 0) {
                snprintf(ev, sizeof(ev), "cannot read %s", p);
                return refuse(err, "capabilities", ev);
        }
        static const char *const caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
        for (unsigned i = 0; i < ELEMENTSOF(caps); i++) {
                if (keeps_bounding && strcmp(caps[i], "CapBnd") == 0)
                        continue;
                if (!proc_status_get(buf, caps[i], v, sizeof(v)) || strtoull(v, NULL, 16) != 0) {
                        snprintf(ev, sizeof(ev), "%s is %s", caps[i], proc_status_get(buf, caps[i], v, sizeof(v)) ? v : "missing");
                        return refuse(err, "capabilities", ev);
                }
        }
        int r = push(mech, keeps_bounding ? "no capabilities held (an ordinary user's; bounding set not emptied)"
                                          : "capabilities dropped",
                     err);
        if (r < 0)
                return r;
        if (!proc_status_get(buf, "NoNewPrivs", v, sizeof(v)) || strcmp(v, "1") != 0) {
                snprintf(ev, sizeof(ev), "NoNewPrivs is %s", v);
                return refuse(err, "no_new_privs", ev);
        }
        if ((r = push(mech, "no_new_privs", err)) < 0)
                return r;
        /* Real, effective, saved and filesystem uid: all the run's own host uid. */
        unsigned u[4];
        if (!proc_status_get(buf, "Uid", v, sizeof(v)) || sscanf(v, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4 ||
            u[0] != host_uid || u[1] != host_uid || u[2] != host_uid || u[3] != host_uid) {
                snprintf(ev, sizeof(ev), "Uid is %s, expected %u", v, (unsigned)host_uid);
                return refuse(err, "user namespace uid map", ev);
        }
        snprintf(ev, sizeof(ev), "host uid %u", (unsigned)host_uid);
        return push(mech, ev, err);
}

/* The soft limit on the line of /proc/<pid>/limits that starts with what ("Max cpu time"):
 * 0, or -1. That file is readable where prlimit(2) is not (a process of another uid in our
 * own user namespace, without CAP_SYS_RESOURCE: the direct rung as root, here). */
static int limits_file(pid_t pid, const char *what, rlim_t *out)
{
        char p[64], buf[4096];
        snprintf(p, sizeof(p), "/proc/%d/limits", (int)pid);
        if (fd_read_small(p, buf, sizeof(buf), 0, NULL) <= 0)
                return -1;
        size_t wl = strlen(what), len;
        struct lines it = lines_of_str(buf);
        const char *l;
        while (lines_next(&it, &l, &len))
                if (line_starts(l, len, what) && len > wl && l[wl] == ' ') {
                        const char *v = l + 26; /* the soft limit's column */
                        if (len < 27)
                                return -1;
                        v += strspn(v, " ");
                        if (strncmp(v, "unlimited", 9) == 0)
                                *out = RLIM_INFINITY;
                        else
                                *out = (rlim_t)strtoull(v, NULL, 10);
                        return 0;
                }
        return -1;
}

static int check_rlimits(pid_t pid, const struct jail_rlimits *rl, struct proto_strv *mech, struct anvil_err *err)
{
        const struct {
                int res;
                const char *name;
                const char *line;
                uint64_t want;
        } want[] = {
                { RLIMIT_CPU, "RLIMIT_CPU", "Max cpu time", rl->cpu_s },
                { RLIMIT_FSIZE, "RLIMIT_FSIZE", "Max file size", rl->fsize_bytes },
                { RLIMIT_NPROC, "RLIMIT_NPROC", "Max processes", rl->nproc },
                { RLIMIT_NOFILE, "RLIMIT_NOFILE", "Max open files", rl->nofile },
                { RLIMIT_CORE, "RLIMIT_CORE", "Max core file size", 0 },
                { RLIMIT_AS, "RLIMIT_AS", "Max address space", rl->as_bytes ? rl->as_bytes : RLIM_INFINITY },
        };
        for (unsigned i = 0; i < ELEMENTSOF(want); i++) {
                struct rlimit cur;
                char ev[160];
                if (want[i].res == RLIMIT_NPROC && rl->nproc == 0)
                        continue; /* left alone on purpose (rlimit.c) */
                if (prlimit(pid, want[i].res, NULL, &cur) < 0 &&
                    (errno != EPERM || limits_file(pid, want[i].line, &cur.rlim_cur) < 0)) {
                        snprintf(ev, sizeof(ev), "cannot read %s: %s", want[i].name, strerror(errno));
                        return refuse(err, "rlimits", ev);
                }
                if (cur.rlim_cur != want[i].want) {
                        snprintf(ev, sizeof(ev), "%s is %llu, expected %llu", want[i].name,
                                 (unsigned long long)cur.rlim_cur, (unsigned long long)want[i].want);
                        return refuse(err, "rlimits", ev);
                }
        }
        return push(mech, rl->as_bytes ? (rl->nproc ? "rlimits (cpu, fsize, nproc, nofile, core, as)"
                                                    : "rlimits (cpu, fsize, nofile, core, as)")
                                       : (rl->nproc ? "rlimits (cpu, fsize, nproc, nofile, core)"
                                                    : "rlimits (cpu, fsize, nofile, core)"),
                    err);
}

int jail_verify_parent(pid_t pid, const struct jail_expect *x, struct proto_strv *mechanisms,
                       struct anvil_err *err)
{
        int r;
        if ((!x->direct && (r = check_ns(pid, mechanisms, err)) < 0) ||
            (r = check_status(pid, x->host_uid, x->keeps_bounding, mechanisms, err)) < 0 ||
            (r = check_rlimits(pid, x->rlimits, mechanisms, err)) < 0)
                return r;
        if (x->cgroup && x->cgroup->mode != JAIL_CG_NONE) {
                char mech[160];
                if ((r = jail_cgroup_verify(x->cgroup, pid, mech, sizeof(mech), err)) < 0 ||
                    (r = push(mechanisms, mech, err)) < 0)
                        return r;
        }
        return 0;
}
