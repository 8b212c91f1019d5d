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
#include "lib/proc.h"
#include "policy/reasons.h"

static int refuse(struct anvil_err *err, const char *layer, const char *evidence)
{
        char buf[256];
        return anvil_err_set(err, EPERM, "%s",
                             pol_reason(buf, sizeof(buf), POL_REFUSED_NOT_IN_FORCE, layer, evidence));
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

static int check_status(pid_t pid, uid_t host_uid, struct proto_strv *mech, struct anvil_err *err)
{
        char p[64], buf[8192], v[128], ev[200];
        snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (n <= 0) {
                snprintf(ev, sizeof(ev), "cannot read %s", p);
                return refuse(err, "capabilities", ev);
        }
        buf[n] = 0;
        static const char *const caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
        for (unsigned i = 0; i < ELEMENTSOF(caps); i++) {
                if (!proc_status_get(buf, caps[i], v, sizeof(v)) || strtoull(v, NULL, 16) != 0) {
                        snprintf(ev, sizeof(ev), "%s is %s", caps[i], proc_status_get(buf, caps[i], v, sizeof(v)) ? v : "missing");
                        return refuse(err, "capabilities", ev);
                }
        }
        int r = push(mech, "capabilities dropped", err);
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

static int check_rlimits(pid_t pid, const struct jail_rlimits *rl, struct proto_strv *mech, struct anvil_err *err)
{
        const struct {
                int res;
                const char *name;
                uint64_t want;
        } want[] = {
                { RLIMIT_CPU, "RLIMIT_CPU", rl->cpu_s },
                { RLIMIT_FSIZE, "RLIMIT_FSIZE", rl->fsize_bytes },
                { RLIMIT_NPROC, "RLIMIT_NPROC", rl->nproc },
                { RLIMIT_NOFILE, "RLIMIT_NOFILE", rl->nofile },
                { RLIMIT_CORE, "RLIMIT_CORE", 0 },
                { RLIMIT_AS, "RLIMIT_AS", rl->as_bytes ? rl->as_bytes : RLIM_INFINITY },
        };
        for (unsigned i = 0; i < ELEMENTSOF(want); i++) {
                struct rlimit cur;
                char ev[160];
                if (prlimit(pid, want[i].res, NULL, &cur) < 0) {
                        snprintf(ev, sizeof(ev), "cannot read %s: %s", want[i].name, strerror(errno));
                        return refuse(err, "rlimits", ev);
                }
                if (cur.rlim_cur != want[i].want) {
                        snprintf(ev, sizeof(ev), "%s is %llu, expected %llu", want[i].name,
                                 (unsigned long long)cur.rlim_cur, (unsigned long long)want[i].want);
                        return refuse(err, "rlimits", ev);
                }
        }
        return push(mech, rl->as_bytes ? "rlimits (cpu, fsize, nproc, nofile, core, as)"
                                       : "rlimits (cpu, fsize, nproc, nofile, core)", err);
}

int jail_verify_parent(pid_t pid, const struct jail_expect *x, struct proto_strv *mechanisms,
                       struct anvil_err *err)
{
        int r;
        if ((r = check_ns(pid, mechanisms, err)) < 0 || (r = check_status(pid, x->host_uid, mechanisms, err)) < 0 ||
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
