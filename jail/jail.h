/* jail/: building the jail, root's code. It runs in the supervisor (root, its named
 * capability set: supervisor/privilege.c) and in the jail's child, which starts as the
 * supervisor's clone and gives up its privilege step by step (contain.c, C1-C11) before it
 * executes pid 1. Three parts run after that, in the jail, with no capability and the jail's
 * uid: pid1.c and init/ (anvil-init, the jail's pid 1), and the runner's calls into
 * landlock.c and seccomp.c (jail_landlock_verify, jail_seccomp_install). */
/* Building the jail, one file per kernel mechanism (CONVENTIONS §5). Each has the same verbs:
 * _prepare before clone, _parent in the supervisor after clone, _child inside the new
 * namespaces; a verb a mechanism does not need is absent. contain.c lists the child's steps
 * in order, on one screen. Which each has:
 *
 *   userns.c    _prepare (its clone flag), _parent (the uid/gid maps, C3), _child (C4)
 *   mountns.c   _prepare (its clone flag), _child (the run-independent root, C5, before GO),
 *               _child_go (the run's part and pivot_root, C5, after GO); and
 *               jail_artifacts_tmpfs, the supervisor's before GO (the child's when rootless)
 *   netns.c     _prepare (its clone flag): nothing to do inside, no interface is up
 *   utsns.c     _prepare (its clone flag), _child (the hostname, C6)
 *   cgroupns.c  _child (C6: unshared after the move into the run's cgroup, not at C1)
 *   cgroup.c    the supervisor's: the run's cgroup made, the child moved in, limits read back
 *               (cgroup.h); nothing inside
 *   rlimit.c    _child (C7)
 *   caps.c      _child (C9)
 *   landlock.c  _prepare (jail_landlock_abi, the supervisor's, once), _child (C10), and the
 *               runner's _verify (R6); building from policy/jail_paths.h; explaining a
 *               denial is the supervisor's (supervisor/kaudit.c, policy/kaudit.c)
 *   seccomp.c   the runner's alone (_install, R6): see its opening comment
 *   pid1.c      the jail's pid 1 (anvil-init), executed at C11
 * The pid and IPC namespaces have no file: each is its clone flag alone (contain.c, C1); pid
 * 1 is pid1.c's.
 *
 * Nothing here logs or exits the supervisor: errors come back as anvil_err. In the child,
 * errors go to the supervisor as a jail_msg record on the sync socket. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "policy/jail_paths.h"

/* The jail's view: where things are mounted. Paths the tool sees (DESIGN §4). */
#define JAIL_WORKDIR "/work"
#define JAIL_INPUTS "/work/inputs"
#define JAIL_ARTIFACTS "/work/artifacts"
#define JAIL_TMP "/tmp"
#define JAIL_RUNNER "/anvil/anvil-py"
#define JAIL_MPLCONFIGDIR "/tmp/matplotlib"
#define JAIL_UID 1000 /* the tool's uid and gid inside; mapped to one host uid per run */
#define JAIL_HOSTNAME "anvil"
#define JAIL_NOFILE 1024 /* the tool's RLIMIT_NOFILE, soft and hard (C7) */
/* Files, directories and links (inodes) the tool may make: in /work/artifacts as many as a
 * result lists (PROTO_ARTIFACTS_MAX, checked in supervisor/rundir.c), so that every regular
 * file there can be listed; in /tmp, scratch, a few more. Each tmpfs's nr_inodes is one more:
 * its root. Past them the kernel refuses a new file with ENOSPC. */
#define JAIL_ARTIFACTS_ENTRIES 1000
#define JAIL_TMP_ENTRIES 4096
/* /tmp goes with the jail's mount namespace, so pid 1 looks at it when the runner ends (P5):
 * no room left, no entry left. */
#define JAIL_TMP_FULL_BYTES 1u
#define JAIL_TMP_FULL_ENTRIES 2u

/* fds as the runner receives them. */
#define JAIL_FD_SPEC 0
#define JAIL_FD_EVENTS 3
#define JAIL_FD_SYNC 4    /* pid 1 only */
#define JAIL_FD_NOTIFY 4  /* the runner only, until it has sent its seccomp listener (jail/seccomp.c) */
#define JAIL_FD_INITEXE 5 /* anvil-init, only until its exec */
#define JAIL_FD_PARENT 6  /* the supervisor's pidfd, only until the exec of pid 1 (C2-C11) */
#define JAIL_FD_RELAY 7   /* a run granted network: the relay's listening socket, pid 1 only (relay.c) */
#define JAIL_FD_EGRESS 8  /* a run granted network: its anvil-egress socket (O_PATH), pid 1 only (relay.c) */

