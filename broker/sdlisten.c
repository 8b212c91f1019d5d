/* Socket activation: the clients' socket handed over by systemd (anvil-broker.socket).
 *
 * The broker runs as the user anvil, which cannot create a socket in /run (root's); systemd
 * creates /run/anvil.sock as root:anvil-users 0660 and passes it as fd 3 with LISTEN_PID and
 * LISTEN_FDS (sd_listen_fds(3)'s protocol). The protocol is three environment variables and
 * a fixed fd number, so it is read here in a few lines rather than by linking libsystemd:
 * the broker stays buildable and runnable without systemd, and no library that talks to
 * D-Bus and the journal enters a daemon that only needs an fd.
 *
 * What is accepted is checked, not assumed: LISTEN_PID must be this process (else the
 * variables were meant for a parent and are ignored), exactly one fd, and it must be a
 * listening AF_UNIX stream socket bound to the --listen path; anything else stops start-up
 * with a message. The variables are unset either way, so that nothing the broker starts
 * inherits them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/broker.h"

#define SD_LISTEN_FDS_START 3

static int parse_ulong(const char *s, unsigned long *out)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || !*s || *end || *s == '-')
                return -1;
        *out = v;
        return 0;
}

int bro_sd_listen_fd(const char *listen_path, struct anvil_err *err)
{
        const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
        int r = 0;
        unsigned long pid, n;
        if (!pid_s && !fds_s)
                goto out; /* not activated: the broker binds --listen itself */
        if (!pid_s || !fds_s || parse_ulong(pid_s, &pid) < 0 || parse_ulong(fds_s, &n) < 0) {
                r = anvil_err_set(err, EINVAL, "socket activation: LISTEN_PID='%s' LISTEN_FDS='%s' are not numbers",
                                  pid_s ? pid_s : "", fds_s ? fds_s : "");
                goto out;
        }
        if (pid != (unsigned long)getpid())
                goto out; /* meant for another process (one that exec'd us): not ours */
        if (n != 1) {
                r = anvil_err_set(err, EINVAL,
                                  "socket activation: %lu sockets passed (LISTEN_FDS), expected exactly one: the "
                                  "clients' socket (ListenStream= once in anvil-broker.socket)",
                                  n);
                goto out;
        }
        int fd = SD_LISTEN_FDS_START;
        int type = 0, listening = 0;
        struct sockaddr_un sa = { 0 };
        socklen_t len = sizeof(type), llen = sizeof(listening), salen = sizeof(sa);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &llen) < 0 ||
            getsockname(fd, (struct sockaddr *)&sa, &salen) < 0) {
                r = anvil_err_sys(err, errno, "socket activation: fd %d is not a socket", fd);
                goto out;
        }
        if (sa.sun_family != AF_UNIX || type != SOCK_STREAM || !listening) {
                r = anvil_err_set(err, EINVAL,
                                  "socket activation: fd %d is not a listening Unix stream socket (ListenStream= "
                                  "with a path in anvil-broker.socket)",
                                  fd);
                goto out;
        }
        /* An abstract or unnamed socket has no path: it cannot be the one clients are told. */
        if (salen <= offsetof(struct sockaddr_un, sun_path) || !sa.sun_path[0] ||
            strncmp(sa.sun_path, listen_path, sizeof(sa.sun_path)) != 0) {
                r = anvil_err_set(err, EINVAL, "socket activation: the socket passed is bound to '%.108s', not to %s",
                                  sa.sun_path[0] ? sa.sun_path : "(no path)", listen_path);
                goto out;
        }
        /* systemd passes it without FD_CLOEXEC: nothing the broker starts may hold it. */
        if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                r = anvil_err_sys(err, errno, "socket activation: fd %d", fd);
                goto out;
        }
        r = fd;
out:
        (void)unsetenv("LISTEN_PID");
        (void)unsetenv("LISTEN_FDS");
        (void)unsetenv("LISTEN_FDNAMES");
        return r;
}
