/* Unit tests for lib/fd.c's small-file reader and fd passing, against real files, pipes and
 * unix sockets: the edges each caller relies on (an empty file, one that fits exactly, one a
 * byte too large, one that arrives in pieces; no fd, several, too many, a cut control message,
 * a control message of another kind, a closed fd), that no fd received in error is left
 * open, and lib/cleanup.h's close_reset. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/beneath.h"
#include "lib/cleanup.h"
#include "lib/fd.h"

/* ---- fd_read_small ---- */

struct tmp {
        char dir[64];
        char path[96];
};

static int setup(void **state)
{
        struct tmp *t = calloc(1, sizeof(*t));
        snprintf(t->dir, sizeof(t->dir), "/tmp/anvil-test-fd-XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        snprintf(t->path, sizeof(t->path), "%s/f", t->dir);
        *state = t;
        return 0;
}

static int teardown(void **state)
{
        struct tmp *t = *state;
        (void)unlink(t->path);
        (void)rmdir(t->dir);
        free(t);
        return 0;
}

static void put(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

static void test_read_small_sizes(void **state)
{
        struct tmp *t = *state;
        char buf[8];
        struct anvil_err err = ANVIL_ERR_INIT;

        put(t->path, "");
        assert_int_equal(fd_read_small(t->path, buf, sizeof(buf), 0, &err), 0);
        assert_string_equal(buf, "");

        put(t->path, "1234567"); /* exactly size - 1: fits, with its NUL */
        assert_int_equal(fd_read_small(t->path, buf, sizeof(buf), 0, &err), 7);
        assert_string_equal(buf, "1234567");

        put(t->path, "12345678"); /* one byte more: an error, never silently cut */
        assert_int_equal(fd_read_small(t->path, buf, sizeof(buf), 0, &err), -EFBIG);
        assert_string_equal(buf, "");
        char want[160];
        snprintf(want, sizeof(want), "%s is larger than 7 bytes", t->path);
        assert_string_equal(err.msg, want);

        /* ... unless the caller asks for the first bytes only. */
        assert_int_equal(fd_read_small(t->path, buf, sizeof(buf), FD_READ_PREFIX, NULL), 7);
        assert_string_equal(buf, "1234567");

        char one[1];
        assert_int_equal(fd_read_small(t->path, one, sizeof(one), FD_READ_PREFIX, NULL), 0);
        assert_string_equal(one, "");
}

static void test_read_small_missing(void **state)
{
        struct tmp *t = *state;
        char buf[16] = "stale";
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(fd_read_small(t->path, buf, sizeof(buf), 0, &err), -ENOENT);
        assert_string_equal(buf, "");
        char want[160];
        snprintf(want, sizeof(want), "Failed to open %s: No such file or directory", t->path);
        assert_string_equal(err.msg, want);
        assert_int_equal(fd_read_small(t->dir, buf, sizeof(buf), 0, &err), -EISDIR);
}

/* A file that comes in two reads (a pipe, through /proc/self/fd): the second half is written
 * only once the first has been read, so one read() alone would see half of it. */
static void test_read_small_pieces(void **state)
{
        (void)state;
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                (void)close(p[0]);
                if (write(p[1], "abc", 3) != 3)
                        _exit(1);
                int left;
                do
                        usleep(1000);
                while (ioctl(p[1], FIONREAD, &left) == 0 && left > 0);
                if (write(p[1], "def\n", 4) != 4)
                        _exit(1);
                _exit(0);
        }
        (void)close(p[1]);
        char path[64], buf[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
        assert_int_equal(fd_read_small(path, buf, sizeof(buf), 0, NULL), 7);
        assert_string_equal(buf, "abcdef\n");
        (void)close(p[0]);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A real /proc file, as every caller reads one. */
static void test_read_small_proc(void **state)
{
        (void)state;
        char buf[8192];
        assert_true(fd_read_small("/proc/self/status", buf, sizeof(buf), 0, NULL) > 100);
        assert_non_null(strstr(buf, "\nPid:\t"));
        assert_int_equal(fd_read_small("/proc/self/status", buf, 64, 0, NULL), -EFBIG);
}

/* ---- fd passing ---- */

static int open_fds(void)
{
        int n = 0;
        DIR *d = opendir("/proc/self/fd");
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d));)
                n += e->d_name[0] != '.';
        closedir(d);
        return n - 1; /* the directory's own */
}

