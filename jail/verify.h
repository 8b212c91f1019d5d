/* Verifying a jail from outside, before any tool code runs (pid1.c P2): what a RunResult
 * lists as "in force" is only what was read back here from /proc for this run's pid 1, never
 * what was merely configured. The runner is forked from that process after the check and
 * inherits every property checked (none of them can be regained after no_new_privs). */
#pragma once

#include <sys/types.h>

#include "jail/cgroup.h"
#include "jail/jail.h"
#include "proto/proto.h"

struct jail_expect {
        uid_t host_uid;
        bool direct;       /* no namespaces to check (the landlock+seccomp rung) */
        bool keeps_bounding; /* direct and rootless: an ordinary user's bounding set stays (it
                                holds no capability, and no_new_privs keeps exec from adding one) */
        const struct jail_rlimits *rlimits;
        struct jail_cgroup *cgroup; /* mode NONE: not checked; its limits read back are kept in it */
};

/* Appends the mechanisms found in force to *mechanisms. On a missing one, returns -EPERM and
 * err holds the refusal: "refused: <layer> not in force (<evidence>)". */
int jail_verify_parent(pid_t pid, const struct jail_expect *x, struct proto_strv *mechanisms,
                       struct anvil_err *err);
