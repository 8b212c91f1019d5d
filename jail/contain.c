/* The child's steps, in order. Each numbered step matches supervisor/main.c's theory of
 * operation; the code's own list is steps[] below (direct mode: direct_steps[]), one function
 * a step, each calling its mechanism's _child verb (jail.h says which file has which).
 *
 *   C1  new user, mount, pid, net, ipc and uts namespaces (clone flags: each mechanism's
 *       _prepare, jail_contain_clone)
 *   C2  parent-death signal (see arm_parent_death); the inherited copy of the environment
 *       zeroed; every inherited fd closed but the sync socket, the supervisor binary and the
 *       supervisor's pidfd
 *   C3  wait for MAPPED: the supervisor has written our uid/gid maps and holds our
 *       namespaces; then not dumpable
 *   C4  become JAIL_UID (userns.c), which clears the parent-death signal: armed again, and
 *       the supervisor checked to be alive
 *   C5  build the run-independent part of the root (mountns.c), report PREPARED, and wait
 *       for GO with the run's part of the configuration and its fds. A child may wait
 *       here, cloned ahead of time (a spare), before any run exists; nothing of any run
 *       is in it until GO. Then the run's inputs and artifacts (under a rootless supervisor
 *       the child makes the artifacts tmpfs itself and sends it back), and pivot_root.
 *       A run granted network (GO's egress): lo up and the relay's socket bound (netns.c),
 *       and the egress socket (the last fd after GO, O_PATH) kept for pid 1
 *   C6  hostname (utsns.c); a cgroup namespace (cgroupns.c)
 *   C7  rlimits (rlimit.c)
 *   C8  fds 0-3 for the runner, the sync socket at 4, the supervisor binary at 5, the
 *       supervisor's pidfd at 6 (both close-on-exec), the relay's socket at 7 and the egress
 *       socket at 8 (a run granted network), no others
 *   C9  drop every capability, no_new_privs (caps.c)
 *   C10 Landlock (landlock.c): restrict ourselves to the jail's paths, no TCP, no signals or
 *       abstract sockets out of the domain; report what is in force (LANDLOCK) on the sync
 *       socket. A kernel without Landlock is reported, not an error
 *   C11 the parent-death signal armed a last time, after the last change of credentials
 *       (C9's uid in direct mode, C10's Landlock domain), and the supervisor checked to be
 *       alive; exec anvil-init, the jail's pid 1 (pid1.c), which keeps the signal (an execve
 *       that gains no privilege keeps it): pid 1's death ends the pid namespace
 *
 * Direct (no user namespace can be made here: struct jail_static): C1 makes no namespace, C4
 * and C6 are skipped, C5 builds no root (the run's directory on the host becomes the cwd),
 * C9 as root first becomes the run's host uid, and Landlock (C10) on the host's paths and the
 * runner's seccomp hold the tool alone: DESIGN §6's landlock+seccomp rung. With no pid
 * namespace, pid 1's death ends the runner by the runner's own parent-death signal (P3); the
 * tool has no other process (seccomp allows threads only).
 *
 * No jail outlives its supervisor, by two independent means: this parent-death signal, kept
 * by pid 1 (and the children's sync socket reads, which end at its end: C3, C5), and pid 1
 * watching its sync socket (pid1.c, P4a and P5).
 *
 * The child runs on a copy of the supervisor's memory until C11; it touches no libuv state
 * and returns nowhere: every path ends in exec or _exit. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail/jail.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/proc.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

#define CHILD_STACK (256 * 1024)
/* Where the three fds kept through C2 (the sync socket, anvil-init, the supervisor's pidfd)
 * wait until C8. */
#define PARK_SYNC_FD 10
#define PARK_EXE_FD 11
#define PARK_PARENT_FD 12
/* Copies are made above the parked fds, so that no dup3 overwrites a source still needed.
 * Never at a fixed high number: F_DUPFD fails with EINVAL at or past RLIMIT_NOFILE, which is
 * the supervisor's until C7 (a supervisor started under `ulimit -n 512` failed every jail at
 * C2 when the copies were made at 1000). */
