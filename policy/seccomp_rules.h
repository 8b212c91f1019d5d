/* The seccomp layer's rules (DESIGN §5): which system calls no tool needs, why each is
 * refused, and how a refused call is shown. One table: jail/seccomp.c builds the runner's
 * filter from it, the supervisor (supervisor/notify.c) explains each notification with it.
 * No side effects here; the arguments' memory is read through a callback, so the decoding is
 * unit-tested without a process.
 *
 * A blocklist: everything not named is allowed, because the data stack's syscalls are many
 * and change with library versions, while the ones below are what an escape or an attack on
 * the kernel needs and no tool over CSV files does. Every rule is global (it holds for the
 * runner and every thread and process of the tool alike): seccomp cannot ask who is calling,
 * and nothing of the runner needs any of these after its own start-up, when the filter is
 * installed.
 *
 * Sockets: socket() and socketpair() of AF_UNIX are allowed, every other family refused.
 * The data stack needs AF_UNIX pairs (asyncio's self-pipe is a socketpair), and glibc's name
 * service tries nscd's socket before reading /etc/passwd (getpass.getuser()). An AF_UNIX
 * socket in the jail reaches nothing outside it: no host socket file is mounted in, the
 * abstract namespace is the jail's network namespace's own, and Landlock scopes abstract
 * sockets where the kernel can. connect() is therefore let through for an AF_UNIX address
 * and refused, explained, for any other; bind(), listen(), accept() are refused outright (a
 * tool serves nothing).
 *
 * Non-native ABIs (i386's int 0x80, x32) are not allowed to run at all: the filter hands
 * them to the supervisor, which records the call and kills the run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/reasons.h"

/* When a rule applies. */
enum pol_sc_cond {
        POL_SC_ALWAYS,
        POL_SC_NOT_UNIX,       /* argument 0 (a socket family) is not AF_UNIX */
        POL_SC_NO_THREAD,      /* argument 0 (clone's flags) lacks CLONE_THREAD: a new process */
        POL_SC_ARG1_EQ32,      /* the low 32 bits of argument 1 equal value (ioctl's request) */
        POL_SC_ARG0_NE,        /* argument 0, all 64 bits, differs from value (personality:
                                  only 0xffffffff itself, the query, passes) */
        POL_SC_ENOSYS,         /* answered ENOSYS in the filter, not a refusal (clone3: libc
                                  falls back to clone, which is judged) */
};

/* How a refused call's arguments are shown. */
enum pol_sc_fmt {
        POL_SC_FMT_NONE,      /* name() */
        POL_SC_FMT_SOCKET,    /* socket(AF_INET, SOCK_STREAM) */
        POL_SC_FMT_SOCKADDR,  /* connect(127.0.0.1:8080): argument 1 points at argument 2 bytes */
        POL_SC_FMT_FD0,       /* listen(fd 3) */
        POL_SC_FMT_STR0,      /* execve('/bin/sh') */
        POL_SC_FMT_STR1,      /* execveat('/bin/sh'), name_to_handle_at('/etc/passwd') */
        POL_SC_FMT_STR0_STR1, /* pivot_root('/a', '/b') */
        POL_SC_FMT_MOUNT,     /* mount('proc', '/mnt', 'proc') */
        POL_SC_FMT_MOVE_MOUNT, /* move_mount('/a', '/b'): arguments 1 and 3 */
        POL_SC_FMT_CLONE,     /* clone(CLONE_VM|CLONE_VFORK|SIGCHLD) */
        POL_SC_FMT_UNSHARE,   /* unshare(CLONE_NEWUSER|CLONE_NEWNS) */
        POL_SC_FMT_SETNS,     /* setns(fd 3, CLONE_NEWNET) */
        POL_SC_FMT_PTRACE,    /* ptrace(PTRACE_ATTACH, pid 1) */
        POL_SC_FMT_PID0,      /* process_vm_readv(pid 1) */
        POL_SC_FMT_HEX0,      /* personality(0x400000) */
        POL_SC_FMT_INT0,      /* keyctl(1), bpf(5) */
        POL_SC_FMT_IOCTL,     /* ioctl(fd 0, TIOCSTI) */
};

struct pol_sc_rule {
        int nr;            /* the native (x86_64) number */
        const char *name;  /* as in the kernel's table */
        enum pol_why why;  /* POL_WHY_SECCOMP_* */
        enum pol_sc_cond cond;
        uint64_t value;    /* for POL_SC_ARG*_ */
        enum pol_sc_fmt fmt;
};

/* The table, in no particular order; a syscall may have more than one rule (ioctl). */
extern const struct pol_sc_rule pol_sc_rules[];
extern const size_t pol_sc_n_rules;

/* The rule a notification for the native syscall nr with these arguments answers to, or
 * NULL (a notification the filter should never send: refused all the same). */
const struct pol_sc_rule *pol_sc_rule_for(int nr, const uint64_t args[6]);

/* Reads len bytes of the calling process's memory at addr into buf; returns how many bytes
 * it read (fewer at an unmapped page), or -1. */
typedef long (*pol_sc_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The call as shown in a message, e.g. "socket(AF_INET, SOCK_STREAM)" or
 * "connect(127.0.0.1:8080)"; strings read through rd are quoted and escaped, and cut at 200
 * bytes ("..."); what cannot be read is shown as "?". */
void pol_sc_describe(const struct pol_sc_rule *rule, const uint64_t args[6], pol_sc_read_fn rd, void *ctx,
                     char *out, size_t size);

/* "AF_INET, SOCK_STREAM": a socket's family and type as the messages show them (the audit
 * hook's socket.socket(...) shows them the same way). */
void pol_sc_socket_args(uint64_t family, uint64_t type, char *out, size_t size);

/* connect() to an AF_UNIX address is let through (see above); true if args[1] points at
 * one. Every other refused call is refused. */
bool pol_sc_let_through(const struct pol_sc_rule *rule, const uint64_t args[6], pol_sc_read_fn rd, void *ctx);

/* A run granted network: connect() to 127.0.0.1:port (the relay) is let through too. The
 * address is read from the caller, who could change it after: the decision rests on the
 * jail's network namespace (lo alone) and Landlock (that port alone), which hold whatever
 * address the call finally uses; what was read decides only what is recorded. */
bool pol_sc_let_through_inet(const struct pol_sc_rule *rule, const uint64_t args[6], pol_sc_read_fn rd, void *ctx,
                             uint16_t port);

/* A call of a non-native ABI: "syscall 20 of the i386 ABI". arch is the AUDIT_ARCH_* value
 * of the notification; x32 calls arrive with the native arch and nr >= 0x40000000. */
void pol_sc_describe_foreign(uint32_t arch, int nr, char *out, size_t size);

/* True if a notification is of a non-native ABI. */
bool pol_sc_foreign(uint32_t arch, int nr);
