/* Landlock (C10). Where each part lives: the paths and their grants, the table of the jail's
 * paths (policy/jail_paths.h, shared with the mounts, the audit hook and the blast radius);
 * the ABI probe (jail_landlock_abi, the supervisor's at start-up), building and applying the
 * ruleset (the child's, C10) and the runner's check that it is enforced (jail_landlock_verify,
 * R6), here; explaining a denial, from the kernel's audit records, the supervisor's
 * (supervisor/kaudit.c reads them, policy/kaudit.c words them), since the jail cannot be
 * trusted to report its own refusals.
 *
 * The jail's file, TCP and IPC rights as an unprivileged, stackable kernel
 * policy, applied by the jail's child to itself after pivot_root, once its capabilities are
 * gone and no_new_privs is set (landlock_restrict_self() needs one or the other), before it
 * executes anvil-init. pid 1, the runner and everything the tool starts inherit the domain
 * and cannot leave it.
 *
 * Why a second filesystem layer when the mount namespace already holds only what the jail
 * needs: the mounts say what exists, Landlock says what may be done to it. /proc is mounted
 * read-write (a proc mount cannot be read-only for its own processes' files), /dev's nodes
 * accept writes whatever their mount says (/dev/urandom feeds the host's entropy pool), and a
 * read-only bind does not stop a read of a file that is there but none of the tool's business
 * (the jail's /etc/hostname). And the rights are the kernel's to explain: with audit on, each
 * denial is a record the supervisor reads from outside (supervisor/kaudit.c).
 *
 * Every rule is global: the same for every run and every process of the jail (Landlock has no
 * notion of who asks inside a domain). The paths and what each is granted are the table of the
 * jail's paths (policy/jail_paths.h, its landlock column; jail_landlock_rights turns a grant
 * into rights); what is read, written and executed:
 *
 *   /usr                          read files and directories, execute (the interpreter, its
 *                                 libraries, the data stack)
 *   /anvil/anvil-py               read, execute (the runner)
 *   anvil-init (its fd)           read, execute: pid 1, executed through a descriptor of the
 *                                 supervisor's copy, which no path in the jail reaches
 *   /etc: passwd, group, hosts, nsswitch.conf, ld.so.cache, matplotlibrc, alternatives/
 *                                 read files (alternatives/ through its links, not listed):
 *                                 what libc, numpy and matplotlib open. Not /etc/hostname:
 *                                 nothing of the data stack reads it (gethostname() is
 *                                 uname(2)), and not a listing of /etc
 *   /proc                         read (the jail's own pid namespace), never written
 *   /dev/null                     read, write; /dev/zero, /dev/urandom: read. Device ioctls on
 *                                 these three (ABI 5), for isatty() on a descriptor of
 *                                 /dev/null, which Python's start-up does
 *   /work                         list only (it holds inputs/ and artifacts/)
 *   /work/inputs                  read
 *   /work/artifacts, /tmp         read, write, create and remove files, directories and
 *                                 symlinks, truncate (ABI 3), move within and between them
 *                                 (refer, ABI 2); no device nodes, fifos or socket files
 *   TCP (ABI 4)                   bind and connect handled, nothing allowed; a run granted
 *                                 network: connect to JAIL_EGRESS_PORT (the relay's) alone
 *   scopes (ABI 6)                abstract unix sockets and signals: none to outside the domain
 *
 * Denials are logged after the exec of anvil-init and anvil-py only with
 * LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (ABI 7); by default the kernel logs only what the
 * process that restricted itself does, before any exec. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail/compat.h"
#include "jail/jail.h"
#include "lib/cleanup.h"
#include "policy/jail_paths.h"

/* The newest ABI whose rights this file knows; a newer kernel is used at this level. */
#define ABI_KNOWN 7

#define FS_ABI1                                                                                         \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |    \
         LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
         LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |     \
         LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |  \
         LANDLOCK_ACCESS_FS_MAKE_SYM)
