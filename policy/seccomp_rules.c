#define _GNU_SOURCE
#include "policy/seccomp_rules.h"

#include <arpa/inet.h>
#include <asm/unistd.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define X32_BIT 0x40000000

#define NET POL_WHY_SECCOMP_NETWORK
#define PROC POL_WHY_SECCOMP_PROCESS
#define DBG POL_WHY_SECCOMP_DEBUG
#define MNT POL_WHY_SECCOMP_MOUNT
#define NS POL_WHY_SECCOMP_NAMESPACE
#define KRN POL_WHY_SECCOMP_KERNEL
#define TTY POL_WHY_SECCOMP_TTY

#define R(sys, why, fmt)                                                  \
        {                                                                 \
                __NR_##sys, #sys, why, POL_SC_ALWAYS, 0, POL_SC_FMT_##fmt \
        }
#define RC(sys, why, cond, value, fmt)                                        \
        {                                                                     \
                __NR_##sys, #sys, why, POL_SC_##cond, value, POL_SC_FMT_##fmt \
        }

const struct pol_sc_rule pol_sc_rules[] = {
        /* network: no socket but AF_UNIX, no serving, no connecting out */
        RC(socket, NET, NOT_UNIX, 0, SOCKET),
        RC(socketpair, NET, NOT_UNIX, 0, SOCKET),
        R(connect, NET, SOCKADDR),
        R(bind, NET, SOCKADDR),
        R(listen, NET, FD0),
        R(accept, NET, FD0),
        R(accept4, NET, FD0),
        /* process creation: threads only */
        R(fork, PROC, NONE),
        R(vfork, PROC, NONE),
        RC(clone, PROC, NO_THREAD, 0, CLONE),
        RC(clone3, PROC, ENOSYS, 0, NONE),
        R(execve, PROC, STR0),
        R(execveat, PROC, STR1),
        /* other processes */
        R(ptrace, DBG, PTRACE),
        R(process_vm_readv, DBG, PID0),
        R(process_vm_writev, DBG, PID0),
        R(pidfd_getfd, DBG, NONE),
        R(kcmp, DBG, PID0),
        /* mounts */
        R(mount, MNT, MOUNT),
        R(umount2, MNT, STR0),
        R(pivot_root, MNT, STR0_STR1),
        R(chroot, MNT, STR0),
        R(fsopen, MNT, STR0),
        R(fsconfig, MNT, NONE),
        R(fsmount, MNT, NONE),
        R(fspick, MNT, STR1),
        R(move_mount, MNT, MOVE_MOUNT),
        R(open_tree, MNT, STR1),
        R(mount_setattr, MNT, STR1),
        /* namespaces */
        R(unshare, NS, UNSHARE),
        R(setns, NS, SETNS),
        /* kernel interfaces no tool needs and many exploits do */
        R(io_uring_setup, KRN, NONE),
        R(io_uring_enter, KRN, NONE),
        R(io_uring_register, KRN, NONE),
        R(bpf, KRN, INT0),
        R(perf_event_open, KRN, NONE),
        R(userfaultfd, KRN, NONE),
        R(keyctl, KRN, INT0),
        R(add_key, KRN, STR0),
        R(request_key, KRN, STR0),
        R(open_by_handle_at, KRN, NONE),
        R(name_to_handle_at, KRN, STR1),
        R(kexec_load, KRN, NONE),
        R(kexec_file_load, KRN, NONE),
        R(init_module, KRN, NONE),
        R(finit_module, KRN, NONE),
        R(delete_module, KRN, STR0),
        R(reboot, KRN, NONE),
        R(swapon, KRN, STR0),
        R(swapoff, KRN, STR0),
        R(acct, KRN, STR0),
        /* a Landlock domain of the tool's own would narrow nothing of the jail's, but its
         * denials would not be the run's (kaudit.c) and it could turn their logging off */
        R(landlock_create_ruleset, KRN, NONE),
        R(landlock_add_rule, KRN, NONE),
        R(landlock_restrict_self, KRN, NONE),
        /* personality(0xffffffff) only asks; any other value changes it */
        RC(personality, KRN, ARG0_NE, 0xffffffffu, HEX0),
        /* pushing input into a terminal */
        RC(ioctl, TTY, ARG1_EQ32, 0x5412 /* TIOCSTI */, IOCTL),
        RC(ioctl, TTY, ARG1_EQ32, 0x541C /* TIOCLINUX */, IOCTL),
};
const size_t pol_sc_n_rules = ELEMENTSOF(pol_sc_rules);

