#include "fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
        size_t cap = 4096, len = 0;
        _cleanup_free_ uint8_t *buf = malloc(cap + 1);
        if (!buf)
                return anvil_err_set(err, ENOMEM, "Out of memory reading %s", path);
        for (;;) {
                if (len == cap) {
                        if (cap > max)
                                return anvil_err_set(err, EFBIG, "%s is larger than %zu bytes", path, max);
                        cap *= 2;
                        uint8_t *nb = realloc(buf, cap + 1);
                        if (!nb)
                                return anvil_err_set(err, ENOMEM, "Out of memory reading %s", path);
                        buf = nb;
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return anvil_err_sys(err, errno, "Failed to read %s", path);
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max)
                        return anvil_err_set(err, EFBIG, "%s is larger than %zu bytes", path, max);
        }
        buf[len] = 0;
        *out = TAKE_PTR(buf);
        *out_len = len;
        return 0;
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