/* Rights a rule on a file (not a directory) may carry. */
#define FS_FILE_RIGHTS                                                                               \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
         LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define R_FILE LANDLOCK_ACCESS_FS_READ_FILE
#define R_TREE (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define X_TREE (R_TREE | LANDLOCK_ACCESS_FS_EXECUTE)
#define X_FILE (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE)
#define DEV_R (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define DEV_RW (DEV_R | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
#define W_TREE                                                                                                \
        (R_TREE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_MAKE_REG | \
         LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REMOVE_FILE |         \
         LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_IOCTL_DEV)

uint64_t jail_landlock_rights(enum pol_jp_landlock l)
{
        switch (l) {
        case POL_JP_LL_NONE: return 0;
        case POL_JP_LL_LIST: return LANDLOCK_ACCESS_FS_READ_DIR;
        case POL_JP_LL_READ: return R_FILE;
        case POL_JP_LL_READ_LIST: return R_TREE;
        case POL_JP_LL_EXEC: return X_TREE;
        case POL_JP_LL_DEV_R: return DEV_R;
        case POL_JP_LL_DEV_RW: return DEV_RW;
        case POL_JP_LL_WRITE: return W_TREE;
        }
        return 0;
}

static long ll_create_ruleset(const void *attr, size_t size, __u32 flags)
{
        return syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

int jail_landlock_abi(void)
{
        long abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        /* ENOSYS: built without Landlock; EOPNOTSUPP: built in but not enabled at boot. A newer
         * kernel is used at the newest ABI this file knows, and said to be. */
        if (abi < 0)
                return 0;
        return abi > ABI_KNOWN ? ABI_KNOWN : (int)abi;
}

/* What a kernel of this ABI handles: the filesystem rights it knows. */
static __u64 fs_handled(int abi)
{
        __u64 fs = FS_ABI1;
        if (abi >= 2)
                fs |= LANDLOCK_ACCESS_FS_REFER;
        if (abi >= 3)
                fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
        if (abi >= 5)
                fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
        return fs;
}

void jail_landlock_describe(int abi, char *buf, size_t size)
{
        snprintf(buf, size, "landlock ABI %d: fs%s%s", abi, abi >= 4 ? ", net" : "", abi >= 6 ? ", scope" : "");
}

static int add_path_rule(int ruleset, int fd, const char *what, __u64 access, struct anvil_err *err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return anvil_err_sys(err, errno, "Landlock: failed to stat %s", what);
        if (!S_ISDIR(st.st_mode))
                access &= FS_FILE_RIGHTS; /* the kernel refuses directory rights on a file */
        struct landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };
        if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
                return anvil_err_sys(err, errno, "Landlock: failed to add the rule for %s", what);
        return 0;
}

/* A rule for each entry of the table that Landlock grants anything, where it is for this run:
 * in the jail, or direct (no namespaces) on the host's paths, the run's own directory in place
 * of /work, and none of what only the jail has (no /proc: it would show the host's processes;
 * no /etc but what the interpreter's libraries need: the host's passwd and hosts are the
 * host's business). An optional bind the host lacks has no rule either. */
static int table_rules(int rs, __u64 handled, const struct jail_static *st, const struct jail_go *go,
                       struct anvil_err *err)
{
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                char path[PATH_MAX + 16];
                if (e->landlock == POL_JP_LL_NONE)
                        continue;
                int r = pol_jail_path_where(e, st->direct ? go->run_dir : NULL, st->runner_path, path, sizeof(path));
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return anvil_err_sys(err, -r, "Landlock: no path for %s", e->path);
                _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
                if (fd < 0) {
                        if (e->mount == POL_JP_MOUNT_RO_BIND_OPT && errno == ENOENT)
                                continue;
                        return anvil_err_sys(err, errno, "Landlock: failed to open %s", path);
                }
                if ((r = add_path_rule(rs, fd, path, jail_landlock_rights(e->landlock) & handled, err)) < 0)
                        return r;
        }
        return 0;
}

