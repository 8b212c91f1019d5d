/* policy/: pure decisions every side shares, with no I/O and no privilege of their own: the
 * catalog of every string a user or a model reads (reasons.h, prose.h), limits, the jail's
 * path table (jail_paths.h), the Python layers' rules, capabilities, the seccomp table, the
 * kernel audit record parser. Linked by the root supervisor, the unprivileged broker and
 * anvilctl, and the untrusted runner alike; each function is a lookup or a computation on
 * its arguments, unit-tested both ways. */
/* The Python layers' rules (DESIGN §5, §7): what a tool may import, call, touch and open,
 * as tables and pure decisions. The pre-check (runner/precheck.c) and the audit hook
 * (runner/audit.c) ask these; neither holds a rule of its own. No side effects here:
 * every function is a lookup or a computation on its arguments, unit-tested both ways.
 *
 * Deny the dangerous operation, not the module: importing inspect, pickle, asyncio or
 * pathlib is fine; frame access from tool code, unpickling os.system, connecting a socket,
 * forking, are not. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/reasons.h"

/* ---- capabilities (policy/capabilities.c) ---- */

#define POL_CAPS(X)       \
        X(NETWORK, "network") \
        X(PROCESS, "process")

enum pol_cap {
#define X(id, name) POL_CAP_##id,
        POL_CAPS(X)
#undef X
        _POL_CAP_MAX
};

struct pol_caps {
        bool granted[_POL_CAP_MAX];
};

const char *pol_cap_name(enum pol_cap c);
/* -1 for an unknown name. */
int pol_cap_from_name(const char *name);
/* The message for a name that is no capability (POL_CAP_NOT_A_CAPABILITY), given at `field`
 * ("--cap", "task_submit.capabilities_approved"): the name cut and cleaned as shown, with
 * the names there are. Into buf, cut to size; returns buf. anvilctl's --cap and the broker's
 * task_submit say it alike. */
char *pol_cap_unknown(const char *field, const char *name, char *buf, size_t size);

/* The server's policy for one capability: POL_WHY_NONE if it may be granted, else why not.
 * process: never. network: not until egress through the broker exists. */
enum pol_why pol_cap_server_policy(enum pol_cap c);

typedef enum pol_why (*pol_cap_policy_fn)(enum pol_cap c);

/* granted = requested ∩ approved ∩ server policy (NULL: pol_cap_server_policy). For the i-th
 * requested name, why[i] is POL_WHY_NONE if granted, else the first reason it was not:
 * unknown, never grantable, not approved, the server's policy. */
void pol_caps_resolve(const char *const *requested, size_t n_requested, const char *const *approved,
                      size_t n_approved, pol_cap_policy_fn server, struct pol_caps *granted, enum pol_why *why);

/* ---- imports, calls, attributes (policy/rules.c) ---- */

/* Importing `module` (dotted): the module and each of its parents are looked up, so
 * "http.client" is network while "http" is not, and "ctypes.util" is native code. */
enum pol_why pol_module(const char *module, const struct pol_caps *caps);

/* A call by its qualified name as the pre-check resolves it ("os.fork", "eval",
 * "subprocess.run", "inspect.currentframe"). */
enum pol_why pol_call(const char *qualified, const struct pol_caps *caps);

/* An attribute that reaches into the interpreter (__subclasses__, __globals__, f_back, ...).
 * __name__, __init__, __class__, __dict__, __doc__ and the like are fine. */
enum pol_why pol_attr(const char *attr);

/* ---- calls that take paths (policy/rules.c) ---- */

enum pol_access {
        POL_ACCESS_READ,
        POL_ACCESS_WRITE,
        POL_ACCESS_MODE,  /* read or write by a mode string argument ("w", "a", "r+", ...) */
        POL_ACCESS_FLAGS, /* read or write by an os.open flags argument */
        POL_ACCESS_OPEN_OR_CREATE, /* a read if the file exists, else a write (SQLite) */
};

struct pol_path_arg {
        int pos;          /* positional index of the path, -1: keyword only */
        const char *kw;   /* its keyword name, or NULL */
        enum pol_access access;
        int mode_pos;     /* for POL_ACCESS_MODE/FLAGS: where the mode is */
        const char *mode_kw;
        const char *mode_default; /* when the mode is not given */
};

/* The path arguments of a call: by qualified name for functions ("open", "pandas.read_csv",
 * "shutil.copy"), by bare method name for methods ("to_csv", "savefig", "write_text").
 * Returns the number of path arguments (0: not a path-taking call) and fills args. */
size_t pol_path_call(const char *name, bool is_method, const struct pol_path_arg **args);

/* Methods of a pathlib.Path whose path is the object itself (Path('x').write_text(...)):
 * args[i].pos is -1 for the object's own path. */
size_t pol_path_self_method(const char *name, const struct pol_path_arg **args);

/* True if an open() mode string writes: w, a, x or +. */
bool pol_mode_writes(const char *mode);
/* True if os.open() flags write: O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or O_APPEND. */
bool pol_flags_write(int flags);

/* ---- roots and paths (policy/paths.c) ---- */

#define POL_ROOTS_MAX 8

/* Where a tool may read and write. Paths are absolute and resolved (realpath). The scratch
 * directory (the private /tmp, thrown away with the jail) is readable and writable besides
 * the roots; messages name the roots, which are where a tool's data lives. */
struct pol_roots {
        const char *workdir; /* shown as "./" in messages */
        const char *read[POL_ROOTS_MAX];
        size_t n_read;
        const char *write[POL_ROOTS_MAX];
        size_t n_write;
        const char *scratch; /* may be NULL */
        /* Read-only system data besides the roots (the jail's table's SYSTEM entry,
         * pol_jail_system_root in policy/jail_paths.h), not named in messages either; may
         * be NULL. */
        const char *system;
};

