/* policy/seccomp_rules.c: the table (each number is the syscall its name says, by libseccomp's own
 * table), which calls each rule catches and which it lets by, and how a refused call is
 * shown, with the caller's memory simulated (readable, partly readable, unreadable). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <asm/unistd.h>
#include <linux/audit.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <cmocka.h>

#include "policy/seccomp_rules.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* The caller's memory: len readable bytes at base; reads past them stop there. */
struct mem {
        uint64_t base;
        const void *bytes;
        size_t len;
};

static long rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
        const struct mem *m = ctx;
        if (addr < m->base || addr >= m->base + m->len)
                return -1;
        size_t off = (size_t)(addr - m->base), n = m->len - off < len ? m->len - off : len;
        memcpy(buf, (const char *)m->bytes + off, n);
        return (long)n;
}

#define BASE 0x7f0000001000ull

static void test_table_names(void **state)
{
        (void)state;
        for (size_t i = 0; i < pol_sc_n_rules; i++) {
                const struct pol_sc_rule *r = &pol_sc_rules[i];
                char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, r->nr);
                if (!name || strcmp(name, r->name) != 0)
                        fail_msg("rule %zu: number %d is %s, not %s", i, r->nr, name ? name : "unknown", r->name);
                free(name);
                assert_true(r->why >= POL_WHY_SECCOMP_NETWORK && r->why <= POL_WHY_SECCOMP_ABI);
        }
}

