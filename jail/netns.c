/* The network namespace: the jail's own, made at C1 (jail_netns_prepare gives clone its flag),
 * with no interface up, not even lo. Nothing in the jail needs one: the tool talks to its
 * runner over inherited pipes and AF_UNIX sockets, seccomp refuses a socket of any other family
 * (policy/seccomp_rules.c), and Landlock refuses TCP bind and connect besides (ABI 4). An
 * interface down means a connect to 127.0.0.1 fails with ENETUNREACH even were both others
 * gone (t_landlock.sh's control). The blast radius says "a network namespace of its own with
 * no interface up" only when the supervisor saw the namespace in force (jail/verify.c).
 *
 * Direct (no user namespace can be made: struct jail_static): no namespace of its own; the
 * tool is held off the network by seccomp and Landlock alone. No _parent or _child verb:
 * there is nothing to set up in the namespace. */
#define _GNU_SOURCE
#include <sched.h>

#include "jail/jail.h"

int jail_netns_prepare(const struct jail_static *st)
{
        return st->direct ? 0 : CLONE_NEWNET;
}