static bool applies(const struct pol_sc_rule *r, const uint64_t args[6])
{
        switch (r->cond) {
        case POL_SC_ALWAYS:
        case POL_SC_ENOSYS: return true;
        case POL_SC_NOT_UNIX: return args[0] != AF_UNIX;
        case POL_SC_NO_THREAD: return !(args[0] & CLONE_THREAD);
        case POL_SC_ARG1_EQ32: return (uint32_t)args[1] == (uint32_t)r->value;
        case POL_SC_ARG0_NE: return args[0] != r->value;
        }
        return false;
}

const struct pol_sc_rule *pol_sc_rule_for(int nr, const uint64_t args[6])
{
        for (size_t i = 0; i < pol_sc_n_rules; i++)
                if (pol_sc_rules[i].nr == nr && applies(&pol_sc_rules[i], args))
                        return &pol_sc_rules[i];
        return NULL;
}

/* ---- showing arguments ---- */

struct out {
        char *buf;
        size_t size, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
        if (o->len >= o->size)
                return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
        va_end(ap);
        if (n > 0)
                o->len = o->len + (size_t)n < o->size ? o->len + (size_t)n : o->size - 1;
}

#define STR_SHOWN 200

/* len bytes in quotes: quotes and backslashes escaped, bytes that are not printable ASCII as
 * \xNN, so that what the tool put in its memory reads as text and nothing else. */
static void put_escaped(struct out *o, const char *s, size_t len)
{
        put(o, "'");
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '\'' || c == '\\')
                        put(o, "\\%c", c);
                else if (c >= 0x20 && c < 0x7f)
                        put(o, "%c", c);
                else
                        put(o, "\\x%02x", c);
        }
        put(o, "'");
}

/* A NUL-terminated string of the caller's, read in pieces that stop at page ends (a string
 * may end just before an unmapped page), quoted, non-printable bytes as \xNN. */
static void put_str(struct out *o, uint64_t addr, pol_sc_read_fn rd, void *ctx)
{
        char s[STR_SHOWN + 1];
        size_t got = 0;
        bool end = false;
        if (!addr) {
                put(o, "NULL");
                return;
        }
        while (got < sizeof(s) && !end) {
                size_t in_page = 4096 - ((addr + got) & 4095);
                size_t want = sizeof(s) - got < in_page ? sizeof(s) - got : in_page;
                long n = rd ? rd(ctx, addr + got, s + got, want) : -1;
                if (n <= 0)
                        break;
                end = memchr(s + got, 0, (size_t)n) != NULL;
                got += (size_t)n;
        }
        size_t len = end ? strnlen(s, got) : got;
        if (!end && got == 0) {
                put(o, "?");
                return;
        }
        bool cut = !end;
        if (len > STR_SHOWN) {
                len = STR_SHOWN;
                cut = true;
        }
        put_escaped(o, s, len);
        put(o, cut ? "..." : "");
}

