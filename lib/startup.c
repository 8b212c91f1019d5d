/* The daemons' start-up checks (lib/startup.h). Each check asks the kernel the question the
 * daemon will ask it later (make a socket there, a directory, a file of a jail's, an
 * executable), so that the answer is the real one: access() bits alone would say yes to root
 * on a read-only or noexec filesystem. */
#define _GNU_SOURCE
#include "lib/startup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "policy/reasons.h"

#define PROBE_FILE_BYTES 65536 /* the state probe's test file: a real write, not a mere create */

/* Formats start-up message POL_STARTUP_ID into msg (checked by the compiler, reasons.h) and is
 * -code, code taken before the message is formatted. */
#define SAY(msg, size, code, ID, ...)                                                           \
        ({                                                                                      \
                int say_code_ = (code);                                                         \
                (void)POL_STARTUP_MSG(msg, size, ID, ##__VA_ARGS__);                            \
                -say_code_;                                                                     \
        })

/* The directory of path ("." for a bare name), in dir. */
static void parent_of(const char *path, char *dir, size_t size)
{
        const char *slash = strrchr(path, '/');
        if (!slash)
                snprintf(dir, size, ".");
        else if (slash == path)
                snprintf(dir, size, "/");
        else
                snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* dir does not stat: which of its leading parts is missing or not a directory. Returns
 * ENOENT with the directory to make in `missing` (dir itself), or ENOTDIR with the part
 * that is in the way in `bad`. */
static int why_no_dir(const char *dir, char *bad, size_t size)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s", dir);
        for (;;) {
                struct stat st;
                if (stat(p, &st) == 0) {
                        if (S_ISDIR(st.st_mode))
                                return ENOENT;
                        snprintf(bad, size, "%s", p);
                        return ENOTDIR;
                }
                char *slash = strrchr(p, '/');
                if (!slash || slash == p)
                        return ENOENT;
                *slash = 0;
        }
}

static const char *file_kind(mode_t m)
{
        return S_ISREG(m)    ? "a regular file"
               : S_ISDIR(m)  ? "a directory"
               : S_ISLNK(m)  ? "a symbolic link"
               : S_ISFIFO(m) ? "a fifo"
               : S_ISCHR(m) || S_ISBLK(m) ? "a device node"
                                          : "not a socket";
}

int startup_socket_check(const char *opt, const char *path, char *msg, size_t size)
{
        char dir[PATH_MAX], bad[PATH_MAX];
        struct stat st;
        parent_of(path, dir, sizeof(dir));
        /* libuv's uv_pipe_bind turns bind()'s ENOENT into EACCES (to match Windows), so a
         * missing directory would read "permission denied": it is looked at first, here. */
        if (stat(dir, &st) < 0) {
                if (why_no_dir(dir, bad, sizeof(bad)) == ENOTDIR)
                        return SAY(msg, size, ENOTDIR, SOCK_DIR_NOT_DIR, opt, path, bad);
                return SAY(msg, size, ENOENT, SOCK_DIR_MISSING, opt, path, dir, dir);
        }
        if (!S_ISDIR(st.st_mode))
                return SAY(msg, size, ENOTDIR, SOCK_DIR_NOT_DIR, opt, path, dir);
        /* With the effective ids and capabilities: EROFS for anyone, EACCES for a user. */
        if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
                return SAY(msg, size, errno, SOCK_DIR_NOT_WRITABLE, opt, path, (unsigned)geteuid(), dir,
                           strerror(errno));
        if (lstat(path, &st) < 0) {
                if (errno == ENOENT)
                        return 0;
                return SAY(msg, size, errno, SOCK_DIR_NOT_WRITABLE, opt, path, (unsigned)geteuid(), dir,
                           strerror(errno));
        }
        if (!S_ISSOCK(st.st_mode))
                return SAY(msg, size, EEXIST, SOCK_NOT_SOCKET, opt, path, file_kind(st.st_mode));
        /* A socket is stale only if nobody answers on it: never take a live daemon's. */
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return SAY(msg, size, errno, SOCK_UNCHECKABLE, opt, path, strerror(errno));
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
                struct ucred cred = { .pid = 0 };
                socklen_t len = sizeof(cred);
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0)
                        return SAY(msg, size, EADDRINUSE, SOCK_IN_USE_BUSY, opt, path);
                return SAY(msg, size, EADDRINUSE, SOCK_IN_USE, opt, path, (int)cred.pid);
        }
        if (errno == EAGAIN) /* a listener whose backlog is full: alive */
                return SAY(msg, size, EADDRINUSE, SOCK_IN_USE_BUSY, opt, path);
        if (errno != ECONNREFUSED)
                return SAY(msg, size, errno, SOCK_UNCHECKABLE, opt, path, strerror(errno));
        if (unlink(path) < 0 && errno != ENOENT)
                return SAY(msg, size, errno, SOCK_DIR_NOT_WRITABLE, opt, path, (unsigned)geteuid(), dir,
                           strerror(errno));
        (void)SAY(msg, size, 0, SOCK_STALE_REMOVED, opt, path);
        return 1;
}

/* ENOSPC and EDQUOT are a full filesystem; EROFS a read-only one; the rest, no right to write. */
static int state_write_error(const char *dir, const char *what, int e, unsigned long long need, char *msg,
                             size_t size)
{
        struct statvfs sv;
        if (e == EROFS)
                return SAY(msg, size, e, STATE_READ_ONLY, dir);
        if ((e == ENOSPC || e == EDQUOT) && statvfs(dir, &sv) == 0)
                return SAY(msg, size, e, STATE_FULL, dir, (unsigned long long)sv.f_bavail * sv.f_frsize,
                           (unsigned long long)sv.f_favail, need);
        return SAY(msg, size, e, STATE_NOT_WRITABLE, dir, (unsigned)geteuid(), what, strerror(e));
}