/* Which calls are caught, both ways. */
static const struct {
        const char *what;
        int nr;
        uint64_t args[6];
        bool caught;
} catch_cases[] = {
        { "socket(AF_INET)", __NR_socket, { AF_INET, SOCK_STREAM }, true },
        { "socket(AF_INET6)", __NR_socket, { AF_INET6, SOCK_DGRAM }, true },
        { "socket(AF_NETLINK)", __NR_socket, { AF_NETLINK, SOCK_RAW }, true },
        { "socket(AF_PACKET)", __NR_socket, { AF_PACKET, SOCK_RAW }, true },
        { "socket(AF_UNIX) is allowed", __NR_socket, { AF_UNIX, SOCK_STREAM }, false },
        { "socket with AF_UNIX in the low 32 bits only", __NR_socket, { 0x100000000ull | AF_UNIX, SOCK_STREAM }, true },
        { "socketpair(AF_UNIX) is allowed", __NR_socketpair, { AF_UNIX, SOCK_STREAM }, false },
        { "socketpair(AF_INET)", __NR_socketpair, { AF_INET, SOCK_STREAM }, true },
        { "connect", __NR_connect, { 3, BASE, 16 }, true },
        { "bind", __NR_bind, { 3, BASE, 16 }, true },
        { "listen", __NR_listen, { 3, 5 }, true },
        { "accept4", __NR_accept4, { 3 }, true },
        { "fork", __NR_fork, { 0 }, true },
        { "vfork", __NR_vfork, { 0 }, true },
        { "clone for a process (fork)", __NR_clone, { 0x01200011 /* CHILD_SETTID|CHILD_CLEARTID|SIGCHLD */ }, true },
        { "clone for posix_spawn", __NR_clone, { CLONE_VM | CLONE_VFORK | 17 }, true },
        { "clone for a thread is allowed",
          __NR_clone,
          { CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
            CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID },
          false },
        { "clone3 (ENOSYS in the filter)", __NR_clone3, { 0 }, true },
        { "execve", __NR_execve, { BASE }, true },
        { "execveat", __NR_execveat, { 3, BASE }, true },
        { "ptrace", __NR_ptrace, { 16, 1 }, true },
        { "process_vm_readv", __NR_process_vm_readv, { 1 }, true },
        { "mount", __NR_mount, { 0 }, true },
        { "umount2", __NR_umount2, { BASE }, true },
        { "pivot_root", __NR_pivot_root, { 0 }, true },
        { "chroot", __NR_chroot, { 0 }, true },
        { "unshare", __NR_unshare, { CLONE_NEWUSER }, true },
        { "setns", __NR_setns, { 3, 0 }, true },
        { "io_uring_setup", __NR_io_uring_setup, { 8 }, true },
        { "bpf", __NR_bpf, { 5 }, true },
        { "perf_event_open", __NR_perf_event_open, { 0 }, true },
        { "userfaultfd", __NR_userfaultfd, { 0 }, true },
        { "keyctl", __NR_keyctl, { 1 }, true },
        { "add_key", __NR_add_key, { 0 }, true },
        { "request_key", __NR_request_key, { 0 }, true },
        { "open_by_handle_at", __NR_open_by_handle_at, { 0 }, true },
        { "name_to_handle_at", __NR_name_to_handle_at, { 0 }, true },
        { "kexec_load", __NR_kexec_load, { 0 }, true },
        { "finit_module", __NR_finit_module, { 0 }, true },
        { "reboot", __NR_reboot, { 0 }, true },
        { "swapon", __NR_swapon, { 0 }, true },
        { "acct", __NR_acct, { 0 }, true },
        { "landlock_restrict_self", __NR_landlock_restrict_self, { 3 }, true },
        { "personality(READ_IMPLIES_EXEC)", __NR_personality, { 0x0400000 }, true },
        { "personality(PER_LINUX) changes it too", __NR_personality, { 0 }, true },
        { "personality(0xffffffff) only asks", __NR_personality, { 0xffffffffull }, false },
        { "personality with high bits", __NR_personality, { 0x1ffffffffull }, true },
        { "ioctl TIOCSTI", __NR_ioctl, { 0, 0x5412 }, true },
        { "ioctl TIOCSTI with high bits", __NR_ioctl, { 0, 0xabcd00005412ull }, true },
        { "ioctl TIOCLINUX", __NR_ioctl, { 0, 0x541C }, true },
        { "ioctl TCGETS is allowed", __NR_ioctl, { 0, 0x5401 }, false },
        { "ioctl FIONREAD is allowed", __NR_ioctl, { 3, 0x541B }, false },
        { "read is allowed", __NR_read, { 0 }, false },
        { "openat is allowed", __NR_openat, { 0 }, false },
        { "mmap is allowed", __NR_mmap, { 0 }, false },
        { "kill is allowed (the pid namespace bounds it)", __NR_kill, { 1, 9 }, false },
        { "sendmsg is allowed", __NR_sendmsg, { 3 }, false },
};

static void test_catches(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(catch_cases); i++) {
                const struct pol_sc_rule *r = pol_sc_rule_for(catch_cases[i].nr, catch_cases[i].args);
                if ((r != NULL) != catch_cases[i].caught)
                        fail_msg("%s: %s", catch_cases[i].what, r ? "caught" : "let by");
        }
        uint64_t none[6] = { 0 };
        assert_int_equal(pol_sc_rule_for(__NR_clone3, none)->cond, POL_SC_ENOSYS);
}

static const struct pol_sc_rule *rule(int nr, const uint64_t args[6])
{
        const struct pol_sc_rule *r = pol_sc_rule_for(nr, args);
        assert_non_null(r);
        return r;
}

static void expect_describe(int nr, const uint64_t args[6], const struct mem *m, const char *want)
{
        char buf[512];
        pol_sc_describe(rule(nr, args), args, m ? rd : NULL, (void *)m, buf, sizeof(buf));
        assert_string_equal(buf, want);
}