/* A realpath(3) for paths that exist: 0 and the canonical path in out, or -errno. The
 * pre-check passes the real one; tests pass a table. */
typedef int (*pol_realpath_fn)(const char *path, char *out, size_t size, void *ctx);

/* The canonical absolute form of `path` (relative to cwd): every existing prefix resolved
 * with rp (so a symlink out of the roots is followed to where it leads), the components
 * that do not exist yet taken as written, with "." and ".." applied. -ENAMETOOLONG if it
 * does not fit. */
int pol_path_resolve(const char *path, const char *cwd, pol_realpath_fn rp, void *ctx, char *out, size_t size);

/* True if resolved is root or below it (component-wise: /work/inputs2 is not below
 * /work/inputs). */
bool pol_path_under(const char *resolved, const char *root);

/* POL_WHY_NONE, POL_WHY_READ or POL_WHY_WRITE for a resolved path. The working directory
 * itself (not what is below it) is readable: listing it shows inputs/ and artifacts/; so is
 * the system root, read-only. */
enum pol_why pol_path_verdict(const char *resolved, enum pol_access access, const struct pol_roots *roots);

/* "./inputs, ./artifacts": the read or write roots as a tool sees them. */
void pol_roots_display(const struct pol_roots *roots, bool write, char *buf, size_t size);

/* ---- the audit hook's table (policy/audit.c) ---- */

enum pol_audit_kind {
        POL_AUDIT_IMPORT,    /* (module, ...): the module table, by who asks */
        POL_AUDIT_OPEN,      /* (path, mode, flags): reads by who asks, writes by anyone */
        POL_AUDIT_FS_READ,   /* (path, ...): a directory listed, by who asks */
        POL_AUDIT_FS_WRITE,  /* (path, ...): a change to the file system at path, by anyone */
        POL_AUDIT_FS_WRITE2, /* (src, dst, ...): both paths change */
        POL_AUDIT_LINK,      /* (src, dst, ...): dst is created, src is where it points */
        POL_AUDIT_MMAP,      /* (fileno, length, access, offset): the file behind the fd is read */
        POL_AUDIT_DENY,      /* always refused, whoever asks */
        POL_AUDIT_DENY_TOOL, /* refused when tool code asks, allowed to libraries */
        POL_AUDIT_ATTR,      /* (obj, name): introspection attributes, by who asks */
        POL_AUDIT_UNPICKLE,  /* (module, name): globals that execute code, whoever asks */
        POL_AUDIT_EGRESS,    /* a run granted network: socket.connect (sock, address) and
                                socket.getaddrinfo (host, port, ...) allowed for the relay's
                                address alone (JAIL_EGRESS_ADDR:JAIL_EGRESS_PORT), whoever asks */
        POL_AUDIT_SOCKET,    /* (sock, family, type, proto): a socket of any family but
                                AF_UNIX (seccomp refuses it below; this says so in Python's
                                terms first), whoever asks */
        POL_AUDIT_SQLITE,    /* (database): SQLite opens files itself: a write unless in the
                                write roots, or an existing file under the read roots (SQLite
                                then has it read-only) */
};

/* Who asks: the first frame, walking out from the innermost, that is not in one of the
 * pass-through modules of the rule (importlib for imports, inspect for frames, ctypes for
 * native calls, pathlib and shutil for opens): tool code (<tool>) or a library. */
enum pol_passthrough {
        POL_PASS_NONE = 0,
        POL_PASS_IMPORT = 1, /* importlib, pkgutil, runpy */
        POL_PASS_FRAME = 2,  /* inspect */
        POL_PASS_NATIVE = 4, /* ctypes */
        POL_PASS_FILES = 8,  /* pathlib, shutil, codecs, fileinput */
};

struct pol_audit_rule {
        const char *event;
        enum pol_audit_kind kind;
        enum pol_why why; /* for DENY and DENY_TOOL */
        unsigned passthrough;
        const char *op; /* the operation as shown in a message; NULL: the event name */
        /* Where the event's dir_fd arguments are, for its first and second path (-1: none):
         * a relative path with a dir_fd is relative to that directory, not to the cwd
         * (shutil.rmtree and tempfile remove with os.unlink(name, dir_fd=...)). */
        signed char dir_fd[2];
};

/* The rule for an audit event, or NULL: not ruled on, allowed. */
const struct pol_audit_rule *pol_audit_rule(const char *event, const struct pol_caps *caps);

/* A module file or frozen name that a rule's pass-through set contains (e.g. the file of
 * inspect: "/usr/lib/python3.11/inspect.py" with stdlib "/usr/lib/python3.11"). */
bool pol_passthrough_match(unsigned passthrough, const char *filename, const char *stdlib);

/* A stdlib function whose only work is to call a callable it was handed (threading's
 * Thread.run, a ThreadPoolExecutor's work item, weakref.finalize, an ExitStack's callbacks):
 * what that callable does is the intent of whoever handed it over, so such a frame is
 * passed through for every rule, and a walk that passes through them all to the bottom of
 * a thread the tool started (or, once the tool's code has returned, of the interpreter's
 * end: atexit) is the tool asking. filename as in pol_passthrough_match; func the code
 * object's co_name. */
bool pol_trampoline_match(const char *filename, const char *func, const char *stdlib);

/* pickle.find_class(module, name): does loading this global execute code or reach the
 * system? os, posix, subprocess, sys, builtins eval/exec/__import__/compile/getattr/open,
 * ctypes, socket, importlib, shutil, pty, multiprocessing, marshal, runpy, ... */
bool pol_unpickle_denied(const char *module, const char *name);
