#include "fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

int fd_write_all(int fd, const void *buf, size_t len, struct anvil_err *err)
{
        const uint8_t *p = buf;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return anvil_err_sys(err, errno, "Failed to write to fd %d", fd);
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

int fd_read_exact(int fd, void *buf, size_t len, struct anvil_err *err)
{
        uint8_t *p = buf;
        while (len > 0) {
                ssize_t n = read(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return anvil_err_sys(err, errno, "Failed to read from fd %d", fd);
                }
                if (n == 0)
                        return anvil_err_set(err, EPIPE, "Unexpected end of input on fd %d", fd);
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

int fd_read_file(const char *path, size_t max, uint8_t **out, size_t *out_len, struct anvil_err *err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s", path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return anvil_err_sys(err, errno, "Failed to stat %s", path);
        if (!S_ISREG(st.st_mode))
                return anvil_err_set(err, EINVAL, "%s is not a regular file", path);
        return fd_read_all(fd, path, max, out, out_len, err);
}

int fd_read_all(int fd, const char *name, size_t max, uint8_t **out, size_t *out_len, struct anvil_err *err)
{
        size_t cap = 4096, len = 0;
        _cleanup_free_ uint8_t *buf = malloc(cap + 1);
        if (!buf)
                return anvil_err_set(err, ENOMEM, "Out of memory reading %s", name);
        for (;;) {
                if (len == cap) {
                        if (cap > max)
                                return anvil_err_set(err, EFBIG, "%s is larger than %zu bytes", name, max);
                        cap *= 2;
                        uint8_t *nb = realloc(buf, cap + 1);
                        if (!nb)
                                return anvil_err_set(err, ENOMEM, "Out of memory reading %s", name);
                        buf = nb;
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return anvil_err_sys(err, errno, "Failed to read %s", name);
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max)
                        return anvil_err_set(err, EFBIG, "%s is larger than %zu bytes", name, max);
        }
        buf[len] = 0;
        *out = TAKE_PTR(buf);
        *out_len = len;
        return 0;
}

ssize_t fd_read_small(const char *path, char *buf, size_t size, unsigned flags, struct anvil_err *err)
{
        if (size == 0)
                return anvil_err_set(err, EINVAL, "No room to read %s into", path);
        buf[0] = 0;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s", path);
        size_t len = 0;
        for (;;) {
                /* Full: one byte more says whether the file ends here. */
                char extra;
                bool full = len == size - 1;
                if (full && (flags & FD_READ_PREFIX))
                        break;
                ssize_t n = full ? read(fd, &extra, 1) : read(fd, buf + len, size - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = errno;
                        buf[0] = 0;
                        return anvil_err_sys(err, e, "Failed to read %s", path);
                }
                if (n == 0)
                        break;
                if (full) {
                        buf[0] = 0;
                        return anvil_err_set(err, EFBIG, "%s is larger than %zu bytes", path, size - 1);
                }
                len += (size_t)n;
        }
        buf[len] = 0;
        return (ssize_t)len;
}

int fd_write_file_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
                     struct anvil_err *err)
{
        _cleanup_close_ int fd =
                openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", name);
        int r = fd_write_all(fd, buf, len, err);
        if (r < 0)
                return anvil_err_prefix(err, "Failed to write %s", name);
        if (fchmod(fd, mode) < 0) /* umask must not widen or narrow what we asked for */
                return anvil_err_sys(err, errno, "Failed to chmod %s", name);
        return 0;
}

uint64_t now_ms(void)
{
        struct timespec ts;
        (void)clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

DIR *fd_opendir_at(int dirfd)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        DIR *d = fdopendir(fd);
        if (!d) {
                int e = errno;
                (void)close(fd);
                errno = e;
        }
        return d;
}

/* ---- SCM_RIGHTS ---- */

union fd_cmsg {
        char buf[CMSG_SPACE(sizeof(int) * FD_PASS_MAX)];
        struct cmsghdr align;
};

int fd_send_fds(int sock, const void *data, size_t len, const int *fds, size_t n, struct anvil_err *err)
{
        if (n > FD_PASS_MAX || len == 0)
                return anvil_err_set(err, EINVAL, "Failed to send %zu fds with %zu bytes on fd %d: out of range", n,
                                     len, sock);
        union fd_cmsg u;
        memset(&u, 0, sizeof(u));
        struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (n > 0) {
                mh.msg_control = u.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
        }
        ssize_t r;
        do
                r = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return anvil_err_sys(err, errno, "Failed to send %zu fds on fd %d", n, sock);
        if ((size_t)r != len)
                return anvil_err_set(err, EMSGSIZE, "Failed to send %zu fds on fd %d: %zd of %zu bytes sent", n, sock,
                                     r, len);
        return 0;
}

ssize_t fd_recv_fds(int sock, void *data, size_t len, int *fds, size_t max, size_t *n_fds, int flags,
                    struct anvil_err *err)
{
        *n_fds = 0;
        union fd_cmsg u;
        struct iovec iov = { .iov_base = data, .iov_len = len };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        ssize_t r;
        do
                r = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return anvil_err_sys(err, errno, "Failed to receive a message on fd %d", sock);
        /* Every fd the kernel installed is ours to close, whatever else is wrong: collect them
         * all before judging. */
        int got[FD_PASS_MAX];
        size_t n = 0, cmsgs = 0;
        bool foreign = false;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                cmsgs++;
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0)) {
                        foreign = true;
                        continue;
                }
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                const char *end = u.buf + mh.msg_controllen;
                for (size_t i = 0; i < k && (const char *)CMSG_DATA(c) + (i + 1) * sizeof(int) <= end; i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
                        if (n < ELEMENTSOF(got))
                                got[n++] = fd;
                        else
                                (void)close(fd);
                }
        }
        const char *why = NULL;
        if (mh.msg_flags & MSG_TRUNC)
                why = "its data was cut";
        else if (mh.msg_flags & MSG_CTRUNC)
                why = "its control data was cut";
        else if (foreign)
                why = "it carried a control message other than SCM_RIGHTS";
        else if (cmsgs > 1)
                why = "it carried more than one control message";
        else if (n > max)
                why = "it carried more fds than expected";
        if (why) {
                for (size_t i = 0; i < n; i++)
                        (void)close(got[i]);
                return anvil_err_set(err, EBADMSG, "Failed to receive fds on fd %d: %s", sock, why);
        }
        if (n > 0)
                memcpy(fds, got, sizeof(int) * n);
        *n_fds = n;
        return r;
}