/* A run granted network (issue 17, docs/egress.md): its anvil-egress socket, the broker's
 * O_PATH fd itself, held by pid 1 at JAIL_FD_EGRESS for the relay alone (no mount: the
 * installed proxy's socket is in a mount namespace of its own, whose mounts cannot be cloned),
 * and the relay (relay.c) serving HTTP_PROXY on the jail's own loopback at
 * 127.0.0.1:JAIL_EGRESS_PORT, connecting to that socket through the fd (JAIL_EGRESS_SOCK: the
 * kernel follows the fd's link to the socket whatever namespace its mount is in) and copying
 * bytes unchanged. */
#define JAIL_STR_(x) #x
#define JAIL_STR(x) JAIL_STR_(x)
#define JAIL_EGRESS_SOCK "/proc/self/fd/" JAIL_STR(JAIL_FD_EGRESS)
#define JAIL_EGRESS_ADDR "127.0.0.1"
#define JAIL_EGRESS_PORT 3128
#define JAIL_EGRESS_PROXY "http://127.0.0.1:3128"
#define JAIL_RELAY_PAIRS 16 /* connections the relay copies at once; one more is closed at once */

/* Records on the sync socket (SOCK_SEQPACKET), one per datagram. */
enum jail_msg_kind {
        JAIL_MSG_GO = 1,         /* supervisor -> child: the run's part (struct jail_go);
                                 supervisor -> pid 1: the jail is verified, start the runner */
        JAIL_MSG_ERROR = 2,      /* child or pid 1 -> supervisor: building the jail failed */
        JAIL_MSG_READY = 3,      /* pid 1 -> supervisor: built; verify me before any tool code runs */
        JAIL_MSG_EXEC_OK = 4,    /* pid 1 -> supervisor: the runner exec'd */
        JAIL_MSG_EXIT = 5,       /* pid 1 -> supervisor: the runner's wait status and rusage */
        JAIL_MSG_MAPPED = 6,     /* supervisor -> child: the uid/gid maps are written */
        JAIL_MSG_PREPARED = 7,   /* child -> supervisor: the run-independent root is built */
        JAIL_MSG_NOTIFY = 8,     /* pid 1 -> supervisor: the runner's seccomp listener (SCM_RIGHTS) */
        JAIL_MSG_NOTIFY_OK = 9,  /* supervisor -> pid 1 -> runner: the filter is seen in force from
                                   outside and its listener watched; the tool may start */
        JAIL_MSG_INPUTS = 12,    /* supervisor -> child: the input trees (struct jail_inputs) */
        JAIL_MSG_ARTIFACTS = 11, /* child -> supervisor: the artifacts tmpfs it made (SCM_RIGHTS),
                                    when the supervisor is rootless and could not (C5) */
        JAIL_MSG_LANDLOCK = 10,  /* child -> supervisor: Landlock's ABI in force (status, 0: none)
                                  and its description, or why there is none (landlock.c) */
};

struct jail_msg {
        uint32_t kind;
        int32_t err_no;
        int32_t status;
        int32_t pid;
        uint32_t tmp_full; /* EXIT: JAIL_TMP_FULL_*, /tmp as pid 1 found it when the runner ended */
        uint32_t reserved;
        uint64_t utime_us;
        uint64_t stime_us;
        uint64_t maxrss_kb;
        char msg[200];
};

struct jail_rlimits {
        uint64_t cpu_s;    /* soft; the hard limit is one second more */
        uint64_t as_bytes; /* 0: not set (a memory cgroup is in force instead) */
        uint64_t fsize_bytes;
        uint64_t nproc;
        uint64_t nofile;
};

/* Fixed when the child is cloned: the server's, the same for every run. */
struct jail_static {
        bool rootless;              /* the supervisor is not root: it writes our maps as an
                                       ordinary user, who may only while we are dumpable (C2) */
        bool direct;                /* no user namespace can be made here: no namespaces at all;
                                       the child stays on the host's paths (the run directory),
                                       held by Landlock and seccomp alone (DESIGN §6's
                                       landlock+seccomp rung) */
        const char *root_dir;       /* an empty directory each child mounts its root on, in its
                                       own mount namespace */
        const char *runner_path;    /* anvil-py, bound read-only at JAIL_RUNNER */
        const char *font_cache_dir; /* its files bound read-only into JAIL_MPLCONFIGDIR; may be NULL */
        int init_exe_fd;            /* anvil-init, executed as the jail's pid 1 */
        int sync_fd;                /* the child's end of the sync socket */
        int parent_pidfd;           /* the supervisor's own pidfd: readable once it has exited,
                                       so the child can tell it is gone after re-arming its
                                       parent-death signal (C4, C11) */
        char *const *env;           /* the runner's whole environment */
        int landlock_abi;           /* the kernel's Landlock ABI (jail_landlock_abi), 0: none */
        bool landlock_log;          /* have the kernel log denials after exec (ABI 7) */
        bool test_skip_landlock;    /* test builds only: apply no Landlock, say so */
        /* Test builds only, each to show the other of the two means by which no jail outlives
         * its supervisor holds alone: no parent-death signal (C2, C4, C11), and a pid 1 that
         * does not watch its sync socket (P4a, P5). */
        bool test_no_pdeathsig;
        bool test_no_sync_watch;
        /* Test builds only: the child (C11) and pid 1 (P3) execute with the signal
         * dispositions and mask they inherited, to show the reset is what clears them. */
        bool test_no_signal_reset;
        /* Test builds only: the child allocates at C5 (after GO), to show the guard that fails a child
         * that allocates before exec (contain.c) sees it. */
        bool test_child_alloc;
        /* Test builds only: the child fails at C5 before GO, to show the supervisor reports the
         * child's own failure, not the GO it could then not send (run.c). */
        bool test_child_fail_before_go;
};