static int build_ruleset(int abi, const struct jail_static *st, const struct jail_go *go, int *out,
                         struct anvil_err *err)
{
        struct jail_landlock_ruleset_attr attr = { .handled_access_fs = fs_handled(abi) };
        size_t size = sizeof(attr.handled_access_fs);
        if (abi >= 4) {
                /* No port rule: binding and connecting TCP sockets are denied outright. */
                attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
                size = offsetof(struct jail_landlock_ruleset_attr, scoped);
        }
        if (abi >= 6) {
                attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
                size = sizeof(attr);
        }
        _cleanup_close_ int rs = (int)ll_create_ruleset(&attr, size, 0);
        if (rs < 0)
                return anvil_err_sys(err, errno, "Landlock: failed to create a ruleset (ABI %d)", abi);
        __u64 handled = attr.handled_access_fs;
        int r;
        if ((r = table_rules(rs, handled, st, go, err)) < 0)
                return r;
        /* pid 1 is executed through the supervisor's descriptor of its copy of anvil-init (C11):
         * a rule on that file itself, reached by no path in the jail. */
        if ((r = add_path_rule(rs, JAIL_FD_INITEXE, "anvil-init", X_FILE & handled, err)) < 0)
                return r;
        /* A run granted network: TCP connect to the relay's port alone (binding stays denied;
         * the relay's socket was bound before this, C5). The namespace has lo alone, so the
         * port is the relay's on 127.0.0.1: no other host is reachable whatever the address. */
        struct jail_landlock_net_port_attr np = { .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
                                                  .port = JAIL_EGRESS_PORT };
        if (abi >= 4 && go->egress && syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_NET_PORT, &np, 0) < 0)
                return anvil_err_sys(err, errno, "Landlock: failed to allow TCP to port %d", JAIL_EGRESS_PORT);
        *out = TAKE_FD(rs);
        return 0;
}

static void report(int sync_fd, int abi, const char *text)
{
        struct jail_msg m = { .kind = JAIL_MSG_LANDLOCK, .status = abi };
        snprintf(m.msg, sizeof(m.msg), "%s", text);
        (void)send(sync_fd, &m, sizeof(m), MSG_NOSIGNAL);
}

int jail_landlock_child(const struct jail_static *st, const struct jail_go *go, int sync_fd, struct anvil_err *err)
{
        bool skip = go->skip_landlock != 0;
        char text[128];
        int abi = st->landlock_abi;
        if (abi <= 0) {
                /* Not a failure of the sandbox: the run goes on without it, and says so. */
                report(sync_fd, 0, "this kernel has no Landlock (ABI 0)");
                return 0;
        }
        if (st->test_skip_landlock) {
                report(sync_fd, 0, "not applied: test mode (--test-skip-landlock)");
                return 0;
        }
#ifdef ANVIL_TEST_BUILD
        if (skip) {
                report(sync_fd, 0, "not applied: test mode (--test-probe-break landlock)");
                return 0;
        }
#else
        (void)skip;
#endif
        int rs = -1;
        int r = build_ruleset(abi, st, go, &rs, err);
        if (r < 0)
                return r;
        unsigned flags = 0;
        if (abi >= 7 && st->landlock_log)
                flags |= LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON;
        r = (int)syscall(SYS_landlock_restrict_self, rs, flags);
        int saved = errno;
        (void)close(rs);
        if (r < 0)
                return anvil_err_sys(err, saved, "Landlock: failed to restrict the jail (ABI %d)", abi);
        jail_landlock_describe(abi, text, sizeof(text));
        report(sync_fd, abi, text);
        return abi;
}

int jail_landlock_verify(int abi, char *evidence, size_t size)
{
        /* The jail's root is a tmpfs of mode 0755: nothing but Landlock refuses to list it. */
        int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
                (void)close(fd);
                snprintf(evidence, size, "the jail's root could be listed, though the run spec says ABI %d was applied",
                         abi);
                return -EPERM;
        }
        if (errno != EACCES) {
                snprintf(evidence, size, "listing the jail's root failed with %s, not EACCES", strerrorname_np(errno));
                return -EPERM;
        }
        return 0;
}