static void test_describe_sockets(void **state)
{
        (void)state;
        uint64_t a[6] = { AF_INET, SOCK_STREAM | SOCK_CLOEXEC };
        expect_describe(__NR_socket, a, NULL, "socket(AF_INET, SOCK_STREAM)");
        uint64_t b[6] = { AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK };
        expect_describe(__NR_socket, b, NULL, "socket(AF_INET6, SOCK_DGRAM)");
        uint64_t c[6] = { AF_NETLINK, SOCK_RAW };
        expect_describe(__NR_socket, c, NULL, "socket(AF_NETLINK, SOCK_RAW)");
        uint64_t d[6] = { 99, 12 };
        expect_describe(__NR_socket, d, NULL, "socket(family 99, type 12)");

        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(8080) };
        inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
        struct mem m = { BASE, &in, sizeof(in) };
        uint64_t e[6] = { 3, BASE, sizeof(in) };
        expect_describe(__NR_connect, e, &m, "connect(127.0.0.1:8080)");
        expect_describe(__NR_bind, e, &m, "bind(127.0.0.1:8080)");
        uint64_t short_len[6] = { 3, BASE, 4 };
        expect_describe(__NR_connect, short_len, &m, "connect(AF_INET)");
        expect_describe(__NR_connect, e, NULL, "connect(?)");
        uint64_t null_addr[6] = { 3, 0, 16 };
        expect_describe(__NR_connect, null_addr, &m, "connect(?)");

        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(443) };
        inet_pton(AF_INET6, "::1", &in6.sin6_addr);
        struct mem m6 = { BASE, &in6, sizeof(in6) };
        uint64_t f[6] = { 3, BASE, sizeof(in6) };
        expect_describe(__NR_connect, f, &m6, "connect([::1]:443)");

        struct sockaddr_un un = { .sun_family = AF_UNIX };
        strcpy(un.sun_path, "/run/x'y");
        struct mem mu = { BASE, &un, sizeof(un) };
        uint64_t g[6] = { 3, BASE, sizeof(un) };
        expect_describe(__NR_bind, g, &mu, "bind('/run/x\\'y')");
        struct sockaddr_un ab = { .sun_family = AF_UNIX };
        memcpy(ab.sun_path, "\0abs\x01", 5);
        struct mem ma = { BASE, &ab, offsetof(struct sockaddr_un, sun_path) + 5 };
        uint64_t h[6] = { 3, BASE, offsetof(struct sockaddr_un, sun_path) + 5 };
        expect_describe(__NR_bind, h, &ma, "bind(@'abs\\x01')");

        uint64_t l[6] = { 7, 128 };
        expect_describe(__NR_listen, l, NULL, "listen(fd 7)");
}

static void test_let_through(void **state)
{
        (void)state;
        struct sockaddr_un un = { .sun_family = AF_UNIX, .sun_path = "/var/run/nscd/socket" };
        struct mem mu = { BASE, &un, sizeof(un) };
        uint64_t a[6] = { 3, BASE, sizeof(un) };
        assert_true(pol_sc_let_through(rule(__NR_connect, a), a, rd, &mu));
        /* Only connect: bind of the same address is refused. */
        assert_false(pol_sc_let_through(rule(__NR_bind, a), a, rd, &mu));
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(80) };
        struct mem mi = { BASE, &in, sizeof(in) };
        uint64_t b[6] = { 3, BASE, sizeof(in) };
        assert_false(pol_sc_let_through(rule(__NR_connect, b), b, rd, &mi));
        /* Unreadable, too short or no reader: refused. */
        assert_false(pol_sc_let_through(rule(__NR_connect, a), a, NULL, NULL));
        uint64_t c[6] = { 3, BASE + 0x10000, sizeof(un) };
        assert_false(pol_sc_let_through(rule(__NR_connect, c), c, rd, &mu));
        uint64_t d[6] = { 3, BASE, 1 };
        assert_false(pol_sc_let_through(rule(__NR_connect, d), d, rd, &mu));
        uint64_t s[6] = { AF_INET, SOCK_STREAM };
        assert_false(pol_sc_let_through(rule(__NR_socket, s), s, rd, &mu));
}