static const struct {
        int v;
        const char *name;
} families[] = {
        { AF_UNIX, "AF_UNIX" },
        { AF_INET, "AF_INET" },
        { AF_INET6, "AF_INET6" },
        { AF_NETLINK, "AF_NETLINK" },
        { AF_PACKET, "AF_PACKET" },
        { AF_VSOCK, "AF_VSOCK" },
        { AF_BLUETOOTH, "AF_BLUETOOTH" },
        { AF_ALG, "AF_ALG" },
        { AF_KEY, "AF_KEY" },
        { AF_CAN, "AF_CAN" },
        { AF_TIPC, "AF_TIPC" },
        { AF_XDP, "AF_XDP" },
        { AF_RDS, "AF_RDS" },
        { AF_X25, "AF_X25" },
        { AF_AX25, "AF_AX25" },
        { AF_APPLETALK, "AF_APPLETALK" },
};

static void put_family(struct out *o, uint64_t f)
{
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                if ((uint64_t)families[i].v == f) {
                        put(o, "%s", families[i].name);
                        return;
                }
        put(o, "family %" PRIu64, f);
}

static void put_socktype(struct out *o, uint64_t t)
{
        static const char *const types[] = {
                [SOCK_STREAM] = "SOCK_STREAM", [SOCK_DGRAM] = "SOCK_DGRAM",         [SOCK_RAW] = "SOCK_RAW",
                [SOCK_RDM] = "SOCK_RDM",       [SOCK_SEQPACKET] = "SOCK_SEQPACKET", [SOCK_PACKET] = "SOCK_PACKET"
        };
        uint64_t base = t & 0xf; /* SOCK_NONBLOCK and SOCK_CLOEXEC are flags above it */
        if (base < ELEMENTSOF(types) && types[base])
                put(o, "%s", types[base]);
        else
                put(o, "type %" PRIu64, t);
}

static void put_sockaddr(struct out *o, uint64_t addr, uint64_t len, pol_sc_read_fn rd, void *ctx)
{
        union {
                struct sockaddr sa;
                struct sockaddr_in in;
                struct sockaddr_in6 in6;
                struct sockaddr_un un;
                char raw[sizeof(struct sockaddr_un) + 1];
        } u;
        memset(&u, 0, sizeof(u));
        size_t want = len < sizeof(u.un) ? (size_t)len : sizeof(u.un);
        long n = addr && rd && want >= sizeof(sa_family_t) ? rd(ctx, addr, &u, want) : -1;
        if (n < (long)sizeof(sa_family_t)) {
                put(o, "?");
                return;
        }
        char text[INET6_ADDRSTRLEN];
        switch (u.sa.sa_family) {
        case AF_INET:
                if (n < (long)sizeof(u.in))
                        break;
                inet_ntop(AF_INET, &u.in.sin_addr, text, sizeof(text));
                put(o, "%s:%u", text, ntohs(u.in.sin_port));
                return;
        case AF_INET6:
                if (n < (long)sizeof(u.in6))
                        break;
                inet_ntop(AF_INET6, &u.in6.sin6_addr, text, sizeof(text));
                put(o, "[%s]:%u", text, ntohs(u.in6.sin6_port));
                return;
        case AF_UNIX: {
                size_t plen = (size_t)n - offsetof(struct sockaddr_un, sun_path);
                if ((size_t)n <= offsetof(struct sockaddr_un, sun_path)) {
                        put(o, "AF_UNIX unnamed");
                        return;
                }
                /* Abstract: a leading NUL, shown as '@'. */
                bool abstract = u.un.sun_path[0] == 0;
                put(o, "%s", abstract ? "@" : "");
                put_escaped(o, u.un.sun_path + abstract, abstract ? plen - 1 : strnlen(u.un.sun_path, plen));
                return;
        }
        default: break;
        }
        put_family(o, u.sa.sa_family);
}

