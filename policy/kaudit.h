/* Landlock's kernel audit records, read from outside the jail (supervisor/kaudit.c): parsed
 * strictly, and turned into the catalog's explanations. Pure: no I/O, no allocation.
 *
 * A record arrives on the audit netlink multicast group as one netlink message whose type is
 * the record type and whose text is "audit(SECONDS.MILLIS:SERIAL): " and then space-separated
 * key=value fields. The forms, as the kernel writes them (security/landlock/audit.c,
 * security/lsm_audit.c, kernel/audit.c of Linux 6.15) and as captured on a 6.18 kernel:
 *
 *   1423 LANDLOCK_ACCESS  domain=18d2f6a10 blockers=fs.read_file path="/etc/hostname" dev="tmpfs" ino=7
 *                         domain=18d2f6a10 blockers=net.connect_tcp daddr=127.0.0.1 dest=47123
 *   1424 LANDLOCK_DOMAIN  domain=18d2f6a10 status=allocated mode=enforcing pid=21544 uid=2599999999
 *                         exe="/tmp/ll-exp/exp" comm="exp"
 *                         domain=18d2f6a10 status=deallocated denials=17
 *   1320 EOE              (no fields: the end of one event's records)
 *   1121 TRUSTED_APP      pid=30163 uid=0 auid=4294967295 ses=4294967295 msg='anvil-drain=00ff'
 *                         (the supervisor's own marker, see kaudit.c)
 *
 * Values the kernel calls untrusted (paths, names, comm) are written by
 * audit_log_untrustedstring(): in double quotes when every byte is printable ASCII other than
 * '"' and space, otherwise as upper-case hex of the raw bytes. So no value contains a space and
 * splitting on spaces is sound; a path is decoded from either form. A path is the tool's word
 * (it names it): it is bounded here and escaped before it is shown. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/reasons.h"

#define POL_KA_TEXT_MAX 9000   /* the kernel's MAX_AUDIT_MESSAGE_LENGTH is 8970 */
#define POL_KA_OBJECT_MAX 4200 /* a decoded path: PATH_MAX and the " (deleted)" d_path adds */

/* The blockers Landlock names (the kernel's own strings), one bit each. */
#define POL_KA_BLOCKERS(X)                                           \
        X(FS_EXECUTE, "fs.execute")                                  \
        X(FS_WRITE_FILE, "fs.write_file")                            \
        X(FS_READ_FILE, "fs.read_file")                              \
        X(FS_READ_DIR, "fs.read_dir")                                \
        X(FS_REMOVE_DIR, "fs.remove_dir")                            \
        X(FS_REMOVE_FILE, "fs.remove_file")                          \
        X(FS_MAKE_CHAR, "fs.make_char")                              \
        X(FS_MAKE_DIR, "fs.make_dir")                                \
        X(FS_MAKE_REG, "fs.make_reg")                                \
        X(FS_MAKE_SOCK, "fs.make_sock")                              \
        X(FS_MAKE_FIFO, "fs.make_fifo")                              \
        X(FS_MAKE_BLOCK, "fs.make_block")                            \
        X(FS_MAKE_SYM, "fs.make_sym")                                \
        X(FS_REFER, "fs.refer")                                      \
        X(FS_TRUNCATE, "fs.truncate")                                \
        X(FS_IOCTL_DEV, "fs.ioctl_dev")                              \
        X(FS_CHANGE_TOPOLOGY, "fs.change_topology")                  \
        X(NET_BIND_TCP, "net.bind_tcp")                              \
        X(NET_CONNECT_TCP, "net.connect_tcp")                        \
        X(SCOPE_ABSTRACT_UNIX_SOCKET, "scope.abstract_unix_socket")  \
        X(SCOPE_SIGNAL, "scope.signal")                              \
        X(PTRACE, "ptrace")

enum pol_ka_blocker {
#define X(id, name) POL_KA_##id,
        POL_KA_BLOCKERS(X)
#undef X
        _POL_KA_BLOCKER_MAX
};

const char *pol_ka_blocker_name(enum pol_ka_blocker b);

enum pol_ka_kind {
        POL_KA_IGNORED = 0, /* a record type that is not one of these (SYSCALL, PROCTITLE, ...) */
        POL_KA_ACCESS,
        POL_KA_DOMAIN,
        POL_KA_EOE,
        POL_KA_MARKER,
};

struct pol_ka_record {
        enum pol_ka_kind kind;
        uint64_t time_ms; /* the event's time, CLOCK_REALTIME, from audit(...) */
        uint64_t serial;  /* the event's serial: a denial and its domain record share it */
        uint64_t domain;
        /* ACCESS */
        uint32_t blockers; /* 1u << enum pol_ka_blocker */
        enum { POL_KA_OBJ_NONE, POL_KA_OBJ_PATH, POL_KA_OBJ_NAME, POL_KA_OBJ_NET, POL_KA_OBJ_TASK } object;
        char path[POL_KA_OBJECT_MAX]; /* decoded: path= (or name=, a bare file name), NUL-free */
        size_t path_len;
        bool has_ioctl;
        unsigned ioctlcmd;
        char addr[48]; /* daddr= for a connect, saddr= for a bind (IPv4 or IPv6 text) */
        unsigned port; /* dest= or src=; 0: none given */
        long opid;     /* scope.signal, ptrace: the other process */
        char ocomm[64];
        /* DOMAIN */
        bool allocated; /* status=allocated (else deallocated) */
        long pid;       /* allocated: the pid (in the initial namespace) that restricted itself */
        uint64_t uid;   /* allocated: its uid, in the initial namespace */
        uint64_t denials; /* deallocated: the domain's denials, logged or not */
        /* MARKER */
        uint64_t nonce;
};

/* Parses one record: type is the netlink message type, text its payload (not necessarily
 * NUL-terminated; a trailing NUL is allowed). Returns 0 with *rec filled (kind IGNORED for
 * types this does not parse), or -EINVAL with `why` naming what is malformed. */
int pol_ka_parse(int type, const char *text, size_t len, struct pol_ka_record *rec, char *why, size_t why_size);

/* The explanation of a parsed ACCESS record: op ("read '/etc/hostname'"), the why, and the
 * whole catalog message ("blocked at kernel: read '/etc/hostname' (outside the jail's read
 * roots, landlock)"). The blockers as the kernel wrote them go in `blockers`. */
void pol_ka_explain(const struct pol_ka_record *rec, char *op, size_t op_size, enum pol_why *why, char *msg,
                    size_t msg_size, char *blockers, size_t blockers_size);

/* A path or name shown to a reader: printable ASCII and well-formed UTF-8 as they are, every
 * other byte (and ' and \) as \xNN; cut at `max` bytes of output, then "...". */
void pol_ka_escape(const char *in, size_t n, size_t max, char *out, size_t size);
