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
/* The same from an open fd (a pipe too: `anvilctl run -` reads stdin), up to its end of file;
 * name is what messages call it. The fd stays the caller's. */
int fd_read_all(int fd, const char *name, size_t max, uint8_t **out, size_t *out_len, struct anvil_err *err);

/* A small file (/proc, /sys, cgroupfs) into buf, NUL-terminated: reads until end of file,
 * retrying on EINTR and short reads (a /proc file may come in pieces). Returns its length, or
 * -errno: a file of more than size - 1 bytes is -EFBIG, unless flags has FD_READ_PREFIX, when
 * its first size - 1 bytes are the answer (what a reader of the first lines or the first number
 * wants). buf is "" after any failure. err may be NULL. */
#define FD_READ_PREFIX 1u
ssize_t fd_read_small(const char *path, char *buf, size_t size, unsigned flags, struct anvil_err *err);

/* Writes a file of mode `mode` with O_CREAT|O_EXCL|O_NOFOLLOW relative to dirfd. */
int fd_write_file_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
                     struct anvil_err *err);

/* The directory dirfd names, opened anew for readdir (its own fd and offset, dirfd left as it
 * is); NULL with errno set. */
DIR *fd_opendir_at(int dirfd);

/* Passing fds on a unix socket (SCM_RIGHTS), one message at a time. At most FD_PASS_MAX fds. */
#define FD_PASS_MAX 32 /* PROTO_INPUTS_MAX: a run request's inputs, one fd each */

/* Sends len bytes of data (at least one: a message of none carries no fd on a stream socket)
 * with the n fds (none when n is 0), whole, retrying on EINTR; never SIGPIPE. 0, or -errno:
 * -EMSGSIZE if the socket took less than all of data. */
int fd_send_fds(int sock, const void *data, size_t len, const int *fds, size_t n, struct anvil_err *err);

/* Receives one message: at most len bytes into data, and the fds it carries (close-on-exec,
 * MSG_CMSG_CLOEXEC always) into fds, at most max of them, their number in *n_fds. flags are
 * recvmsg's (MSG_DONTWAIT); EINTR is retried. Returns the bytes received (0: the peer closed,
 * or an empty message), or -errno: -EBADMSG when the data did not fit in len, or the control
 * message was cut (MSG_CTRUNC), held anything but one SCM_RIGHTS, or more than max fds; every
 * fd received is closed then, and *n_fds is 0 after any failure. */
ssize_t fd_recv_fds(int sock, void *data, size_t len, int *fds, size_t max, size_t *n_fds, int flags,
                    struct anvil_err *err);

/* The same, for exactly n fds: a message with fewer or more is -EBADMSG (the fds closed), and
 * the end of the stream is -EPIPE. Returns the bytes received, or -errno. */
ssize_t fd_recv_fds_exact(int sock, void *data, size_t len, int *fds, size_t n, int flags, struct anvil_err *err);

/* Removes dirfd/name (one name, no '/') and everything below it, by descriptor, never by path: the top is
 * opened beneath dirfd with no symlink, magic link or mount crossed (openat2; O_NOFOLLOW on
 * a kernel without it), each directory below with openat(O_NOFOLLOW|O_DIRECTORY) relative to
 * its parent's fd, and each entry removed with unlinkat. A symlink is removed, never
 * followed (one put in place of a directory during the walk makes the open fail, and is then
 * removed as the link it is); nothing on another file system than the top's is entered or
 * removed; at most max_depth levels are descended at once (a
 * directory deeper is moved up to the top, as .anvil-rm-N, and removed from there: a tree of
 * any depth goes with at most max_depth fds open). 0 once nothing is left at name (ENOENT
 * included), else the first failure, with the relative path it happened at. */
int fd_rm_tree_at(int dirfd, const char *name, unsigned max_depth, struct anvil_err *err);

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t now_ms(void);
