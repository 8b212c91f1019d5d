/* The child's steps, in order. Each numbered step matches supervisor/main.c's theory of
 * operation.
 *
 *   C1  new user, mount, pid, net, ipc and uts namespaces (clone flags)
 *   C2  parent-death signal; not dumpable; the inherited copy of the environment zeroed
 *   C3  wait for GO: the supervisor has written our uid/gid maps and put us in the cgroup
 *   C4  become JAIL_UID (userns.c)
 *   C5  build the root and pivot into it (mountns.c)
 *   C6  hostname; a cgroup namespace rooted at the run's cgroup
 *   C7  rlimits (rlimit.c)
 *   C8  fds 0-3 for the runner, the sync socket at 4, the supervisor binary at 5, no others
 *   C9  drop every capability, no_new_privs (caps.c)
 *   C10 exec the supervisor binary as "anvil-init", the jail's pid 1 (pid1.c)
 *
 * The child runs on a copy of the supervisor's memory until C10; it touches no libuv state
 * and returns nowhere: every path ends in exec or _exit. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail/jail.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

#define CHILD_STACK (256 * 1024)

extern char **environ;

void jail_sync_send(int fd, uint32_t kind, int err_no, const char *msg)
{
        struct jail_msg m = { .kind = kind, .err_no = err_no };
        if (msg)
                snprintf(m.msg, sizeof(m.msg), "%s", msg);
        (void)send(fd, &m, sizeof(m), MSG_NOSIGNAL);
}

static __attribute__((noreturn)) void child_fail(int sync_fd, const struct anvil_err *err)
{
        jail_sync_send(sync_fd, JAIL_MSG_ERROR, err->code, err->msg);
        _exit(127);
}

/* Moves fd to target, clearing O_CLOEXEC unless keep_cloexec; fds are juggled through
 * high numbers first so that no target overwrites a source still needed. */
static int place_fds(const struct jail_config *cfg, struct anvil_err *err)
{
        int src[6] = { cfg->stdin_fd, cfg->stdout_fd, cfg->stderr_fd, cfg->events_fd, cfg->sync_fd,
                       cfg->init_exe_fd };
        int tmp[6];
        for (int i = 0; i < 6; i++) {
                tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 100);
                if (tmp[i] < 0)
                        return anvil_err_sys(err, errno, "Failed to duplicate fd %d", src[i]);
        }
        for (int i = 0; i < 6; i++) {
                /* dup2 clears O_CLOEXEC; fd 5 (the binary) gets it back: execveat does not need
                 * it to stay open, and pid 1 must not keep it. */
                if (dup2(tmp[i], i) < 0)
                        return anvil_err_sys(err, errno, "Failed to place fd %d", i);
        }
        if (fcntl(JAIL_FD_INITEXE, F_SETFD, FD_CLOEXEC) < 0)
                return anvil_err_sys(err, errno, "Failed to set close-on-exec on fd %d", JAIL_FD_INITEXE);
        if (close_range(JAIL_FD_INITEXE + 1, ~0U, 0) < 0)
                return anvil_err_sys(err, errno, "Failed to close inherited fds");
        return 0;
}

static int child_main(void *arg)
{
        const struct jail_config *cfg = arg;
        struct anvil_err err = ANVIL_ERR_INIT;
        int sync_fd = cfg->sync_fd;

        /* C2. If the supervisor dies, so does the jail. Not dumpable: this process is a copy of
         * the supervisor's memory until C10, and nothing in the jail may read it. The
         * environment strings are zeroed in place so /proc/1/environ shows nothing. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0) {
                anvil_err_sys(&err, errno, "Failed to set the parent-death signal or dumpable flag");
                child_fail(sync_fd, &err);
        }
        for (char **e = environ; e && *e; e++)
                explicit_bzero(*e, strlen(*e));

        /* C3 */
        struct jail_msg go;
        ssize_t n;
        do
                n = recv(sync_fd, &go, sizeof(go), 0);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof(go) || go.kind != JAIL_MSG_GO)
                _exit(127); /* the supervisor gave up on us */

        /* C4 */
        if (jail_userns_child(&err) < 0)
                child_fail(sync_fd, &err);
        /* C5 */
        if (jail_mountns_child(cfg, &err) < 0)
                child_fail(sync_fd, &err);
        /* C6 */
        if (jail_utsns_child(&err) < 0)
                child_fail(sync_fd, &err);
        if (unshare(CLONE_NEWCGROUP) < 0) {
                anvil_err_sys(&err, errno, "Failed to create the cgroup namespace");
                child_fail(sync_fd, &err);
        }
        /* C7 */
        if (jail_rlimit_child(&cfg->rlimits, &err) < 0)
                child_fail(sync_fd, &err);
        /* C8 */
        if (place_fds(cfg, &err) < 0)
                child_fail(sync_fd, &err);
        sync_fd = JAIL_FD_SYNC;
        /* C9 */
        if (jail_caps_child(&err) < 0)
                child_fail(sync_fd, &err);
        /* C10 */
        char *const argv[] = { "anvil-init", NULL };
        execveat(JAIL_FD_INITEXE, "", argv, cfg->env, AT_EMPTY_PATH);
        anvil_err_sys(&err, errno, "Failed to execute the jail's pid 1");
        child_fail(sync_fd, &err);
}

int jail_contain_clone(const struct jail_config *cfg, pid_t *pid, int *pidfd, struct anvil_err *err)
{
        /* The stack is only this process's until clone returns: without CLONE_VM the child
         * runs on its own copy, so it is unmapped here at once. */
        void *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return anvil_err_sys(err, errno, "Failed to allocate the child's stack");
        int fd = -1;
        /* C1 */
        int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                    CLONE_NEWUTS | CLONE_PIDFD | SIGCHLD;
        pid_t p = clone(child_main, (char *)stack + CHILD_STACK, flags, (void *)cfg, &fd);
        int saved = errno;
        (void)munmap(stack, CHILD_STACK);
        if (p < 0)
                return anvil_err_sys(err, saved, "Failed to clone into new namespaces");
        *pid = p;
        *pidfd = fd;
        return 0;
}
