/* The audit hook's decision table (DESIGN §5): for each audit event CPython raises, what kind
 * of rule applies. Events not in the table are allowed.
 *
 * Which rules are global, and why:
 *   process creation (os.fork, os.system, os.exec, os.posix_spawn, os.spawn, subprocess.Popen,
 *     and _posixsubprocess.fork_exec, which the runner wraps to audit it)
 *     and signals to other processes: refused whoever asks. These events carry no caller of
 *     interest (a fork from a library is still a fork of the jail), and nothing the data
 *     stack does in a run needs one: what it does at import (matplotlib's fc-list, platform's
 *     `uname -p`) is done outside the jail before (pre-warm, don't whitelist).
 *   network (socket.connect, bind, sendto, sendmsg, getaddrinfo and the name lookups):
 *     refused whoever asks unless the network capability was granted: a library reaching out
 *     is the tool reaching out. Granted, only the relay's address and its literal's lookup
 *     are let by (egress_rules). Creating a socket object is allowed (asyncio's event loop
 *     makes a socketpair for itself).
 *   writes outside the write roots (open for writing, mkdir, remove, rename, chmod, ...):
 *     whoever asks: pandas' to_csv writes for the tool.
 *   links out of the roots, unpickling globals that execute code, and SQLite extensions
 *     (native code loaded into the interpreter): whoever asks.
 * Which are decided by who asks (tool code, or a library it called):
 *   imports (socket from a tool is refused; numpy importing ctypes is not), ctypes (numpy
 *   loads its extensions through it), reads outside the read roots (the interpreter reads
 *   its own modules, matplotlib its fonts), frame access and introspection attributes (the
 *   traceback and logging modules walk frames), dynamic code (dataclasses and namedtuple
 *   build their methods with exec), marshal.loads (the import system loads .pyc with it). */
#include <string.h>

#include "lib/cleanup.h"
#include "policy/rules.h"

#define RULE(ev, kind, why, pass)          \
        {                                  \
                ev, kind, why, pass, NULL, \
                {                          \
                        -1, -1             \
                }                          \
        }
#define RULE_AT(ev, kind, why, pass, d1, d2) \
        {                                    \
                ev, kind, why, pass, NULL,   \
                {                            \
                        d1, d2               \
                }                            \
        }