/* A run granted network: connect to 127.0.0.1:3128 (the relay) alone, besides AF_UNIX. */
static void test_let_through_inet(void **state)
{
        (void)state;
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(3128) };
        in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        struct mem mi = { BASE, &in, sizeof(in) };
        uint64_t a[6] = { 3, BASE, sizeof(in) };
        assert_true(pol_sc_let_through_inet(rule(__NR_connect, a), a, rd, &mi, 3128));
        /* bind of the same address, another port, another address, AF_UNIX, short: refused */
        assert_false(pol_sc_let_through_inet(rule(__NR_bind, a), a, rd, &mi, 3128));
        assert_false(pol_sc_let_through_inet(rule(__NR_connect, a), a, rd, &mi, 80));
        in.sin_addr.s_addr = htonl(0x7f000002);
        assert_false(pol_sc_let_through_inet(rule(__NR_connect, a), a, rd, &mi, 3128));
        in.sin_addr.s_addr = htonl(0x0b00000a);
        assert_false(pol_sc_let_through_inet(rule(__NR_connect, a), a, rd, &mi, 3128));
        in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        uint64_t d[6] = { 3, BASE, sizeof(in) - 1 };
        assert_false(pol_sc_let_through_inet(rule(__NR_connect, d), d, rd, &mi, 3128));
        assert_false(pol_sc_let_through_inet(rule(__NR_connect, a), a, NULL, NULL, 3128));
        struct sockaddr_un un = { .sun_family = AF_UNIX, .sun_path = "/run/anvil/egress.sock" };
        struct mem mu = { BASE, &un, sizeof(un) };
        uint64_t b[6] = { 3, BASE, sizeof(un) };
        assert_false(pol_sc_let_through_inet(rule(__NR_connect, b), b, rd, &mu, 3128));
        /* and the plain rule never lets the relay's address through */
        assert_false(pol_sc_let_through(rule(__NR_connect, a), a, rd, &mi));
}

static void test_describe_strings(void **state)
{
        (void)state;
        static const char sh[] = "/bin/sh";
        struct mem m = { BASE, sh, sizeof(sh) };
        uint64_t a[6] = { BASE };
        expect_describe(__NR_execve, a, &m, "execve('/bin/sh')");
        uint64_t b[6] = { (uint64_t)-100, BASE };
        expect_describe(__NR_execveat, b, &m, "execveat('/bin/sh')");
        /* unreadable, NULL */
        expect_describe(__NR_execve, a, NULL, "execve(?)");
        uint64_t z[6] = { 0 };
        expect_describe(__NR_execve, z, &m, "execve(NULL)");
        /* quotes, backslashes and bytes that are not printable ASCII are escaped */
        static const char odd[] = "a'b\\c\n\xc3\xa9";
        struct mem mo = { BASE, odd, sizeof(odd) };
        expect_describe(__NR_execve, a, &mo, "execve('a\\'b\\\\c\\x0a\\xc3\\xa9')");
        /* longer than shown: cut */
        char longs[400];
        memset(longs, 'x', sizeof(longs) - 1);
        longs[sizeof(longs) - 1] = 0;
        struct mem ml = { BASE, longs, sizeof(longs) };
        char want[256];
        snprintf(want, sizeof(want), "execve('%.200s'...)", longs);
        expect_describe(__NR_execve, a, &ml, want);
        /* ends where the memory does, without its NUL: what was read, marked cut */
        struct mem mp = { BASE, sh, 4 };
        expect_describe(__NR_execve, a, &mp, "execve('/bin'...)");
        static const char src[] = "none\0/mnt\0tmpfs";
        struct mem mm = { BASE, src, sizeof(src) };
        uint64_t c[6] = { BASE, BASE + 5, BASE + 10 };
        expect_describe(__NR_mount, c, &mm, "mount('none', '/mnt', 'tmpfs')");
        uint64_t d[6] = { BASE + 5 };
        expect_describe(__NR_umount2, d, &mm, "umount2('/mnt')");
        uint64_t e[6] = { BASE + 5, BASE };
        expect_describe(__NR_pivot_root, e, &mm, "pivot_root('/mnt', 'none')");
        uint64_t f[6] = { 3, BASE + 5, 3, BASE + 10 };
        expect_describe(__NR_move_mount, f, &mm, "move_mount('/mnt', 'tmpfs')");
}