#define PARK_TMP_MIN (PARK_PARENT_FD + 1)

extern char **environ;

/* The child's end before its exec. Not _exit: that is declared noreturn, and a sanitized build
 * (make check SANITIZE=1) calls __asan_handle_no_return before any noreturn call, which on
 * the clone's stack (not a stack ASan knows) writes a warning as a report (google/sanitizers
 * issue 189). exit_group is what _exit does. */
static __attribute__((noinline)) void child_exit(int code)
{
        syscall(SYS_exit_group, code); /* (nothing here tells the compiler it does not return) */
}

static void child_fail(int sync_fd, const struct anvil_err *err)
{
        jail_sync_send(sync_fd, JAIL_MSG_ERROR, err->code, err->msg);
        child_exit(127);
}

/* C2: everything inherited from the supervisor goes (client sockets, other runs' pipes, the
 * log), so that a spare holds nothing open while it waits. The supervisor's pidfd stays
 * until the exec of pid 1 (close-on-exec): our code alone holds it, to tell whether the
 * supervisor is alive, and it grants nothing a process of our uid could not do by pid. */
static int keep_only_parked(const struct jail_static *st)
{
        int s = fcntl(st->sync_fd, F_DUPFD_CLOEXEC, PARK_TMP_MIN);
        int e = fcntl(st->init_exe_fd, F_DUPFD_CLOEXEC, PARK_TMP_MIN);
        int p = fcntl(st->parent_pidfd, F_DUPFD_CLOEXEC, PARK_TMP_MIN);
        if (s < 0 || e < 0 || p < 0 || dup3(s, PARK_SYNC_FD, O_CLOEXEC) < 0 || dup3(e, PARK_EXE_FD, O_CLOEXEC) < 0 ||
            dup3(p, PARK_PARENT_FD, O_CLOEXEC) < 0)
                return -errno;
        if (close_range(0, PARK_SYNC_FD - 1, 0) < 0 || close_range(PARK_PARENT_FD + 1, ~0U, 0) < 0)
                return -errno;
        return 0;
}

/* The parent-death signal: SIGKILL when the supervisor dies. The kernel clears it whenever
 * the effective or filesystem uid or gid changes, or capabilities are gained (commit_creds),
 * so it is armed at C2 and again after each change of credentials (C4; C11, after C9's and
 * C10's). No signal comes for a parent that died before it is armed, so the supervisor is
 * then checked through its pidfd, readable once it has exited (its pid is no use: from
 * inside our pid namespace getppid() is 0). The signal follows the thread that cloned us:
 * the supervisor clones only on its loop's thread, its main thread, which lives as long as
 * the process. */
static void arm_parent_death(const struct jail_static *st, int sync_fd, int parent_fd)
{
        struct anvil_err err = ANVIL_ERR_INIT;
#ifdef ANVIL_TEST_BUILD
        if (st->test_no_pdeathsig)
                return;
#else
        (void)st;
#endif
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
                anvil_err_sys(&err, errno, "Failed to set the parent-death signal");
                child_fail(sync_fd, &err);
        }
        struct pollfd p = { .fd = parent_fd, .events = POLLIN };
        int n;
        while ((n = poll(&p, 1, 0)) < 0 && errno == EINTR)
                ;
        if (n != 0)
                child_exit(127); /* the supervisor is gone (or cannot be told from gone) */
}

/* C5: GO and exactly JAIL_GO_FDS fds; anything else means the supervisor gave up on us. */
static int wait_go(struct jail_go *go, int fds[JAIL_GO_FDS])
{
        ssize_t n = fd_recv_fds_exact(PARK_SYNC_FD, go, sizeof(*go), fds, JAIL_GO_FDS, 0, NULL);
        if (n < 0)
                return -EBADMSG;
        if (n != (ssize_t)sizeof(*go) || go->kind != JAIL_MSG_GO) {
                for (int i = 0; i < JAIL_GO_FDS; i++)
                        (void)close(fds[i]);
                return -EBADMSG;
        }
        go->inputs_dir[PATH_MAX - 1] = 0;
        return 0;
}