/* GO: the run's own part, sent to a child that may have been cloned ahead of time (a spare),
 * with the run's stdin, stdout, stderr and events fds and its artifacts mount attached
 * (SCM_RIGHTS, in that order). The artifacts are a tmpfs of the run's files cap, made by the
 * supervisor with fsmount() and never attached on the host: the child moves it into its own
 * namespace at JAIL_ARTIFACTS, the supervisor reads it through its fd after the run. */
struct jail_go {
        uint32_t kind;          /* JAIL_MSG_GO */
        uint32_t skip_landlock; /* test builds: the probe's --test-probe-break landlock, this run only */
        struct jail_rlimits rlimits;
        uint64_t tmp_bytes;        /* size of the private /tmp */
        uint64_t artifacts_bytes;  /* the files cap, for an artifacts tmpfs the child makes */
        uint32_t make_artifacts;   /* rootless: the GO fd at JAIL_GO_ARTIFACTS is a placeholder;
                                     the child makes the tmpfs and sends it back (ARTIFACTS) */
        uint32_t n_inputs;         /* input trees that follow GO in one INPUTS message (struct jail_inputs) */
        uint32_t egress;           /* granted network: the last of those fds is the run's egress socket
                              (O_PATH, for JAIL_FD_EGRESS), no input; lo up and the relay's socket (C5) */
        char inputs_dir[PATH_MAX]; /* bound read-only at JAIL_INPUTS */
        char run_dir[PATH_MAX];    /* direct: the run's directory on the host, the tool's cwd
                                         (inputs/, artifacts/ and tmp/ below it) */
};
#define JAIL_GO_FDS 5

/* INPUTS, right after GO when it says n_inputs: the inputs a client passed as fds, each a
 * detached mount the supervisor cloned from the client's fd (open_tree), read-only, nosuid,
 * nodev, noexec, attached in this order (SCM_RIGHTS); the child moves each onto
 * JAIL_INPUTS/<name>, whose empty mount point the supervisor made in the run's inputs/. */
#define JAIL_INPUTS_MAX 32
#define JAIL_INPUT_NAME_MAX 128
struct jail_inputs {
        uint32_t kind; /* JAIL_MSG_INPUTS */
        uint32_t n;
        uint64_t bound_bytes; /* the supervisor's own: the mounted files' sizes (its blast radius) */
        char names[JAIL_INPUTS_MAX][JAIL_INPUT_NAME_MAX + 1];
};
/* Sends INPUTS (after jail_contain_go). */
int jail_contain_inputs(int sync_fd, const struct jail_inputs *in, const int *fds, struct anvil_err *err);
#define JAIL_GO_ARTIFACTS 4 /* index of the artifacts mount among the GO fds */

/* What the child's steps work from. */
struct jail_config {
        const struct jail_static *st;
        const struct jail_go *go;
        int artifacts_mount_fd;
        const struct jail_inputs *inputs; /* NULL: none */
        const int *input_fds;             /* go->egress: the last is the egress socket's tree */
};

/* contain.c: clone into new namespaces; the child waits for GO (C3). Returns the child's pid
 * and a pidfd for it. */
int jail_contain_clone(const struct jail_static *st, pid_t *pid, int *pidfd, struct anvil_err *err);
/* Sends GO and the run's fds (stdin, stdout, stderr, events) to a waiting child. */
int jail_contain_go(int sync_fd, const struct jail_go *go, const int fds[JAIL_GO_FDS], struct anvil_err *err);

/* _prepare of a namespace: its clone flag, 0 in direct mode (no namespaces). */
int jail_userns_prepare(const struct jail_static *st);
int jail_mountns_prepare(const struct jail_static *st);
int jail_netns_prepare(const struct jail_static *st);
/* netns.c, C5 after GO, a run granted network only: lo up in the jail's own namespace and the
 * relay's listening socket bound at 127.0.0.1:JAIL_EGRESS_PORT (*fd). */
