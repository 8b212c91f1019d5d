/* The jail's pid 1: anvil-init, a small static program of its own (jail/init/main.c), so that
 * nothing of the supervisor's memory (other runs, other clients) is left in any process of
 * the jail, /proc/1/exe is not the supervisor's binary, and its exec costs no dynamic linking.
 * It uses nothing but libc.
 *
 *   P1 not dumpable (the tool runs as the same uid and must not ptrace or read us)
 *   P2 report READY and wait for GO: the supervisor checks this process's namespaces,
 *      capabilities, no_new_privs, rlimits and cgroup from outside before any tool code
 *      exists; the runner inherits all of them and cannot gain any back
 *   P3 fork the runner: new session (no terminal to push input into with TIOCSTI),
 *      parent-death signal (and pid 1 checked to be its parent still: it may have died
 *      before), exec JAIL_RUNNER; an exec failure comes back on a cloexec pipe
 *   P4 report EXEC_OK, or ERROR, on the sync socket
 *   P4a pass the runner's seccomp listener on to the supervisor (NOTIFY): the runner sends it
 *      on its fd 4, one end of a socketpair made here, before the tool's first line; the
 *      supervisor's NOTIFY_OK (it has checked the filter from outside and watches the
 *      listener) is passed back, and only then does the runner close its end and start the
 *      tool. The end of the pair (the runner gone) or of the sync socket ends the wait
 *   P4b a run granted network (--relay): fork the relay (relay.c), which alone keeps the
 *      relay's listening socket (JAIL_FD_RELAY) and the egress socket (JAIL_FD_EGRESS); it
 *      dies with the pid namespace
 *   P5 reap every process (SIGCHLD, through a signalfd); when the runner ends, report its
 *      wait status, rusage and whether /tmp was full, and exit: the kernel then kills
 *      whatever else is left in the pid namespace. Meanwhile the sync socket is watched:
 *      its end means the supervisor is gone (killed, crashed), and pid 1 kills the runner
 *      and exits, ending the jail.
 *
 * That watch is one of the two means by which no jail outlives its supervisor; the other is
 * the parent-death signal this process keeps from its exec (jail/contain.c, C11). Either
 * alone ends the jail; a test build can switch each off (--test-no-sync-watch reaches this
 * program as an argument), to show the other holds alone.
 *
 * Signals sent from inside the namespace to pid 1 are ignored unless handled, and we handle
 * none, so the tool cannot kill this process; the supervisor can. SIGCHLD is blocked in P5
 * (read from the signalfd): one the tool sends only makes pid 1 look for children to reap. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/jail.h"
#include "lib/fd.h"
#include "lib/proc.h"

extern char **environ;

void jail_sync_send(int fd, uint32_t kind, int err_no, const char *msg)
{
        struct jail_msg m = { .kind = kind, .err_no = err_no };
        if (msg)
                snprintf(m.msg, sizeof(m.msg), "%s", msg);
        (void)send(fd, &m, sizeof(m), MSG_NOSIGNAL);
}

int jail_sync_send_fd(int sock, uint32_t kind, int fd)
{
        struct jail_msg m = { .kind = kind };
        return fd_send_fds(sock, &m, sizeof(m), &fd, 1, NULL);
}

static uint64_t tv_us(struct timeval tv)
{
        return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

/* Whether the sync socket, readable (revents), has ended: the supervisor's end is closed, so
 * the supervisor is gone (its last reference goes only with it). A record there is none
 * pid 1 expects at this point, and is dropped. */
static bool supervisor_gone(int sync_fd, short revents)
{
        if (revents & (POLLHUP | POLLERR))
                return true;
        struct jail_msg m;
        ssize_t n = recv(sync_fd, &m, sizeof(m), MSG_DONTWAIT);
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/* Waits until fd is readable, or (watch) the supervisor is gone: false then. */
static bool wait_readable(int fd, int sync_fd, bool watch)
{
        struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sync_fd, .events = POLLIN } };
        for (;;) {
                int n = poll(p, watch ? 2 : 1, -1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return true; /* the read that follows says what is wrong */
                if (p[0].revents)
                        return true;
                if (watch && p[1].revents && supervisor_gone(sync_fd, p[1].revents))
                        return false;
        }
}

/* P4a: one fd from the runner, passed on as NOTIFY; anything else is dropped. Returns early,
 * with nothing passed on, if the supervisor is gone meanwhile. */
