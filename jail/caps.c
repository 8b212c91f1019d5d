/* Capabilities: the child holds every capability in its own user namespace until the root is
 * built. Here the bounding and ambient sets are emptied, then the permitted, effective and
 * inheritable sets (exec as JAIL_UID, which is not 0, would clear the first two anyway; this
 * does not rely on it). The supervisor checks the result in /proc/<pid>/status
 * (CapEff, CapPrm, CapBnd, CapAmb all zero, NoNewPrivs 1) before it reports them in force. */
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail/jail.h"

int jail_caps_drop_bounding(struct anvil_err *err)
{
        for (int c = 0; c <= CAP_LAST_CAP; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return anvil_err_sys(err, errno, "Failed to drop capability %d from the bounding set", c);
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return anvil_err_sys(err, errno, "Failed to clear the ambient capabilities");
        return 0;
}

int jail_caps_child(bool unprivileged, struct anvil_err *err)
{
        /* Direct and rootless (no user namespace, an ordinary user): we hold no capability to
         * drop, and may not shrink the bounding set; with no_new_privs no exec can add one. */
        if (unprivileged) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        return anvil_err_sys(err, errno, "Failed to set no_new_privs");
                return 0;
        }
        int r = jail_caps_drop_bounding(err);
        if (r < 0)
                return r;
        /* capset(2) itself, not libcap's cap_init/cap_set_proc: they allocate, and the jail's
         * child allocates nothing before exec (contain.c, step_wait_go). All three sets empty. */
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];
        memset(none, 0, sizeof(none));
        if (syscall(SYS_capset, &hdr, none) < 0)
                return anvil_err_sys(err, errno, "Failed to clear capabilities");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return anvil_err_sys(err, errno, "Failed to set no_new_privs");
        return 0;
}
