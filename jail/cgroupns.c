/* The cgroup namespace (C6): unshared by the child itself once the supervisor has moved it
 * into the run's cgroup (S0), so that the namespace's root is that cgroup and the jail's
 * /proc/self/cgroup shows "/" rather than the host's hierarchy (where the supervisor's
 * cgroups are, which is none of the tool's business). Not made at C1: a clone would root the
 * namespace at the supervisor's cgroup, before the move. The cgroup's limits and figures are
 * cgroup.c's (the supervisor's side).
 *
 * Direct: no namespace (no user namespace to hold the capability); the cgroup's limits
 * still apply, since the supervisor moved the child all the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>

#include "jail/jail.h"

int jail_cgroupns_child(struct anvil_err *err)
{
        if (unshare(CLONE_NEWCGROUP) < 0)
                return anvil_err_sys(err, errno, "Failed to create the cgroup namespace");
        return 0;
}