static void test_describe_flags(void **state)
{
        (void)state;
        uint64_t a[6] = { 0x01200011 };
        expect_describe(__NR_clone, a, NULL, "clone(CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD)");
        uint64_t b[6] = { CLONE_VM | CLONE_VFORK | 17 };
        expect_describe(__NR_clone, b, NULL, "clone(CLONE_VM|CLONE_VFORK|SIGCHLD)");
        uint64_t c[6] = { 0 };
        expect_describe(__NR_clone, c, NULL, "clone(0)");
        uint64_t d[6] = { CLONE_NEWUSER | CLONE_NEWNS };
        expect_describe(__NR_unshare, d, NULL, "unshare(CLONE_NEWNS|CLONE_NEWUSER)");
        uint64_t e[6] = { 5, CLONE_NEWNET };
        expect_describe(__NR_setns, e, NULL, "setns(fd 5, CLONE_NEWNET)");
        uint64_t f[6] = { 16, 1 };
        expect_describe(__NR_ptrace, f, NULL, "ptrace(PTRACE_ATTACH, pid 1)");
        uint64_t g[6] = { 12345, 1 };
        expect_describe(__NR_ptrace, g, NULL, "ptrace(request 12345, pid 1)");
        uint64_t h[6] = { 1 };
        expect_describe(__NR_process_vm_readv, h, NULL, "process_vm_readv(pid 1)");
        uint64_t i[6] = { 0x0400000 };
        expect_describe(__NR_personality, i, NULL, "personality(0x400000)");
        uint64_t j[6] = { 0, 0x5412 };
        expect_describe(__NR_ioctl, j, NULL, "ioctl(fd 0, TIOCSTI)");
        uint64_t k[6] = { 5 };
        expect_describe(__NR_bpf, k, NULL, "bpf(5)");
        expect_describe(__NR_fork, k, NULL, "fork()");
        /* a small buffer: cut, still terminated */
        char small[8];
        pol_sc_describe(rule(__NR_fork, k), k, NULL, NULL, small, sizeof(small));
        assert_string_equal(small, "fork()");
        char tiny[4];
        pol_sc_describe(rule(__NR_bpf, k), k, NULL, NULL, tiny, sizeof(tiny));
        assert_string_equal(tiny, "bpf");
}

static void test_foreign(void **state)
{
        (void)state;
        char buf[64];
        assert_true(pol_sc_foreign(AUDIT_ARCH_I386, 20));
        pol_sc_describe_foreign(AUDIT_ARCH_I386, 20, buf, sizeof(buf));
        assert_string_equal(buf, "syscall 20 of the i386 ABI");
        assert_true(pol_sc_foreign(AUDIT_ARCH_X86_64, 0x40000000 | 39));
        pol_sc_describe_foreign(AUDIT_ARCH_X86_64, 0x40000000 | 39, buf, sizeof(buf));
        assert_string_equal(buf, "syscall 39 of the x32 ABI");
        assert_false(pol_sc_foreign(AUDIT_ARCH_X86_64, 39));
        assert_true(pol_sc_foreign(AUDIT_ARCH_AARCH64, 1));
        pol_sc_describe_foreign(AUDIT_ARCH_AARCH64, 1, buf, sizeof(buf));
        assert_string_equal(buf, "syscall 1 of ABI 0xc00000b7");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table_names),      cmocka_unit_test(test_catches),
                cmocka_unit_test(test_describe_sockets), cmocka_unit_test(test_let_through),
                cmocka_unit_test(test_let_through_inet), cmocka_unit_test(test_describe_strings),
                cmocka_unit_test(test_describe_flags),   cmocka_unit_test(test_foreign),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