int jail_netns_child_egress(int *fd, struct anvil_err *err);
int jail_utsns_prepare(const struct jail_static *st);

/* userns.c */
int jail_userns_parent(pid_t pid, uid_t host_uid, gid_t host_gid, struct anvil_err *err);
int jail_userns_child(struct anvil_err *err);

/* mountns.c: the run-independent part of the root, before GO (a spare builds it while it
 * waits); then the run's part, pivot_root and the read-only root. */
int jail_mountns_child(const struct jail_static *st, struct anvil_err *err);
int jail_mountns_child_go(const struct jail_config *cfg, struct anvil_err *err);
/* The contents of a synthetic file of the jail's (mount SYNTH in policy/jail_paths.h), or NULL. */
const char *jail_mountns_synthetic(const char *path);

/* utsns: hostname; cgroupns: after the supervisor moved us into the run's cgroup. */
int jail_utsns_child(struct anvil_err *err);
int jail_cgroupns_child(struct anvil_err *err);

/* rlimit.c */
int jail_rlimit_child(const struct jail_rlimits *rl, struct anvil_err *err);

/* caps.c: drop every capability (bounding, ambient, inheritable, then permitted and effective
 * are lost at the exec of pid 1 as uid JAIL_UID) and set no_new_privs. */
int jail_caps_child(bool unprivileged, struct anvil_err *err);
/* The bounding and ambient sets emptied (CAP_SETPCAP needed): jail_caps_child's first step, and
 * the direct rung's before it changes uid (contain.c). */
int jail_caps_drop_bounding(struct anvil_err *err);

/* mountns.c: a detached tmpfs for the artifacts, owned by uid, sized to the files cap, with
 * room for JAIL_ARTIFACTS_ENTRIES entries. */
int jail_artifacts_tmpfs(uid_t uid, uint64_t files_bytes, int *mount_fd, struct anvil_err *err);

/* Sends a record of kind with one fd (SCM_RIGHTS, lib/fd.h) on the sync socket. 0, or -errno. */
int jail_sync_send_fd(int sock, uint32_t kind, int fd);

/* landlock.c. _abi: the Landlock ABI to use, the running kernel's up to the newest this code
 * knows (7), 0 if it has none (in the supervisor, before any clone). _child (C10): builds the ruleset and restricts the child, then reports
 * on sync_fd (JAIL_MSG_LANDLOCK) what is in force: returns the ABI applied, 0 when the kernel
 * has no Landlock (not an error: the run goes on, and its result says so), <0 on failure.
 * _describe: "landlock ABI 7: fs, net, scope". _verify (the runner, before the tool's first
 * line): 0 if Landlock is seen enforced, -EPERM with the evidence otherwise. */
int jail_landlock_abi(void);
/* The filesystem rights a grant of the table's landlock column stands for (before they are
 * cut to what the kernel handles, and on a file to what a file may carry). */
uint64_t jail_landlock_rights(enum pol_jp_landlock l);
int jail_landlock_child(const struct jail_static *st, const struct jail_go *go, int sync_fd, struct anvil_err *err);
void jail_landlock_describe(int abi, char *buf, size_t size);
int jail_landlock_verify(int abi, char *evidence, size_t size);

/* pid1.c: the jail's pid 1, anvil-init: it forks and execs the runner, reaps, and reports
 * the runner's end on JAIL_FD_SYNC. */
/* relay: jail_relay_main, given by anvil-init's main (init/main.c), so that the supervisor,
 * which links pid1.c for jail_sync_send, does not link the relay (code of the jail's). */
int jail_pid1_main(int argc, char **argv, void (*relay)(int listen_fd));
/* relay.c: pid 1's child in a run granted network; never returns. */
void jail_relay_main(int listen_fd) __attribute__((noreturn));

/* seccomp.c (in the runner): loads the filter of policy/seccomp_rules.c; *listener is its
 * notification fd, for the supervisor. */
/* egress: the run is granted network, so socket(AF_INET, SOCK_STREAM) is let through (the
 * relay's loopback, the only place Landlock and the jail's namespace let it reach). */
int jail_seccomp_install(bool egress, int *listener, struct anvil_err *err);

/* Sends a record on the sync socket; used by the child and pid 1. */
void jail_sync_send(int fd, uint32_t kind, int err_no, const char *msg);

#ifdef ANVIL_TEST_BUILD
/* Test builds: the jail's child's sync socket, from its clone to its exec (NULL elsewhere), for
 * the guard that fails a child that allocates before exec (supervisor/main.c). */
extern const int *volatile jail_child_sync;
#endif