/* Sorted by event name, for bsearch. */
static const struct pol_audit_rule rules[] = {
        RULE("_posixsubprocess.fork_exec", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE("code.__new__", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, POL_PASS_NONE),
        RULE("compile", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, POL_PASS_NONE),
        RULE("ctypes.addressof", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("ctypes.call_function", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("ctypes.cdata", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("ctypes.cdata/buffer", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("ctypes.dlopen", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("ctypes.dlsym", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("ctypes.dlsym/handle", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("ctypes.string_at", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("ctypes.wstring_at", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE),
        RULE("exec", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, POL_PASS_NONE),
        RULE("gc.get_objects", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_NONE),
        RULE("gc.get_referents", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_NONE),
        RULE("gc.get_referrers", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_NONE),
        RULE("import", POL_AUDIT_IMPORT, POL_WHY_NONE, POL_PASS_IMPORT),
        RULE("marshal.load", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, POL_PASS_NONE),
        RULE("marshal.loads", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, POL_PASS_NONE),
        RULE("mmap.__new__", POL_AUDIT_MMAP, POL_WHY_READ, POL_PASS_FILES),
        RULE("object.__getattr__", POL_AUDIT_ATTR, POL_WHY_INTROSPECTION, POL_PASS_NONE),
        RULE("open", POL_AUDIT_OPEN, POL_WHY_NONE, POL_PASS_FILES),
        RULE_AT("os.chmod", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE, 2, -1),
        RULE_AT("os.chown", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE, 3, -1),
        RULE("os.exec", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE("os.fork", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE("os.forkpty", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE("os.kill", POL_AUDIT_DENY, POL_WHY_SIGNAL, POL_PASS_NONE),
        RULE("os.killpg", POL_AUDIT_DENY, POL_WHY_SIGNAL, POL_PASS_NONE),
        RULE_AT("os.link", POL_AUDIT_LINK, POL_WHY_LINK, POL_PASS_NONE, 2, 3),
        RULE("os.listdir", POL_AUDIT_FS_READ, POL_WHY_READ, POL_PASS_FILES),
        RULE_AT("os.mkdir", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE, 2, -1),
        RULE("os.posix_spawn", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE_AT("os.remove", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE, 1, -1),
        RULE("os.removexattr", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE),
        RULE_AT("os.rename", POL_AUDIT_FS_WRITE2, POL_WHY_WRITE, POL_PASS_NONE, 2, 3),
        RULE_AT("os.rmdir", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE, 1, -1),
        RULE("os.scandir", POL_AUDIT_FS_READ, POL_WHY_READ, POL_PASS_FILES),
        RULE("os.setxattr", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE),
        RULE("os.spawn", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE_AT("os.symlink", POL_AUDIT_LINK, POL_WHY_LINK, POL_PASS_NONE, -1, 2),
        RULE("os.system", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE("os.truncate", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE),
        RULE_AT("os.utime", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE, 3, -1),
        RULE("pickle.find_class", POL_AUDIT_UNPICKLE, POL_WHY_UNPICKLE, POL_PASS_NONE),
        RULE("pty.spawn", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE_AT("shutil.rmtree", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, POL_PASS_NONE, 1, -1),
        RULE("signal.pthread_kill", POL_AUDIT_DENY, POL_WHY_SIGNAL, POL_PASS_NONE),
        RULE("socket.__new__", POL_AUDIT_SOCKET, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("socket.bind", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("socket.connect", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("socket.getaddrinfo", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("socket.gethostbyaddr", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("socket.gethostbyname", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("socket.getnameinfo", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("socket.sendmsg", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("socket.sendto", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, POL_PASS_NONE),
        RULE("sqlite3.connect", POL_AUDIT_SQLITE, POL_WHY_WRITE, POL_PASS_NONE),
        RULE("sqlite3.enable_load_extension", POL_AUDIT_DENY, POL_WHY_NATIVE, POL_PASS_NONE),
        RULE("sqlite3.load_extension", POL_AUDIT_DENY, POL_WHY_NATIVE, POL_PASS_NONE),
        RULE("subprocess.Popen", POL_AUDIT_DENY, POL_WHY_PROCESS, POL_PASS_NONE),
        RULE("sys._current_frames", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_FRAME),
        RULE("sys._getframe", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_FRAME),
        RULE("sys.setprofile", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_NONE),
        RULE("sys.settrace", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_NONE),
};

/* A run granted network (issue 17): its one way out is the relay on the jail's loopback, so
 * the network events are judged against it (runner/audit.c, POL_AUDIT_EGRESS: the proxy's
 * address, 127.0.0.1:3128, and its literal's getaddrinfo), and the rest stay refused: every
 * other connection or name, every server, every datagram. Sorted, for bsearch. */
static const struct pol_audit_rule egress_rules[] = {
        RULE("socket.__new__", POL_AUDIT_SOCKET, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
        RULE("socket.bind", POL_AUDIT_DENY, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
        RULE("socket.connect", POL_AUDIT_EGRESS, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
        RULE("socket.getaddrinfo", POL_AUDIT_EGRESS, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
        RULE("socket.gethostbyaddr", POL_AUDIT_DENY, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
        RULE("socket.gethostbyname", POL_AUDIT_DENY, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
        RULE("socket.getnameinfo", POL_AUDIT_DENY, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
        RULE("socket.sendmsg", POL_AUDIT_DENY, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
        RULE("socket.sendto", POL_AUDIT_DENY, POL_WHY_NETWORK_EGRESS, POL_PASS_NONE),
};

static int cmp(const void *key, const void *elem)
{
        return strcmp(key, ((const struct pol_audit_rule *)elem)->event);
}

const struct pol_audit_rule *pol_audit_rule(const char *event, const struct pol_caps *caps)
{
        const struct pol_audit_rule *r = bsearch(event, rules, ELEMENTSOF(rules), sizeof(rules[0]), cmp);
        if (r && r->why == POL_WHY_NETWORK_CAP && caps && caps->granted[POL_CAP_NETWORK])
                return bsearch(event, egress_rules, ELEMENTSOF(egress_rules), sizeof(egress_rules[0]), cmp);
        return r;
}

/* The modules each pass-through set names, as files below the stdlib directory or as the
 * frozen names CPython 3.11 gives some of them. */
static const struct {
        unsigned set;
        const char *file;
} passthrough[] = {
        { POL_PASS_IMPORT, "<frozen importlib._bootstrap>" },
        { POL_PASS_IMPORT, "<frozen importlib._bootstrap_external>" },
        { POL_PASS_IMPORT, "importlib/__init__.py" },
        { POL_PASS_IMPORT, "importlib/_bootstrap.py" },
        { POL_PASS_IMPORT, "importlib/_bootstrap_external.py" },
        { POL_PASS_IMPORT, "importlib/util.py" },
        { POL_PASS_IMPORT, "pkgutil.py" },
        { POL_PASS_IMPORT, "runpy.py" },
        { POL_PASS_FRAME, "inspect.py" },
        { POL_PASS_NATIVE, "ctypes/__init__.py" },
        { POL_PASS_NATIVE, "ctypes/util.py" },
        { POL_PASS_NATIVE, "ctypes/_endian.py" },
        { POL_PASS_FILES, "pathlib.py" },
        { POL_PASS_FILES, "shutil.py" },
        { POL_PASS_FILES, "codecs.py" },
        { POL_PASS_FILES, "<frozen codecs>" },
        { POL_PASS_FILES, "fileinput.py" },
};

bool pol_passthrough_match(unsigned set, const char *filename, const char *stdlib)
{
        size_t sl = stdlib ? strlen(stdlib) : 0;
        for (size_t i = 0; i < ELEMENTSOF(passthrough); i++) {
                if (!(passthrough[i].set & set))
                        continue;
                const char *f = passthrough[i].file;
                if (f[0] == '<') {
                        if (strcmp(filename, f) == 0)
                                return true;
                } else if (sl && strncmp(filename, stdlib, sl) == 0 && filename[sl] == '/' &&
                           strcmp(filename + sl + 1, f) == 0)
                        return true;
        }
        return false;
}

/* The trampolines of CPython 3.11's stdlib: each calls what it was given and decides nothing.
 * A C callable (a ctypes function, exec, importlib.import_module's C parts) handed to one of
 * them runs with it as the innermost frame, and would otherwise be judged as that module's
 * own call. */
static const struct {
        const char *file, *func;
} trampolines[] = {
        { "threading.py", "run" },              /* Thread.run: self._target(...); Timer.run */
        { "threading.py", "_bootstrap_inner" }, /* the bottom of every threading thread */
        { "threading.py", "_bootstrap" },
        { "concurrent/futures/thread.py", "run" },              /* _WorkItem.run: self.fn(*self.args) */
        { "concurrent/futures/thread.py", "_worker" },          /* the worker's loop */
        { "concurrent/futures/_base.py", "_invoke_callbacks" }, /* add_done_callback's fn(self) */
        { "concurrent/futures/_base.py", "add_done_callback" },
        { "weakref.py", "__call__" },         /* finalize.__call__: func(*args) */
        { "weakref.py", "_exitfunc" },        /* finalize's atexit */
        { "contextlib.py", "_exit_wrapper" }, /* ExitStack.callback */
        { "contextlib.py", "__exit__" },      /* ExitStack.__exit__: cb(*exc_details) */
        { "functools.py", "_method" },        /* partialmethod's bound call */
        { "functools.py", "__get__" },        /* cached_property: self.func(instance) */
        { "sched.py", "run" },                /* scheduler.run: action(*argument) */
        { "asyncio/events.py", "_run" },      /* Handle._run: call_soon's callback */
};

bool pol_trampoline_match(const char *filename, const char *func, const char *stdlib)
{
        size_t sl = stdlib ? strlen(stdlib) : 0;
        if (!sl || !func || strncmp(filename, stdlib, sl) != 0 || filename[sl] != '/')
                return false;
        for (size_t i = 0; i < ELEMENTSOF(trampolines); i++)
                if (strcmp(filename + sl + 1, trampolines[i].file) == 0 && strcmp(func, trampolines[i].func) == 0)
                        return true;
        return false;
}

/* Globals that run code or reach the system when an unpickler loads them: a pickle of the
 * tool's own data needs none of them. */
static const char *const unpickle_modules[] = {
        "os",
        "posix",
        "nt",
        "subprocess",
        "sys",
        "ctypes",
        "_ctypes",
        "socket",
        "_socket",
        "importlib",
        "shutil",
        "pty",
        "multiprocessing",
        "marshal",
        "runpy",
        "code",
        "codeop",
        "pickle",
        "_pickle",
        "types",
        "webbrowser",
        "commands",
        "pdb",
        "bdb",
        "signal",
        "threading",
        "_thread",
        "asyncio",
        "urllib",
        "http",
        "ftplib",
        "smtplib",
        "telnetlib",
        "ssl",
        "gc",
        "inspect",
        "operator",
        "functools",
        "io",
        "_io",
        "pathlib",
        "tempfile",
        "glob",
        "_posixsubprocess",
        "_operator",
        "_imp",
        "zipimport",
        "sqlite3",
};

/* Harmless names in the modules above: what a plain pickle of a tool's own data holds. */
static const struct {
        const char *module, *name;
} unpickle_allowed[] = {
        { "types", "SimpleNamespace" },
        { "pathlib", "PosixPath" },
        { "pathlib", "PurePosixPath" },
        { "pathlib", "Path" },
};

/* Not getattr: Python 3.11 pickles every Enum member as getattr(EnumClass, 'NAME'), so a
 * tool's own pickle of a dataclass with an Enum field needs it. What getattr can then reach
 * from an allowed global still meets the audit hook when it acts: os.system and its kin are
 * refused wherever they are called from, and a read or write is judged as the tool's (the
 * unpickler is C: the innermost frame is the tool's). */
static const char *const unpickle_builtins[] = {
        "eval",  "exec",       "compile", "__import__", "setattr", "delattr",      "open",
        "input", "breakpoint", "globals", "locals",     "vars",    "__builtins__",
};

static bool in_list(const char *s, size_t n, const char *const *list, size_t count)
{
        for (size_t i = 0; i < count; i++)
                if (strlen(list[i]) == n && strncmp(s, list[i], n) == 0)
                        return true;
        return false;
}

/* A protocol 4 name may be dotted ("Outer.Inner"), and the unpickler follows it with
 * getattr from the module: find_class('pandas.io.common', 'os.system') is os.system, and
 * find_class('pandas.io.common', 'os') the os module. A component that names a denied
 * module or builtin, or any dunder ('__globals__'), is refused, whatever the module; a
 * class's (or a nested class's) qualified name has none of them (Cython's
 * __pyx_unpickle_X is no dunder). */
static bool unpickle_name_denied(const char *name)
{
        const char *p = name;
        for (;;) {
                const char *dot = strchr(p, '.');
                size_t n = dot ? (size_t)(dot - p) : strlen(p);
                if ((n >= 4 && p[0] == '_' && p[1] == '_' && p[n - 1] == '_' && p[n - 2] == '_') ||
                    in_list(p, n, unpickle_modules, ELEMENTSOF(unpickle_modules)) ||
                    in_list(p, n, unpickle_builtins, ELEMENTSOF(unpickle_builtins)))
                        return true;
                if (!dot)
                        return false;
                p = dot + 1;
        }
}

bool pol_unpickle_denied(const char *module, const char *name)
{
        if (unpickle_name_denied(name))
                return true;
        if (strcmp(module, "builtins") == 0 || strcmp(module, "__builtin__") == 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(unpickle_allowed); i++)
                if (strcmp(module, unpickle_allowed[i].module) == 0 && strcmp(name, unpickle_allowed[i].name) == 0)
                        return false;
        for (size_t i = 0; i < ELEMENTSOF(unpickle_modules); i++) {
                size_t n = strlen(unpickle_modules[i]);
                if (strncmp(module, unpickle_modules[i], n) == 0 && (module[n] == 0 || module[n] == '.'))
                        return true;
        }
        return false;
}