ssize_t fd_recv_fds_exact(int sock, void *data, size_t len, int *fds, size_t n, int flags, struct anvil_err *err)
{
        size_t got;
        ssize_t r = fd_recv_fds(sock, data, len, fds, n, &got, flags, err);
        if (r < 0)
                return r;
        if (got != n) {
                for (size_t i = 0; i < got; i++)
                        (void)close(fds[i]);
                if (r == 0 && got == 0)
                        return anvil_err_set(err, EPIPE, "Failed to receive fds on fd %d: the peer closed", sock);
                return anvil_err_set(err, EBADMSG, "Failed to receive fds on fd %d: %zu fds, not %zu", sock, got, n);
        }
        return r;
}
/* ---- fd-relative removal (fd_rm_tree_at) ----
 * The supervisor removes trees that jails' uids wrote into (direct runs' tmp and artifacts,
 * a run's directory): a path walk as root (nftw) resolves each name again from the top, so a
 * uid that swaps a directory for a symlink to / between two steps makes root remove there.
 * Here every name is resolved once, relative to a directory fd already checked, and no
 * resolution follows a symlink. */

static int rm_open_top(int dirfd, const char *name)
{
        struct open_how how = {
                .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        int fd = (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
        if (fd < 0 && (errno == ENOSYS || errno == E2BIG)) /* before Linux 5.6 */
                fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd;
}

struct rm_walk {
        dev_t dev;
        int top_fd;            /* the tree's top, where too deep a directory is moved */
        unsigned max_depth;
        unsigned long moved;   /* directories moved up so far (their names: .anvil-rm-N) */
        int first;             /* the first failure's -errno, or 0 */
        struct anvil_err *err; /* filled at the first failure */
        char rel[PATH_MAX];    /* the directory being emptied, relative to the caller's dirfd */
        size_t rel_len;
};

static void rm_fail(struct rm_walk *w, int e, const char *name, const char *what)
{
        if (w->first)
                return;
        w->first = -e;
        (void)anvil_err_sys(w->err, e, "Failed to %s %s/%s", what, w->rel, name);
}

static void rm_children(int fd, unsigned depth, struct rm_walk *w);

/* One entry of the directory fd: a directory on the top's file system is emptied through its
 * own fd and removed; anything else (a symlink included) is unlinked. */
static void rm_entry(int fd, const char *name, unsigned depth, struct rm_walk *w)
{
        struct stat st;
        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        rm_fail(w, errno, name, "stat");
                return;
        }
        if (!S_ISDIR(st.st_mode)) {
                if (unlinkat(fd, name, 0) < 0 && errno != ENOENT)
                        rm_fail(w, errno, name, "remove");
                return;
        }
        if (st.st_dev != w->dev) {
                rm_fail(w, EXDEV, name, "enter (another file system)");
                return;
        }
        if (depth >= w->max_depth) {
                /* Deeper than the fds we hold open: the directory is moved (renameat, fd to
                 * fd, on the same file system) to the top under a name of ours, and removed from
                 * there by the next pass over the top. A tree of any depth goes, one fd per
                 * level at most max_depth deep. */
                for (unsigned tries = 0; tries < 64; tries++) {
                        char to[32];
                        snprintf(to, sizeof(to), ".anvil-rm-%lu", w->moved++);
                        if (renameat(fd, name, w->top_fd, to) == 0)
                                return;
                        if (errno != EEXIST && errno != ENOTEMPTY)
                                break;
                }
                rm_fail(w, errno, name, "move up (too deep)");
                return;
        }
        int cfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (cfd < 0) {
                /* Swapped for a symlink or a file since the stat: removed as what it is now. */
                if ((errno == ELOOP || errno == ENOTDIR) && unlinkat(fd, name, 0) == 0)
                        return;
                if (errno != ENOENT)
                        rm_fail(w, errno, name, "open");
                return;
        }
        struct stat cst;
        if (fstat(cfd, &cst) < 0 || cst.st_dev != w->dev) {
                (void)close(cfd);
                rm_fail(w, EXDEV, name, "enter (another file system)");
                return;
        }
        size_t was = w->rel_len;
        int n = snprintf(w->rel + was, sizeof(w->rel) - was, "/%s", name);
        w->rel_len = n > 0 && (size_t)n < sizeof(w->rel) - was ? was + (size_t)n : was;
        rm_children(cfd, depth + 1, w);
        (void)close(cfd);
        w->rel_len = was;
        w->rel[was] = 0;
        if (unlinkat(fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                rm_fail(w, errno, name, "remove");
}

static void rm_children(int fd, unsigned depth, struct rm_walk *w)
{
        /* Entries removed while a directory is read may make readdir skip others: passes
         * until one finds nothing left (bounded; a failure ends it). */
        for (unsigned pass = 0; pass < 4; pass++) {
                DIR *d = fd_opendir_at(fd);
                if (!d) {
                        rm_fail(w, errno, ".", "read");
                        return;
                }
                unsigned seen = 0;
                struct dirent *de;
                while ((de = readdir(d))) {
                        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                                continue;
                        seen++;
                        rm_entry(fd, de->d_name, depth, w);
                }
                (void)closedir(d);
                if (seen == 0 || w->first)
                        return;
        }
}

int fd_rm_tree_at(int dirfd, const char *name, unsigned max_depth, struct anvil_err *err)
{
        /* One name: fstatat and unlinkat would follow a symlink among earlier components. */
        if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return anvil_err_set(err, EINVAL, "Refusing to remove \"%s\": not one entry's name", name);
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : anvil_err_sys(err, errno, "Failed to stat %s", name);
        if (!S_ISDIR(st.st_mode)) {
                if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                        return anvil_err_sys(err, errno, "Failed to remove %s", name);
                return 0;
        }
        _cleanup_close_ int fd = rm_open_top(dirfd, name);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                return anvil_err_sys(err, errno, "Failed to open %s", name);
        }
        struct stat top;
        if (fstat(fd, &top) < 0)
                return anvil_err_sys(err, errno, "Failed to stat %s", name);
        _cleanup_free_ struct rm_walk *w = calloc(1, sizeof(*w));
        if (!w)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        *w = (struct rm_walk){ .dev = top.st_dev, .top_fd = fd, .max_depth = max_depth ? max_depth : 1, .err = err };
        snprintf(w->rel, sizeof(w->rel), "%s", name);
        w->rel_len = strlen(w->rel);
        /* Again while a pass moved a deep directory up to the top: each move takes max_depth
         * levels off a chain, so this ends once every chain is gone. */
        for (unsigned long moved = ~0UL; !w->first && w->moved != moved;) {
                moved = w->moved;
                rm_children(fd, 0, w);
        }
        if (w->first)
                return w->first;
        if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return anvil_err_sys(err, errno, "Failed to remove %s", name);
        return 0;
}