static void forward_listener(int from, int sync_fd, bool watch)
{
        if (!wait_readable(from, sync_fd, watch))
                return;
        char byte;
        int fd;
        ssize_t n = fd_recv_fds_exact(from, &byte, 1, &fd, 1, 0, NULL);
        if (n <= 0)
                return; /* the runner ended, or sent nothing usable: it refuses to run the tool */
        int sent = jail_sync_send_fd(sync_fd, JAIL_MSG_NOTIFY, fd);
        (void)close(fd);
        if (sent < 0)
                return;
        struct jail_msg ack;
        do
                n = recv(sync_fd, &ack, sizeof(ack), 0);
        while (n < 0 && errno == EINTR);
        if (n == (ssize_t)sizeof(ack) && ack.kind == JAIL_MSG_NOTIFY_OK)
                (void)send(from, &ack.kind, 1, MSG_NOSIGNAL);
}

/* The jail's /tmp as the runner left it: whether it has no room, or no entry, left (the tool
 * was then refused with ENOSPC past it). Only the jail's own tmpfs (its nr_inodes says so):
 * without namespaces the tool's scratch is a directory on the host, bounded per file. */
static uint32_t tmp_full(void)
{
        struct statfs sf;
        if (statfs(JAIL_TMP, &sf) < 0 || sf.f_type != TMPFS_MAGIC || sf.f_files != JAIL_TMP_ENTRIES + 1)
                return 0;
        return (sf.f_bavail == 0 ? JAIL_TMP_FULL_BYTES : 0) | (sf.f_ffree == 0 ? JAIL_TMP_FULL_ENTRIES : 0);
}

/* P5, until the runner ends (0, its EXIT reported) or the supervisor is gone (127, the
 * runner killed: without a pid namespace nothing else would end it, and with one this exit
 * ends the rest). Each child's end is a SIGCHLD, read from a signalfd; a child that ended
 * before the signal was blocked left none to read, so every wait follows a reaping pass. */
static int reap(pid_t runner, int sync_fd, bool watch)
{
        sigset_t chld;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        int sfd = -1;
        if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0 || (sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
                jail_sync_send(sync_fd, JAIL_MSG_ERROR, errno, "pid 1: failed to watch its children");
                (void)kill(runner, SIGKILL);
                return 127;
        }
        for (;;) {
                for (;;) {
                        int status;
                        struct rusage ru;
                        pid_t p = wait4(-1, &status, WNOHANG, &ru);
                        if (p < 0 && errno == EINTR)
                                continue;
                        if (p < 0) {
                                jail_sync_send(sync_fd, JAIL_MSG_ERROR, errno, "pid 1: wait failed");
                                return 127;
                        }
                        if (p == 0)
                                break;
                        if (p != runner)
                                continue;
                        struct jail_msg ex = {
                                .kind = JAIL_MSG_EXIT,
                                .status = status,
                                .pid = runner,
                                .tmp_full = tmp_full(),
                                .utime_us = tv_us(ru.ru_utime),
                                .stime_us = tv_us(ru.ru_stime),
                                .maxrss_kb = (uint64_t)ru.ru_maxrss,
                        };
                        (void)send(sync_fd, &ex, sizeof(ex), MSG_NOSIGNAL);
                        return 0;
                }
                struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = sync_fd, .events = POLLIN } };
                int n = poll(p, watch ? 2 : 1, -1);
                if (n < 0 && errno != EINTR) {
                        jail_sync_send(sync_fd, JAIL_MSG_ERROR, errno, "pid 1: poll failed");
                        (void)kill(runner, SIGKILL);
                        return 127;
                }
                if (n > 0 && p[0].revents) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof(si)) > 0)
                                ; /* the reaping pass finds who ended */
                }
                if (n > 0 && watch && p[1].revents && supervisor_gone(sync_fd, p[1].revents)) {
                        (void)kill(runner, SIGKILL);
                        return 127;
                }
        }
}

