/* The user namespace: JAIL_UID inside is one host uid, chosen per run by the supervisor from
 * a range nobody else uses, so no two runs share a host identity (RLIMIT_NPROC, signals,
 * file ownership). The supervisor is root in the initial namespace, so it can write a gid map
 * without denying setgroups, and the child can then clear the supplementary groups it
 * inherited (root's, which would otherwise stay in force, unmapped, inside).
 *
 * Rootless (the supervisor is not root): every jail maps JAIL_UID to the supervisor's own uid,
 * the only one it may map; setgroups is denied first, as the kernel requires for the gid map.
 * Runs then share a host uid: signals between jails are still impossible (each has its own
 * pid namespace, and Landlock scopes signals), and RLIMIT_NPROC is counted per user
 * namespace. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jail/jail.h"
#include "lib/cleanup.h"
#include "lib/fd.h"

int jail_userns_prepare(const struct jail_static *st)
{
        return st->direct ? 0 : CLONE_NEWUSER;
}

static int write_proc(pid_t pid, const char *file, const char *text, struct anvil_err *err)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s", path);
        size_t n = strlen(text);
        ssize_t w = write(fd, text, n);
        if (w != (ssize_t)n)
                return anvil_err_sys(err, w < 0 ? errno : EIO, "Failed to write %s", path);
        return 0;
}

int jail_userns_parent(pid_t pid, uid_t host_uid, gid_t host_gid, struct anvil_err *err)
{
        char map[64];
        /* Rootless: an unprivileged writer may map only its own ids, and a gid map only once
         * setgroups is denied in the namespace. */
        if (geteuid() != 0) {
                int r = write_proc(pid, "setgroups", "deny", err);
                if (r < 0)
                        return r;
        }
        snprintf(map, sizeof(map), "%u %u 1\n", JAIL_UID, (unsigned)host_uid);
        int r = write_proc(pid, "uid_map", map, err);
        if (r < 0)
                return r;
        snprintf(map, sizeof(map), "%u %u 1\n", JAIL_UID, (unsigned)host_gid);
        return write_proc(pid, "gid_map", map, err);
}

int jail_userns_child(struct anvil_err *err)
{
        /* Before the uid changes, while CAP_SETGID in the new namespace is certain. */
        if (setgroups(0, NULL) < 0) {
                int e = errno;
                /* Under a rootless supervisor setgroups is denied: the groups it had stay,
                 * unmapped (they show as the overflow gid), for what little of the host the
                 * jail's mount namespace lets them reach. */
                char deny[8];
                if (e != EPERM || fd_read_small("/proc/self/setgroups", deny, sizeof(deny), FD_READ_PREFIX, NULL) < 4 ||
                    strncmp(deny, "deny", 4) != 0)
                        return anvil_err_sys(err, e, "Failed to clear supplementary groups");
        }
        if (setresgid(JAIL_UID, JAIL_UID, JAIL_UID) < 0)
                return anvil_err_sys(err, errno, "Failed to set gid %d", JAIL_UID);
        /* Our host uid (0) is unmapped here, so this change does not clear the capabilities we
         * hold in the new namespace; caps.c drops them on purpose once the root is built. Both
         * changes clear the parent-death signal: contain.c arms it again after this (C4). */
        if (setresuid(JAIL_UID, JAIL_UID, JAIL_UID) < 0)
                return anvil_err_sys(err, errno, "Failed to set uid %d", JAIL_UID);
        return 0;
}
