/* The network namespace: the jail's own, made at C1 (jail_netns_prepare gives clone its flag),
 * with no interface up, not even lo. Nothing in the jail needs one: the tool talks to its
 * runner over inherited pipes and AF_UNIX sockets, seccomp refuses a socket of any other family
 * (policy/seccomp_rules.c), and Landlock refuses TCP bind and connect besides (ABI 4). An
 * interface down means a connect to 127.0.0.1 fails with ENETUNREACH even were both others
 * gone (t_landlock.sh's control). The blast radius says "a network namespace of its own with
 * no interface up" only when the supervisor saw the namespace in force (jail/verify.c).
 *
 * Direct (no user namespace can be made: struct jail_static): no namespace of its own; the
 * tool is held off the network by seccomp and Landlock alone. No _parent verb; a _child verb
 * only for a run granted network (below). */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "jail/jail.h"
#include "lib/cleanup.h"

int jail_netns_prepare(const struct jail_static *st)
{
        return st->direct ? 0 : CLONE_NEWNET;
}

/* A run granted network: the namespace stays the jail's own, with lo alone, brought up here
 * (CAP_NET_ADMIN over the namespace is the child's until C9), and the relay's socket bound
 * on it now, before Landlock (C10), which lets nothing in the jail bind a TCP port. What the
 * tool can reach over TCP is then 127.0.0.0/8 of its own namespace, where only this socket
 * listens: there is no route anywhere else (no other interface exists). */
int jail_netns_child_egress(int *fd, struct anvil_err *err)
{
        _cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr = { 0 };
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
        if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                return anvil_err_sys(err, errno, "Failed to read lo's flags in the jail's network namespace");
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                return anvil_err_sys(err, errno, "Failed to bring lo up in the jail's network namespace");
        _cleanup_close_ int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(JAIL_EGRESS_PORT) };
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, JAIL_RELAY_PAIRS) < 0)
                return anvil_err_sys(err, errno, "Failed to listen on %s:%d in the jail", JAIL_EGRESS_ADDR,
                                     JAIL_EGRESS_PORT);
        *fd = TAKE_FD(l);
        return 0;
}