int jail_pid1_main(int argc, char **argv, void (*relay_main)(int listen_fd))
{
        /* Direct (no namespaces): the runner is where the supervisor keeps it, on the host. */
        const char *runner_path = JAIL_RUNNER;
        bool watch = true;  /* the sync socket, for the supervisor's end (P4a, P5) */
        bool reset = true;  /* the runner's signals (P3) */
        bool relay = false; /* a run granted network: the relay's socket at JAIL_FD_RELAY */
        for (int i = 1; i < argc; i++) {
                if (argv[i][0] == '/')
                        runner_path = argv[i];
                else if (strcmp(argv[i], "--relay") == 0)
                        relay = true;
#ifdef ANVIL_TEST_BUILD
                else if (strcmp(argv[i], "--test-no-sync-watch") == 0)
                        watch = false;
                else if (strcmp(argv[i], "--test-no-signal-reset") == 0)
                        reset = false;
#endif
        }
        int sync_fd = JAIL_FD_SYNC;
        char msg[160];

        /* P1. SIGCHLD as the kernel's default (an ignored one, inherited across exec, would
         * reap our children before P5 could read their status). */
        (void)signal(SIGCHLD, SIG_DFL);
        if (prctl(PR_SET_DUMPABLE, 0) < 0) {
                jail_sync_send(sync_fd, JAIL_MSG_ERROR, errno, "pid 1: failed to clear the dumpable flag");
                return 127;
        }
        /* P2 */
        jail_sync_send(sync_fd, JAIL_MSG_READY, 0, NULL);
        struct jail_msg go;
        ssize_t n;
        do
                n = recv(sync_fd, &go, sizeof(go), 0);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof(go) || go.kind != JAIL_MSG_GO)
                return 127; /* refused, or the supervisor is gone */
        pid_t self = getpid();
        /* P3 */
        int ep[2], np[2];
        if (pipe2(ep, O_CLOEXEC) < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, np) < 0) {
                jail_sync_send(sync_fd, JAIL_MSG_ERROR, errno, "pid 1: failed to create a pipe");
                return 127;
        }
        pid_t runner = fork();
        if (runner < 0) {
                jail_sync_send(sync_fd, JAIL_MSG_ERROR, errno, "pid 1: failed to fork the runner");
                return 127;
        }
        if (runner == 0) {
                (void)close(ep[0]);
                (void)close(sync_fd);
                if (relay) { /* the relay's alone (P4b) */
                        (void)close(JAIL_FD_RELAY);
                        (void)close(JAIL_FD_EGRESS);
                }
                /* JAIL_FD_NOTIFY is the sync socket's number: free now, and not close-on-exec */
                if (setsid() < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || dup2(np[1], JAIL_FD_NOTIFY) < 0) {
                        int e = errno;
                        (void)!write(ep[1], &e, sizeof(e));
                        _exit(127);
                }
                if (getppid() != self)
                        _exit(127); /* pid 1 died before the signal was set: nobody to run for */
                /* As from a plain shell: none of pid 1's signal settings (P1's, and whatever it
                 * inherited) reach the runner. */
                if (reset && anvil_reset_signals() < 0) {
                        int e = errno;
                        (void)!write(ep[1], &e, sizeof(e));
                        _exit(127);
                }
                char *const rargv[] = { "anvil-py", NULL };
                execve(runner_path, rargv, environ);
                int e = errno;
                (void)!write(ep[1], &e, sizeof(e));
                _exit(127);
        }
        (void)close(ep[1]);
        (void)close(np[1]);
        /* Our copies of the runner's fds go, so that the supervisor sees their end when the
         * jail's processes end; /dev/null stands in for them. */
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int fd = 0; fd <= JAIL_FD_EVENTS; fd++)
                if (devnull >= 0)
                        (void)dup2(devnull, fd);
        /* P4 */
        int child_errno = 0;
        do
                n = read(ep[0], &child_errno, sizeof(child_errno));
        while (n < 0 && errno == EINTR);
        (void)close(ep[0]);
        if (n > 0) {
                snprintf(msg, sizeof(msg), "pid 1: failed to execute %s: %s", runner_path, strerror(child_errno));
                jail_sync_send(sync_fd, JAIL_MSG_ERROR, child_errno, msg);
                return 127;
        }
        struct jail_msg ok = { .kind = JAIL_MSG_EXEC_OK, .pid = runner };
        (void)send(sync_fd, &ok, sizeof(ok), MSG_NOSIGNAL);
        /* P4a */
        forward_listener(np[0], sync_fd, watch);
        (void)close(np[0]);
        /* P4b, a run granted network: the relay (relay.c), a child of its own, forked once the
         * supervisor has verified the runner (it takes pid 1's only child for the runner,
         * P4a); a connection the tool makes before it waits in the listening socket's
         * backlog (bound at C5). The relay ends with the pid namespace (P5's exit). */
        if (relay) {
                pid_t rp = fork();
                if (rp < 0) {
                        jail_sync_send(sync_fd, JAIL_MSG_ERROR, errno, "pid 1: failed to fork the relay");
                        return 127;
                }
                if (rp == 0) {
                        /* none of the runner's streams (the supervisor waits for their end)
                         * nor the sync socket */
                        (void)close(sync_fd);
                        (void)close_range(0, JAIL_FD_EVENTS, 0);
                        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != self)
                                _exit(127);
                        relay_main(JAIL_FD_RELAY);
                        _exit(127);
                }
                (void)close(JAIL_FD_RELAY);
                (void)close(JAIL_FD_EGRESS);
        }
        /* P5 */
        return reap(runner, sync_fd, watch);
}
