/* fd helpers. Every fd Anvil opens is O_CLOEXEC; these retry on EINTR and never log. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <sys/types.h>

#include "err.h"

/* Writes all of buf, retrying on EINTR and short writes. */
int fd_write_all(int fd, const void *buf, size_t len, struct anvil_err *err);

/* Reads exactly len bytes. Returns 0, -EPIPE at a clean end of file before len, or -errno. */
int fd_read_exact(int fd, void *buf, size_t len, struct anvil_err *err);

/* Reads a whole file of at most max bytes into a malloc'd, NUL-terminated buffer.
 * A file larger than max is an error (-EFBIG), never silently cut. */
int fd_read_file(const char *path, size_t max, uint8_t **out, size_t *out_len, struct anvil_err *err);

/* Writes a file of mode `mode` with O_CREAT|O_EXCL|O_NOFOLLOW relative to dirfd. */
int fd_write_file_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
                     struct anvil_err *err);

/* The directory dirfd names, opened anew for readdir (its own fd and offset, dirfd left as it
 * is); NULL with errno set. */
DIR *fd_opendir_at(int dirfd);

/* Removes dirfd/name (one name, no '/') and everything below it, by descriptor, never by path: the top is
 * opened beneath dirfd with no symlink, magic link or mount crossed (openat2; O_NOFOLLOW on
 * a kernel without it), each directory below with openat(O_NOFOLLOW|O_DIRECTORY) relative to
 * its parent's fd, and each entry removed with unlinkat. A symlink is removed, never
 * followed (one put in place of a directory during the walk makes the open fail, and is then
 * removed as the link it is); nothing on another file system than the top's is entered or
 * removed; at most max_depth levels are descended. 0 once nothing is left at name (ENOENT
 * included), else the first failure, with the relative path it happened at. */
int fd_rm_tree_at(int dirfd, const char *name, unsigned max_depth, struct anvil_err *err);

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t now_ms(void);
