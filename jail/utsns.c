/* The UTS namespace: the tool sees its own hostname, never the host's. */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "jail/jail.h"

int jail_utsns_prepare(const struct jail_static *st)
{
        return st->direct ? 0 : CLONE_NEWUTS;
}

int jail_utsns_child(struct anvil_err *err)
{
        if (sethostname(JAIL_HOSTNAME, strlen(JAIL_HOSTNAME)) < 0 ||
            setdomainname(JAIL_HOSTNAME, strlen(JAIL_HOSTNAME)) < 0)
                return anvil_err_sys(err, errno, "Failed to set the jail's hostname");
        return 0;
}