/* C5: INPUTS, when GO says so, with exactly its n trees. */
static int wait_inputs(const struct jail_go *go, struct jail_inputs *in, int *fds)
{
        if (go->n_inputs == 0) {
                in->n = 0;
                return 0;
        }
        if (go->n_inputs > JAIL_INPUTS_MAX)
                return -EBADMSG;
        ssize_t n = fd_recv_fds_exact(PARK_SYNC_FD, in, sizeof(*in), fds, go->n_inputs, 0, NULL);
        if (n < 0)
                return -EBADMSG;
        if (n != (ssize_t)sizeof(*in) || in->kind != JAIL_MSG_INPUTS || in->n != go->n_inputs) {
                for (uint32_t i = 0; i < go->n_inputs; i++)
                        (void)close(fds[i]);
                return -EBADMSG;
        }
        for (uint32_t i = 0; i < in->n; i++)
                in->names[i][JAIL_INPUT_NAME_MAX] = 0;
        return 0;
}

/* C8: the run's four stream fds to 0-3, the sync socket to 4, anvil-init to 5
 * (close-on-exec: execveat does not need it open afterwards, and pid 1 must not keep it), the
 * supervisor's pidfd to 6 (close-on-exec too: needed until C11).
 * Everything goes through copies above the parked fds first (PARK_TMP_MIN), so no dup2
 * overwrites a source that is still needed; the artifacts mount fd (used in C5) is closed
 * with the rest. */
static int place_fds(const int fds[JAIL_GO_FDS], int relay, int egress, struct anvil_err *err)
{
        int tmp[4];
        for (int i = 0; i < 4; i++)
                if ((tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, PARK_TMP_MIN)) < 0)
                        return anvil_err_sys(err, errno, "Failed to duplicate fd %d", fds[i]);
        for (int i = 0; i < 4; i++)
                if (dup2(tmp[i], i) < 0)
                        return anvil_err_sys(err, errno, "Failed to place fd %d", i);
        if (dup2(PARK_SYNC_FD, JAIL_FD_SYNC) < 0 || dup3(PARK_EXE_FD, JAIL_FD_INITEXE, O_CLOEXEC) < 0 ||
            dup3(PARK_PARENT_FD, JAIL_FD_PARENT, O_CLOEXEC) < 0)
                return anvil_err_sys(err, errno, "Failed to place the sync socket");
        /* The relay's socket for pid 1, which passes it to the relay alone (pid1.c): never
         * the runner's. Made above the parked fds (step_egress), so 7 is free to take. */
        if (relay >= 0 && (dup2(relay, JAIL_FD_RELAY) < 0 || dup2(egress, JAIL_FD_EGRESS) < 0))
                return anvil_err_sys(err, errno, "Failed to place the relay's sockets"); /* kept across the exec */
        if (close_range(relay >= 0 ? JAIL_FD_EGRESS + 1 : JAIL_FD_PARENT + 1, ~0U, 0) < 0)
                return anvil_err_sys(err, errno, "Failed to close inherited fds");
        return 0;
}

/* Direct, as root (C9): no user namespace to map a uid into, so the child becomes the run's
 * host uid itself; the bounding and ambient sets go first, while CAP_SETPCAP is ours. */
static int direct_take_uid(uid_t uid, struct anvil_err *err)
{
        int r = jail_caps_drop_bounding(err);
        if (r < 0)
                return r;
        if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                return anvil_err_sys(err, errno, "Failed to become uid %u", (unsigned)uid);
        return 0;
}

/* What the steps share: the server's part, the sync socket as it moves (C2, C8), and the
 * run's part once GO came (C5). */