static void pair(int sv[2])
{
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void same_file(int a, int b)
{
        struct stat x, y;
        assert_int_equal(fstat(a, &x), 0);
        assert_int_equal(fstat(b, &y), 0);
        assert_true(x.st_dev == y.st_dev && x.st_ino == y.st_ino);
}

static void test_pass_none_and_some(void **state)
{
        (void)state;
        int sv[2], p[2];
        pair(sv);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        struct anvil_err err = ANVIL_ERR_INIT;

        /* No fd: the data alone, and none received. */
        assert_int_equal(fd_send_fds(sv[0], "hello", 5, NULL, 0, &err), 0);
        char buf[16];
        int got[4] = { -1, -1, -1, -1 };
        size_t n = 99;
        assert_int_equal(fd_recv_fds(sv[1], buf, sizeof(buf), got, 4, &n, 0, &err), 5);
        assert_int_equal(n, 0);
        assert_memory_equal(buf, "hello", 5);

        /* Three: new fds, close-on-exec, the same files. */
        int three[3] = { p[0], p[1], p[0] };
        assert_int_equal(fd_send_fds(sv[0], "x", 1, three, 3, &err), 0);
        assert_int_equal(fd_recv_fds(sv[1], buf, sizeof(buf), got, 4, &n, 0, &err), 1);
        assert_int_equal(n, 3);
        for (int i = 0; i < 3; i++) {
                assert_true(got[i] != p[0] && got[i] != p[1]);
                assert_true(fcntl(got[i], F_GETFD) & FD_CLOEXEC);
                same_file(got[i], three[i]);
                (void)close(got[i]);
        }

        /* Exactly n, as wait_go and pid 1 want them. */
        assert_int_equal(fd_send_fds(sv[0], "y", 1, p, 2, &err), 0);
        assert_int_equal(fd_recv_fds_exact(sv[1], buf, sizeof(buf), got, 2, 0, &err), 1);
        same_file(got[0], p[0]);
        same_file(got[1], p[1]);
        (void)close(got[0]);
        (void)close(got[1]);

        /* Nothing waiting, without blocking. */
        assert_int_equal(fd_recv_fds(sv[1], buf, sizeof(buf), got, 4, &n, MSG_DONTWAIT, &err), -EAGAIN);
        /* The peer gone: 0 for the one, -EPIPE for the other. */
        (void)close(sv[0]);
        assert_int_equal(fd_recv_fds(sv[1], buf, sizeof(buf), got, 4, &n, 0, &err), 0);
        assert_int_equal(n, 0);
        assert_int_equal(fd_recv_fds_exact(sv[1], buf, sizeof(buf), got, 1, 0, &err), -EPIPE);
        (void)close(sv[1]);
        (void)close(p[0]);
        (void)close(p[1]);
}

/* Each malformed message is -EBADMSG, and leaves no fd of it open here. */
static void test_pass_refused(void **state)
{
        (void)state;
        int sv[2], p[2];
        pair(sv);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        struct anvil_err err = ANVIL_ERR_INIT;
        char buf[16];
        int got[4];
        size_t n;
        int before = open_fds();

        /* More fds than the receiver takes. */
        int three[3] = { p[0], p[1], p[0] };
        assert_int_equal(fd_send_fds(sv[0], "x", 1, three, 3, &err), 0);
        assert_int_equal(fd_recv_fds(sv[1], buf, sizeof(buf), got, 2, &n, 0, &err), -EBADMSG);
        assert_int_equal(n, 0);
        assert_int_equal(open_fds(), before);
        char want[128];
        snprintf(want, sizeof(want), "Failed to receive fds on fd %d: it carried more fds than expected", sv[1]);
        assert_string_equal(err.msg, want);

        /* Fewer, or none, where exactly two are wanted. */
        assert_int_equal(fd_send_fds(sv[0], "x", 1, p, 1, &err), 0);
        assert_int_equal(fd_recv_fds_exact(sv[1], buf, sizeof(buf), got, 2, 0, &err), -EBADMSG);
        assert_int_equal(open_fds(), before);
        assert_int_equal(fd_send_fds(sv[0], "x", 1, NULL, 0, &err), 0);
        assert_int_equal(fd_recv_fds_exact(sv[1], buf, sizeof(buf), got, 2, 0, &err), -EBADMSG);

        /* Data longer than the buffer (a seqpacket message is cut, not split). */
        assert_int_equal(fd_send_fds(sv[0], "0123456789", 10, p, 1, &err), 0);
        assert_int_equal(fd_recv_fds(sv[1], buf, 4, got, 2, &n, 0, &err), -EBADMSG);
        assert_int_equal(open_fds(), before);

        /* More fds than fit in the control buffer: the kernel cuts it (MSG_CTRUNC). */
        enum { MANY = FD_PASS_MAX + 4 };
        union {
                char b[CMSG_SPACE(sizeof(int) * MANY)];
                struct cmsghdr align;
        } u;
        memset(&u, 0, sizeof(u));
        int many[MANY];
        for (int i = 0; i < MANY; i++)
                many[i] = p[i % 2];
        struct iovec iov = { .iov_base = "m", .iov_len = 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(many));
        memcpy(CMSG_DATA(c), many, sizeof(many));
        assert_int_equal(sendmsg(sv[0], &mh, 0), 1);
        assert_int_equal(fd_recv_fds(sv[1], buf, sizeof(buf), got, 4, &n, 0, &err), -EBADMSG);
        snprintf(want, sizeof(want), "Failed to receive fds on fd %d: its control data was cut", sv[1]);
        assert_string_equal(err.msg, want);
        assert_int_equal(open_fds(), before);

        /* A control message of another kind (the sender's credentials, once asked for). */
        int on = 1;
        assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)), 0);
        assert_int_equal(fd_send_fds(sv[0], "x", 1, p, 1, &err), 0);
        assert_int_equal(fd_recv_fds(sv[1], buf, sizeof(buf), got, 4, &n, 0, &err), -EBADMSG);
        snprintf(want, sizeof(want), "Failed to receive fds on fd %d: it carried a control message other than SCM_RIGHTS",
                 sv[1]);
        assert_string_equal(err.msg, want);
        assert_int_equal(open_fds(), before);

        (void)close(sv[0]);
        (void)close(sv[1]);
        (void)close(p[0]);
        (void)close(p[1]);
}

