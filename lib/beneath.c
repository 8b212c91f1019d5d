/* Files made below a directory fd (beneath.h). Unprivileged programs only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/cleanup.h"

int fd_create_beneath(int root, const char *path, mode_t dir_mode, mode_t file_mode)
{
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        _cleanup_close_ int cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
        char *save = NULL, *c = strtok_r(copy, "/", &save);
        while (c && cur >= 0) {
                char *next = strtok_r(NULL, "/", &save);
                if (!next) {
                        int fd = openat(cur, c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file_mode);
                        return fd < 0 ? -errno : fd;
                }
                if (mkdirat(cur, c, dir_mode) < 0 && errno != EEXIST)
                        return -errno;
                int nfd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int e = errno;
                (void)close(cur);
                cur = nfd;
                if (cur < 0)
                        return e == ENOTDIR ? -ELOOP : -e; /* a link, or a file, where a directory was */
                c = next;
        }
        return cur < 0 ? -errno : -EINVAL;
}