struct child {
        const struct jail_static *st;
        int sync;         /* where an error is reported: the inherited socket, parked (C2), placed (C8) */
        uid_t direct_uid; /* direct, as root: the run's host uid, from MAPPED (C3) */
        struct jail_go *go;
        int fds[JAIL_GO_FDS];
        struct jail_inputs *inputs;
        int input_fds[JAIL_INPUTS_MAX];
        int relay;  /* a run granted network: the relay's listening socket (C5), else -1 */
        int egress; /* a run granted network: its anvil-egress socket, O_PATH (C5), else -1 */
};

/* C2. If the supervisor dies, so does the jail. The environment strings are zeroed in place
 * so /proc/1/environ shows nothing. (Not dumpable comes at C3.) */
static int step_orphan_proof(struct child *c, struct anvil_err *err)
{
        arm_parent_death(c->st, c->st->sync_fd, c->st->parent_pidfd);
        for (char **e = environ; e && *e; e++)
                explicit_bzero(*e, strlen(*e));
        int r = keep_only_parked(c->st);
        if (r < 0)
                return anvil_err_sys(err, -r, "Failed to close inherited fds");
        c->sync = PARK_SYNC_FD;
        return 0;
}

/* C3. Direct, as root, MAPPED carries the run's host uid, which we take at C9 (no map to
 * write). Then not dumpable: this process is a copy of the supervisor's memory until C11, and
 * nothing in the jail may read it. Not before MAPPED: until then the supervisor opens our
 * namespaces to hold them (pool.c) and, rootless, writes our maps, and both need us dumpable
 * once it holds no CAP_SYS_PTRACE (supervisor/privilege.c: a non-dumpable process's ns and
 * /proc files need that capability in the initial namespace). Meanwhile only processes of
 * our own host uid (root, or the rootless supervisor's) could reach us, and we hold nothing
 * of any run yet. */
static int step_wait_mapped(struct child *c, struct anvil_err *err)
{
        struct jail_msg mapped;
        ssize_t n;
        do
                n = recv(PARK_SYNC_FD, &mapped, sizeof(mapped), 0);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof(mapped) || mapped.kind != JAIL_MSG_MAPPED)
                child_exit(127); /* the supervisor gave up on us */
        c->direct_uid = (uid_t)mapped.pid;
        if (prctl(PR_SET_DUMPABLE, 0) < 0)
                return anvil_err_sys(err, errno, "Failed to clear the dumpable flag");
        return 0;
}

/* C4. A spare waits at C5 as long as no run takes it: armed again for that wait. */
static int step_userns(struct child *c, struct anvil_err *err)
{
        if (jail_userns_child(err) < 0)
                return -1;
        arm_parent_death(c->st, PARK_SYNC_FD, PARK_PARENT_FD);
        return 0;
}

/* C5, before GO: the run-independent root. */
static int step_root(struct child *c, struct anvil_err *err)
{
#ifdef ANVIL_TEST_BUILD
        if (c->st->test_child_fail_before_go)
                return anvil_err_set(err, EIO, "Failed to make the jail's root: --test-child-fail-before-go");
#endif
        return jail_mountns_child(c->st, err);
}

/* C5: PREPARED, then GO with the run's part and its fds. A spare waits here. */
static int step_wait_go(struct child *c, struct anvil_err *err)
{
        (void)err;
        /* Not malloc'd: cloned from a process with threads (libuv's pool), the child may find
         * an allocator lock taken by one of them at the clone and never released (clone, unlike
         * fork, runs no atfork handlers). Nothing the child runs before exec allocates. */
        static struct jail_go go;
        c->go = &go;
        jail_sync_send(PARK_SYNC_FD, JAIL_MSG_PREPARED, 0, NULL);
        static struct jail_inputs inputs;
        c->inputs = &inputs;
        if (wait_go(c->go, c->fds) < 0 || wait_inputs(c->go, c->inputs, c->input_fds) < 0)
                child_exit(127);
#ifdef ANVIL_TEST_BUILD
        if (c->st->test_child_alloc) {
                void *volatile p = malloc(1); /* volatile: not elided as a pair with the free */
                free(p);
        }
#endif
        return 0;
}

