/* uapi values newer than Debian 12's kernel headers (6.1), in one place. Each is the kernel's
 * own value (include/uapi/linux/landlock.h and audit.h of Linux 6.15), defined only where the
 * installed headers lack it; whether the running kernel knows it is decided at run time from
 * the Landlock ABI it reports (jail/landlock.c), never from these headers. */
#pragma once

#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/types.h>

/* ---- Landlock: ABI 3 (Linux 6.2) ---- */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

/* ---- ABI 4 (Linux 6.7): TCP ports ---- */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif

/* ---- ABI 5 (Linux 6.10) ---- */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

/* ---- ABI 6 (Linux 6.12): scopes ---- */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* ---- ABI 7 (Linux 6.15): audit logging flags of landlock_restrict_self() ---- */
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#endif

/* struct landlock_ruleset_attr as of ABI 6. The 6.1 header's struct has only the first field
 * and cannot be extended under its own name, so this one has a name of its own; the size
 * passed to landlock_create_ruleset() is that of the fields the running kernel's ABI knows
 * (8 bytes for ABI 1-3, 16 for 4-5, 24 from 6). */
struct jail_landlock_ruleset_attr {
        __u64 handled_access_fs;
        __u64 handled_access_net; /* ABI 4 */
        __u64 scoped;             /* ABI 6 */
};

/* struct landlock_net_port_attr (ABI 4), likewise under a name of its own: the one port rule,
 * a run granted network's connect to the relay (landlock.c). */
#ifndef LANDLOCK_RULE_NET_PORT
#define LANDLOCK_RULE_NET_PORT 2
#endif
struct jail_landlock_net_port_attr {
        __u64 allowed_access;
        __u64 port;
};

/* ---- audit record types (Linux 6.15) ---- */
#ifndef AUDIT_LANDLOCK_ACCESS
#define AUDIT_LANDLOCK_ACCESS 1423 /* a denied access: domain=, blockers=, the object */
#endif
#ifndef AUDIT_LANDLOCK_DOMAIN
#define AUDIT_LANDLOCK_DOMAIN 1424 /* a domain's status: allocated (with its creator's pid) or deallocated */
#endif