static const struct {
        uint64_t bit;
        const char *name;
} clone_flags[] = {
        { CLONE_VM, "CLONE_VM" },
        { CLONE_FS, "CLONE_FS" },
        { CLONE_FILES, "CLONE_FILES" },
        { CLONE_SIGHAND, "CLONE_SIGHAND" },
        { CLONE_PIDFD, "CLONE_PIDFD" },
        { CLONE_PTRACE, "CLONE_PTRACE" },
        { CLONE_VFORK, "CLONE_VFORK" },
        { CLONE_PARENT, "CLONE_PARENT" },
        { CLONE_THREAD, "CLONE_THREAD" },
        { CLONE_NEWNS, "CLONE_NEWNS" },
        { CLONE_SYSVSEM, "CLONE_SYSVSEM" },
        { CLONE_SETTLS, "CLONE_SETTLS" },
        { CLONE_PARENT_SETTID, "CLONE_PARENT_SETTID" },
        { CLONE_CHILD_CLEARTID, "CLONE_CHILD_CLEARTID" },
        { CLONE_UNTRACED, "CLONE_UNTRACED" },
        { CLONE_CHILD_SETTID, "CLONE_CHILD_SETTID" },
        { CLONE_NEWCGROUP, "CLONE_NEWCGROUP" },
        { CLONE_NEWUTS, "CLONE_NEWUTS" },
        { CLONE_NEWIPC, "CLONE_NEWIPC" },
        { CLONE_NEWUSER, "CLONE_NEWUSER" },
        { CLONE_NEWPID, "CLONE_NEWPID" },
        { CLONE_NEWNET, "CLONE_NEWNET" },
        { CLONE_IO, "CLONE_IO" },
        { CLONE_NEWTIME, "CLONE_NEWTIME" },
};

/* Flags by name; clone's low byte is the signal sent to the parent at exit. */
static void put_clone_flags(struct out *o, uint64_t flags, bool with_signal)
{
        bool first = true;
        for (size_t i = 0; i < ELEMENTSOF(clone_flags); i++)
                if (flags & clone_flags[i].bit) {
                        put(o, "%s%s", first ? "" : "|", clone_flags[i].name);
                        flags &= ~clone_flags[i].bit;
                        first = false;
                }
        uint64_t sig = with_signal ? flags & 0xff : 0;
        flags &= with_signal ? ~(uint64_t)0xff : ~(uint64_t)0;
        if (sig == 17)
                put(o, "%sSIGCHLD", first ? "" : "|"), first = false;
        else if (sig)
                put(o, "%ssignal %" PRIu64, first ? "" : "|", sig), first = false;
        if (flags)
                put(o, "%s0x%" PRIx64, first ? "" : "|", flags), first = false;
        if (first)
                put(o, "0");
}

static const char *ptrace_request(uint64_t r)
{
        switch (r) {
        case PTRACE_TRACEME: return "PTRACE_TRACEME";
        case PTRACE_PEEKTEXT: return "PTRACE_PEEKTEXT";
        case PTRACE_PEEKDATA: return "PTRACE_PEEKDATA";
        case PTRACE_POKETEXT: return "PTRACE_POKETEXT";
        case PTRACE_POKEDATA: return "PTRACE_POKEDATA";
        case PTRACE_ATTACH: return "PTRACE_ATTACH";
        case PTRACE_SEIZE: return "PTRACE_SEIZE";
        default: return NULL;
        }
}