/* C5, after GO: the run's mounts and pivot_root. A rootless supervisor cannot make a tmpfs;
 * we can, in our own user and mount namespaces: it goes back to the supervisor, which reads
 * it after the run. */
static int step_run_root(struct child *c, struct anvil_err *err)
{
        int *art = &c->fds[JAIL_GO_ARTIFACTS];
        if (c->go->make_artifacts) {
                (void)close(*art);
                if (jail_artifacts_tmpfs(JAIL_UID, c->go->artifacts_bytes, art, err) < 0)
                        return -1;
                int r = jail_sync_send_fd(PARK_SYNC_FD, JAIL_MSG_ARTIFACTS, *art);
                if (r < 0)
                        return anvil_err_sys(err, -r, "Failed to send the artifacts tmpfs to the supervisor");
        }
        struct jail_config cfg = {
                .st = c->st, .go = c->go, .artifacts_mount_fd = *art, .inputs = c->inputs, .input_fds = c->input_fds
        };
        return jail_mountns_child_go(&cfg, err);
}

/* C5, a run granted network: lo up, the relay's socket bound (netns.c), while the child still
 * holds CAP_NET_ADMIN over its namespace and before Landlock refuses TCP binds. Kept above
 * the parked fds until C8 (a socket's number is the lowest free, which may be 7 now). */
static int step_egress(struct child *c, struct anvil_err *err)
{
        if (!c->go->egress)
                return 0;
        int fd;
        if (jail_netns_child_egress(&fd, err) < 0)
                return -1;
        c->relay = fcntl(fd, F_DUPFD_CLOEXEC, PARK_TMP_MIN + JAIL_GO_FDS + JAIL_INPUTS_MAX);
        (void)close(fd);
        if (c->relay < 0)
                return anvil_err_sys(err, errno, "Failed to keep the relay's socket");
        /* the egress socket, the last of the fds that came after GO (the supervisor's) */
        if (!c->inputs || c->inputs->n == 0)
                return anvil_err_set(err, EINVAL, "No egress socket came with GO");
        c->egress =
                fcntl(c->input_fds[c->inputs->n - 1], F_DUPFD_CLOEXEC, PARK_TMP_MIN + JAIL_GO_FDS + JAIL_INPUTS_MAX);
        if (c->egress < 0)
                return anvil_err_sys(err, errno, "Failed to keep the egress socket");
        return 0;
}

/* C5, direct: no mount of our own: the run's directory on the host is the tool's cwd, and
 * Landlock (C10) holds it to what is below it. */
static int step_run_dir(struct child *c, struct anvil_err *err)
{
        close_reset(&c->fds[JAIL_GO_ARTIFACTS]);
        if (chdir(c->go->run_dir) < 0)
                return anvil_err_sys(err, errno, "Failed to enter %s", c->go->run_dir);
        return 0;
}

/* C6 */
static int step_uts_cgroup(struct child *c, struct anvil_err *err)
{
        (void)c;
        if (jail_utsns_child(err) < 0 || jail_cgroupns_child(err) < 0)
                return -1;
        return 0;
}

/* C7 */
static int step_rlimits(struct child *c, struct anvil_err *err)
{
        return jail_rlimit_child(&c->go->rlimits, err);
}

/* C8 */
static int step_fds(struct child *c, struct anvil_err *err)
{
        if (place_fds(c->fds, c->relay, c->egress, err) < 0)
                return -1;
        c->sync = JAIL_FD_SYNC;
        return 0;
}

/* C9 */
static int step_caps(struct child *c, struct anvil_err *err)
{
        (void)c;
        return jail_caps_child(false, err);
}

/* C9, direct: as root, the bounding set emptied while we may, then the run's host uid, which
 * takes the rest of our capabilities with it; no_new_privs. */