static void test_send_refused(void **state)
{
        (void)state;
        int sv[2];
        pair(sv);
        struct anvil_err err = ANVIL_ERR_INIT;
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        int closed = p[1];
        (void)close(p[1]);
        assert_int_equal(fd_send_fds(sv[0], "x", 1, &closed, 1, &err), -EBADF);
        char want[96];
        snprintf(want, sizeof(want), "Failed to send 1 fds on fd %d: Bad file descriptor", sv[0]);
        assert_string_equal(err.msg, want);
        int many[FD_PASS_MAX + 1] = { 0 };
        assert_int_equal(fd_send_fds(sv[0], "x", 1, many, FD_PASS_MAX + 1, &err), -EINVAL);
        /* Nothing went: the receiver finds nothing waiting. */
        char buf[4];
        size_t n;
        assert_int_equal(fd_recv_fds(sv[1], buf, sizeof(buf), NULL, 0, &n, MSG_DONTWAIT, &err), -EAGAIN);
        /* The receiving end gone: EPIPE, and no SIGPIPE (which a stream socket raises). */
        (void)close(sv[1]);
        assert_int_equal(fd_send_fds(sv[0], "x", 1, &p[0], 1, &err), -EPIPE);
        (void)close(sv[0]);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        (void)close(sv[1]);
        assert_true(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
        assert_int_equal(fd_send_fds(sv[0], "x", 1, &p[0], 1, &err), -EPIPE);
        (void)close(sv[0]);
        (void)close(p[0]);
}

/* ---- close_reset (lib/cleanup.h) ---- */

static void test_close_reset(void **state)
{
        (void)state;
        int p[2];
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        int was = p[0];
        errno = ENOSPC;
        close_reset(&p[0]);
        assert_int_equal(errno, ENOSPC); /* a caller's errno survives */
        assert_int_equal(p[0], -EBADF);
        assert_int_equal(fcntl(was, F_GETFD), -1);
        assert_int_equal(errno, EBADF);
        close_reset(&p[0]); /* again: nothing to close, nothing else closed */
        assert_int_equal(p[0], -EBADF);
        assert_true(fcntl(p[1], F_GETFD) >= 0);

        int q[2];
        assert_int_equal(pipe2(q, O_CLOEXEC), 0);
        int many[4] = { q[0], -1, q[1], -EBADF };
        close_reset_many(many, 4);
        for (int i = 0; i < 4; i++)
                assert_int_equal(many[i], -EBADF);
        assert_int_equal(fcntl(q[0], F_GETFD), -1);
        assert_int_equal(fcntl(q[1], F_GETFD), -1);
        assert_true(fcntl(p[1], F_GETFD) >= 0);
        (void)close(p[1]);
}

/* ---- fd_create_beneath ---- */

static void test_create_beneath(void **state)
{
        (void)state;
        char dir[64];
        snprintf(dir, sizeof(dir), "/tmp/anvil-test-beneath-XXXXXX");
        assert_non_null(mkdtemp(dir));
        _cleanup_close_ int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(root >= 0);
        /* Made, with its directories, in their modes (the umask aside). */
        int fd = fd_create_beneath(root, "a/b/c.csv", 0750, 0640);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "x", 1), 1);
        (void)close(fd);
        struct stat st;
        assert_int_equal(fstatat(root, "a/b/c.csv", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode) && st.st_size == 1);
        assert_int_equal(fstatat(root, "a/b", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISDIR(st.st_mode));
        /* A second file in an existing directory: made (the control of the refusals below). */
        fd = fd_create_beneath(root, "a/b/d.csv", 0750, 0640);
        assert_true(fd >= 0);
        (void)close(fd);
        /* Never over an existing file, nor through a link, nor through a file. */
        assert_int_equal(fd_create_beneath(root, "a/b/c.csv", 0750, 0640), -EEXIST);
        assert_int_equal(symlinkat("/tmp", root, "l"), 0);
        assert_int_equal(fd_create_beneath(root, "l/x", 0750, 0640), -ELOOP);
        assert_int_equal(symlinkat("/tmp/anvil-beneath-target", root, "m"), 0);
        assert_int_equal(fd_create_beneath(root, "m", 0750, 0640), -EEXIST);
        assert_int_equal(access("/tmp/anvil-beneath-target", F_OK), -1);
        assert_int_equal(fd_create_beneath(root, "a/b/c.csv/x", 0750, 0640), -ELOOP);
        char rm[128];
        snprintf(rm, sizeof(rm), "rm -rf %s", dir);
        assert_int_equal(system(rm), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_read_small_sizes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_small_missing, setup, teardown),
                cmocka_unit_test(test_read_small_pieces),
                cmocka_unit_test(test_read_small_proc),
                cmocka_unit_test(test_pass_none_and_some),
                cmocka_unit_test(test_pass_refused),
                cmocka_unit_test(test_send_refused),
                cmocka_unit_test(test_close_reset),
                cmocka_unit_test(test_create_beneath),
        };
        return cmocka_run_group_tests_name("fd", tests, NULL, NULL);
}