void pol_sc_describe(const struct pol_sc_rule *rule, const uint64_t a[6], pol_sc_read_fn rd, void *ctx, char *buf,
                     size_t size)
{
        struct out o = { buf, size, 0 };
        if (!size)
                return;
        buf[0] = 0;
        put(&o, "%s(", rule->name);
        switch (rule->fmt) {
        case POL_SC_FMT_NONE: break;
        case POL_SC_FMT_SOCKET:
                put_family(&o, a[0]);
                put(&o, ", ");
                put_socktype(&o, a[1]);
                break;
        case POL_SC_FMT_SOCKADDR: put_sockaddr(&o, a[1], a[2], rd, ctx); break;
        case POL_SC_FMT_FD0: put(&o, "fd %d", (int)a[0]); break;
        case POL_SC_FMT_STR0: put_str(&o, a[0], rd, ctx); break;
        case POL_SC_FMT_STR1: put_str(&o, a[1], rd, ctx); break;
        case POL_SC_FMT_STR0_STR1:
                put_str(&o, a[0], rd, ctx);
                put(&o, ", ");
                put_str(&o, a[1], rd, ctx);
                break;
        case POL_SC_FMT_MOUNT:
                put_str(&o, a[0], rd, ctx);
                put(&o, ", ");
                put_str(&o, a[1], rd, ctx);
                put(&o, ", ");
                put_str(&o, a[2], rd, ctx);
                break;
        case POL_SC_FMT_MOVE_MOUNT:
                put_str(&o, a[1], rd, ctx);
                put(&o, ", ");
                put_str(&o, a[3], rd, ctx);
                break;
        case POL_SC_FMT_CLONE: put_clone_flags(&o, a[0], true); break;
        case POL_SC_FMT_UNSHARE: put_clone_flags(&o, a[0], false); break;
        case POL_SC_FMT_SETNS:
                put(&o, "fd %d, ", (int)a[0]);
                put_clone_flags(&o, a[1], false);
                break;
        case POL_SC_FMT_PTRACE: {
                const char *req = ptrace_request(a[0]);
                if (req)
                        put(&o, "%s, pid %d", req, (int)a[1]);
                else
                        put(&o, "request %" PRIu64 ", pid %d", a[0], (int)a[1]);
                break;
        }
        case POL_SC_FMT_PID0: put(&o, "pid %d", (int)a[0]); break;
        case POL_SC_FMT_HEX0: put(&o, "0x%" PRIx64, a[0]); break;
        case POL_SC_FMT_INT0: put(&o, "%d", (int)a[0]); break;
        case POL_SC_FMT_IOCTL:
                put(&o, "fd %d, %s", (int)a[0],
                    (uint32_t)a[1] == 0x5412   ? "TIOCSTI"
                    : (uint32_t)a[1] == 0x541C ? "TIOCLINUX"
                                               : "?");
                break;
        }
        put(&o, ")");
}

void pol_sc_socket_args(uint64_t family, uint64_t type, char *buf, size_t size)
{
        struct out o = { buf, size, 0 };
        if (!size)
                return;
        buf[0] = 0;
        put_family(&o, family);
        put(&o, ", ");
        put_socktype(&o, type);
}

bool pol_sc_let_through(const struct pol_sc_rule *rule, const uint64_t args[6], pol_sc_read_fn rd, void *ctx)
{
        if (rule->nr != __NR_connect || !args[1] || !rd || args[2] < sizeof(sa_family_t))
                return false;
        sa_family_t f = 0;
        return rd(ctx, args[1], &f, sizeof(f)) == (long)sizeof(f) && f == AF_UNIX;
}

bool pol_sc_let_through_inet(const struct pol_sc_rule *rule, const uint64_t args[6], pol_sc_read_fn rd, void *ctx,
                             uint16_t port)
{
        struct sockaddr_in sin;
        if (rule->nr != __NR_connect || !args[1] || !rd || args[2] < sizeof(sin))
                return false;
        return rd(ctx, args[1], &sin, sizeof(sin)) == (long)sizeof(sin) && sin.sin_family == AF_INET &&
               sin.sin_addr.s_addr == htonl(INADDR_LOOPBACK) && sin.sin_port == htons(port);
}

bool pol_sc_foreign(uint32_t arch, int nr)
{
        return arch != AUDIT_ARCH_X86_64 || ((unsigned)nr & X32_BIT);
}

void pol_sc_describe_foreign(uint32_t arch, int nr, char *out, size_t size)
{
        if (arch == AUDIT_ARCH_X86_64 && ((unsigned)nr & X32_BIT))
                snprintf(out, size, "syscall %u of the x32 ABI", (unsigned)nr & ~(unsigned)X32_BIT);
        else if (arch == AUDIT_ARCH_I386)
                snprintf(out, size, "syscall %d of the i386 ABI", nr);
        else
                snprintf(out, size, "syscall %d of ABI 0x%08" PRIx32, nr, arch);
}