static int step_direct_caps(struct child *c, struct anvil_err *err)
{
        if (!c->st->rootless && direct_take_uid(c->direct_uid, err) < 0)
                return -1;
        return jail_caps_child(true, err);
}

/* C10 */
static int step_landlock(struct child *c, struct anvil_err *err)
{
        return jail_landlock_child(c->st, c->go, JAIL_FD_SYNC, err) < 0 ? -1 : 0;
}

/* C11. After the last change of credentials; nothing from here to the exec changes them, and
 * the exec (of a binary that is not set-id, gaining no capability) keeps the signal. Direct:
 * the runner is the supervisor's copy, on the host's path, and the tool's scratch is the
 * run's own tmp/. Returns only on failure. */
static int exec_pid1(struct child *c, bool direct, struct anvil_err *err)
{
        const struct jail_static *st = c->st;
        arm_parent_death(st, JAIL_FD_SYNC, JAIL_FD_PARENT);
        char *argv[6] = { "anvil-init" };
        unsigned argc = 1;
        if (direct)
                argv[argc++] = (char *)st->runner_path;
        if (c->go->egress)
                argv[argc++] = "--relay"; /* its socket at JAIL_FD_RELAY (C8) */
#ifdef ANVIL_TEST_BUILD
        if (st->test_no_sync_watch)
                argv[argc++] = "--test-no-sync-watch";
        if (st->test_no_signal_reset)
                argv[argc++] = "--test-no-signal-reset";
#endif
        argv[argc] = NULL;
        char *const *env = st->env;
        char *denv[16], home[PATH_MAX + 16], tmpdir[PATH_MAX + 16], mpl[PATH_MAX + 32];
        if (direct) {
                size_t k = 0;
                snprintf(home, sizeof(home), "HOME=%s/tmp", c->go->run_dir);
                snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s/tmp", c->go->run_dir);
                snprintf(mpl, sizeof(mpl), "MPLCONFIGDIR=%s/tmp/matplotlib", c->go->run_dir); /* the cache, copied */
                denv[k++] = home;
                denv[k++] = tmpdir;
                denv[k++] = mpl;
                for (char *const *e = st->env; *e && k < ELEMENTSOF(denv) - 1; e++)
                        if (strncmp(*e, "HOME=", 5) && strncmp(*e, "TMPDIR=", 7) && strncmp(*e, "MPLCONFIGDIR=", 13))
                                denv[k++] = *e;
                denv[k] = NULL;
                env = denv;
        }
        /* Pid 1 starts as a program from a plain shell would: the supervisor's ignored SIGPIPE
         * and any signal libuv blocked stay behind (an ignored signal and the mask survive
         * execve). Last before the exec: until here the child is the supervisor's copy. */
        bool reset = true;
#ifdef ANVIL_TEST_BUILD
        reset = !st->test_no_signal_reset;
#endif
        int r;
        if (reset && (r = anvil_reset_signals()) < 0)
                return anvil_err_sys(err, -r, "Failed to reset the signal mask");
        execveat(JAIL_FD_INITEXE, "", argv, env, AT_EMPTY_PATH);
        return anvil_err_sys(err, errno, "Failed to execute anvil-init, the jail's pid 1");
}

static int step_exec(struct child *c, struct anvil_err *err)
{
        return exec_pid1(c, false, err);
}

static int step_direct_exec(struct child *c, struct anvil_err *err)
{
        return exec_pid1(c, true, err);
}

struct step {
        const char *name;
        int (*fn)(struct child *c, struct anvil_err *err);
};

