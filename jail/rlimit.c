/* rlimits, set in the child and inherited by pid 1 and the runner. RLIMIT_CPU's soft limit
 * sends SIGXCPU (which kills a Python that does not handle it), the hard limit one second
 * later SIGKILL, so a tool that catches SIGXCPU still ends. RLIMIT_NPROC is counted per user
 * namespace and uid, so it is this run's own; nproc 0 leaves it alone (direct and rootless:
 * no user namespace of its own, and the uid is the supervisor's, whose every process it would
 * count). */
#include <sys/resource.h>

#include "jail/jail.h"

static int set1(int res, const char *name, rlim_t soft, rlim_t hard, struct anvil_err *err)
{
        struct rlimit rl = { soft, hard };
        if (setrlimit(res, &rl) < 0)
                return anvil_err_sys(err, errno, "Failed to set %s", name);
        return 0;
}

int jail_rlimit_child(const struct jail_rlimits *rl, struct anvil_err *err)
{
        int r;
        if ((r = set1(RLIMIT_CPU, "RLIMIT_CPU", rl->cpu_s, rl->cpu_s + 1, err)) < 0 ||
            (r = set1(RLIMIT_FSIZE, "RLIMIT_FSIZE", rl->fsize_bytes, rl->fsize_bytes, err)) < 0 ||
            (rl->nproc && (r = set1(RLIMIT_NPROC, "RLIMIT_NPROC", rl->nproc, rl->nproc, err)) < 0) ||
            (r = set1(RLIMIT_NOFILE, "RLIMIT_NOFILE", rl->nofile, rl->nofile, err)) < 0 ||
            (r = set1(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, err)) < 0 ||
            (r = set1(RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", 0, 0, err)) < 0 ||
            (r = set1(RLIMIT_RTPRIO, "RLIMIT_RTPRIO", 0, 0, err)) < 0 ||
            (r = set1(RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", 0, 0, err)) < 0)
                return r;
        if (rl->as_bytes && (r = set1(RLIMIT_AS, "RLIMIT_AS", rl->as_bytes, rl->as_bytes, err)) < 0)
                return r;
        return 0;
}