/* The probe proper, in the test entry `name` below dirfd (removed by the caller). */
static int state_probe(const char *dir, int dirfd, const char *name, uid_t jail_uid, bool exec,
                       unsigned long long need, char *msg, size_t size)
{
        if (mkdirat(dirfd, name, 0700) < 0)
                return state_write_error(dir, "mkdir", errno, need, msg, size);
        _cleanup_close_ int d = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0)
                return state_write_error(dir, "open", errno, need, msg, size);
        _cleanup_close_ int f = openat(d, "f", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
        if (f < 0)
                return state_write_error(dir, "create", errno, need, msg, size);
        static const char block[4096];
        for (size_t done = 0; done < PROBE_FILE_BYTES; done += sizeof(block)) {
                errno = 0; /* a short write sets none */
                if (write(f, block, sizeof(block)) != (ssize_t)sizeof(block))
                        return state_write_error(dir, "write", errno ? errno : ENOSPC, need, msg, size);
        }
        if (fsync(f) < 0)
                return state_write_error(dir, "fsync", errno, need, msg, size);
        if (jail_uid != (uid_t)-1) {
                /* vfat refuses (EPERM), or with "quiet" says yes and changes nothing: the owner
                 * is read back. */
                struct stat st;
                if (fchown(f, jail_uid, (gid_t)-1) < 0)
                        return SAY(msg, size, errno, STATE_NO_CHOWN, dir, (unsigned)jail_uid,
                                   strerror(errno));
                if (fstat(f, &st) < 0 || st.st_uid != jail_uid)
                        return SAY(msg, size, EPERM, STATE_NO_CHOWN, dir, (unsigned)jail_uid,
                                   "the owner did not change");
        }
        if (exec && (fchmod(f, 0755) < 0 || faccessat(d, "f", X_OK, AT_EACCESS) < 0))
                return SAY(msg, size, EACCES, STATE_NOEXEC, dir, dir);
        /* A filesystem with room for the probe and not for what start-up writes. */
        struct statvfs sv;
        if (statvfs(dir, &sv) == 0 && (unsigned long long)sv.f_bavail * sv.f_frsize < need)
                return SAY(msg, size, ENOSPC, STATE_FULL, dir,
                           (unsigned long long)sv.f_bavail * sv.f_frsize, (unsigned long long)sv.f_favail, need);
        return 0;
}

int startup_state_check(const char *dir, mode_t mode, uid_t jail_uid, bool exec, unsigned long long need,
                        char *msg, size_t size)
{
        char parent[PATH_MAX], bad[PATH_MAX];
        struct stat st;
        bool made = false;
        if (stat(dir, &st) < 0) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return state_write_error(dir, "stat", errno, need, msg, size);
                parent_of(dir, parent, sizeof(parent));
                if (why_no_dir(dir, bad, sizeof(bad)) == ENOTDIR)
                        return SAY(msg, size, ENOTDIR, STATE_NOT_DIR, dir, bad);
                if (stat(parent, &st) < 0)
                        return SAY(msg, size, ENOENT, STATE_PARENT_MISSING, dir, parent, parent);
                if (mkdir(dir, mode) < 0)
                        return state_write_error(dir, "mkdir", errno, need, msg, size);
                made = true;
                (void)chmod(dir, mode); /* exactly mode, whatever the umask; the daemon re-checks */
        } else if (!S_ISDIR(st.st_mode))
                return SAY(msg, size, ENOTDIR, STATE_NOT_DIR, dir, dir);
        int r;
        char name[64];
        snprintf(name, sizeof(name), ".anvil-start-check.%d", (int)getpid());
        {
                _cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dirfd < 0)
                        r = state_write_error(dir, "open", errno, need, msg, size);
                else {
                        r = state_probe(dir, dirfd, name, jail_uid, exec, need, msg, size);
                        _cleanup_close_ int d = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (d >= 0)
                                (void)unlinkat(d, "f", 0); /* may not be there, ignoring */
                        (void)unlinkat(dirfd, name, AT_REMOVEDIR);
                }
        }
        if (r < 0 && made)
                (void)rmdir(dir); /* nothing left behind of a start that did not happen */
        return r;
}

int startup_program_check(const char *what, const char *path, int found, const char *hint, char *msg, size_t size)
{
        struct stat st;
        if (found < 0 && found != -EACCES)
                return SAY(msg, size, -found, PROGRAM_MISSING, what, path, strerror(-found), hint);
        if (stat(path, &st) < 0)
                return SAY(msg, size, errno, PROGRAM_MISSING, what, path, strerror(errno), hint);
        if (found < 0 || !S_ISREG(st.st_mode) || faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0)
                return SAY(msg, size, EACCES, PROGRAM_NOT_EXECUTABLE, what, path, hint);
        return 0;
}

char *startup_supervisor_unreachable(char *buf, size_t size, const char *path, int e)
{
        enum pol_reason h = e == ENOENT ? POL_SUP_HINT_MISSING
                            : e == ECONNREFUSED ? POL_SUP_HINT_REFUSED
                            : e == EACCES || e == EPERM ? POL_SUP_HINT_DENIED
                                                        : POL_SUP_HINT_OTHER;
        return POL_REASON(buf, size, SUPERVISOR_UNREACHABLE, path, strerror(e), pol_reason_format(h));
}

int startup_supervisor_check(const char *path, char *msg, size_t size)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EAGAIN)) {
                int e = errno;
                startup_supervisor_unreachable(msg, size, path, e);
                return -e;
        }
        return 0;
}