/* The child's steps, in namespaces of its own (C1 made them). */
static const struct step steps[] = {
        { "C2 orphan-proof, nothing inherited", step_orphan_proof },
        { "C3 wait for the maps", step_wait_mapped },
        { "C4 become JAIL_UID", step_userns },
        { "C5 the run-independent root", step_root },
        { "C5 wait for GO", step_wait_go },
        { "C5 the run's mounts, pivot_root", step_run_root },
        { "C5 the way out: lo up, the relay's socket", step_egress },
        { "C6 hostname, cgroup namespace", step_uts_cgroup },
        { "C7 rlimits", step_rlimits },
        { "C8 the runner's fds", step_fds },
        { "C9 no capabilities, no_new_privs", step_caps },
        { "C10 Landlock", step_landlock },
        { "C11 exec pid 1", step_exec },
};

/* Direct: no namespaces (struct jail_static), so no C4 or C6, and no root of its own at C5. */
static const struct step direct_steps[] = {
        { "C2 orphan-proof, nothing inherited", step_orphan_proof },
        { "C3 wait for MAPPED", step_wait_mapped },
        { "C5 wait for GO", step_wait_go },
        { "C5 the run's directory", step_run_dir },
        { "C7 rlimits", step_rlimits },
        { "C8 the runner's fds", step_fds },
        { "C9 the run's uid, no_new_privs", step_direct_caps },
        { "C10 Landlock", step_landlock },
        { "C11 exec pid 1", step_direct_exec },
};

#ifdef ANVIL_TEST_BUILD
/* A test build's guard of that rule (step_wait_go), with supervisor/main.c's allocator: where
 * the child reports an allocation before exec. The child's alone (no CLONE_VM). */
const int *volatile jail_child_sync;
#define CHILD_GUARD(c) (jail_child_sync = &(c)->sync)
#else
#define CHILD_GUARD(c) ((void)(c))
#endif

static int child_main(void *arg)
{
        struct child c = { .st = arg, .sync = ((const struct jail_static *)arg)->sync_fd, .relay = -1, .egress = -1 };
        CHILD_GUARD(&c);
        struct anvil_err err = ANVIL_ERR_INIT;
        const struct step *list = c.st->direct ? direct_steps : steps;
        size_t n = c.st->direct ? ELEMENTSOF(direct_steps) : ELEMENTSOF(steps);
        for (size_t i = 0; i < n; i++)
                if (list[i].fn(&c, &err) < 0)
                        child_fail(c.sync, &err);
        child_exit(127); /* not reached: the last step execs or fails */
        return 127;
}

int jail_contain_clone(const struct jail_static *st, pid_t *pid, int *pidfd, struct anvil_err *err)
{
        /* The stack is only this process's until clone returns: without CLONE_VM the child
         * runs on its own copy, so it is unmapped here at once. */
        void *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return anvil_err_sys(err, errno, "Failed to allocate the child's stack");
        int fd = -1;
        /* C1: each mechanism's namespace (none in direct mode: see struct jail_static); the pid
         * and IPC namespaces are their flags alone. */
        int flags = jail_userns_prepare(st) | jail_mountns_prepare(st) | jail_netns_prepare(st) |
                    jail_utsns_prepare(st) | (st->direct ? 0 : CLONE_NEWPID | CLONE_NEWIPC) | CLONE_PIDFD | SIGCHLD;
        pid_t p = clone(child_main, (char *)stack + CHILD_STACK, flags, (void *)st, &fd);
        int saved = errno;
        (void)munmap(stack, CHILD_STACK);
        if (p < 0)
                return anvil_err_sys(err, saved, "Failed to clone into new namespaces");
        *pid = p;
        *pidfd = fd;
        return 0;
}

int jail_contain_inputs(int sync_fd, const struct jail_inputs *in, const int *fds, struct anvil_err *err)
{
        return fd_send_fds(sync_fd, in, sizeof(*in), fds, in->n, err);
}

int jail_contain_go(int sync_fd, const struct jail_go *go, const int fds[JAIL_GO_FDS], struct anvil_err *err)
{
        int r = fd_send_fds(sync_fd, go, sizeof(*go), fds, JAIL_GO_FDS, NULL);
        if (r < 0)
                return anvil_err_sys(err, -r, "Failed to send GO to the jail's child");
        return 0;
}
