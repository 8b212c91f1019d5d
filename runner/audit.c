/* The audit hook (DESIGN §5): added with PySys_AddAuditHook before the interpreter starts, so
 * no Python code can remove it, and armed just before the tool's first line (until then it
 * lets everything by: the interpreter's own start-up is not the tool's doing). Decisions come
 * from policy/audit.c's table; which rules are global and which ask who is asking is
 * written there. A refusal is written as an event first, then raised into the tool's own
 * stack as anvil.SandboxBlocked, a PermissionError: a tool that catches and ignores it is
 * still on the record.
 *
 * CPython's documentation says it plainly: audit hooks are no sandbox. This layer explains
 * in Python's terms; the kernel layers are the boundary. */
#include "jail/jail.h"
#include "runner/runner.h"
#include "policy/seccomp_rules.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>

/* ---- who asks ---- */

/* The tool's own code: <tool>; code compiled at run time from a string ("<string>",
 * "<timeit-src>", ...: a library compiles strings on the tool's behalf, timeit, cProfile,
 * code), of which only CPython's frozen modules are not the tool's; and code loaded from
 * where the tool can write (a module it wrote to /tmp or artifacts/ and ran). */
static bool tools_code(struct runner *r, const char *fn)
{
        if (fn[0] == '<')
                return strncmp(fn, "<frozen ", 8) != 0; /* <tool>, <string>, ...; not a path */
        /* Relative names (runpy.run_path('artifacts/m.py')) are relative to the tool's cwd. */
        char cwd[PATH_MAX], resolved[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)) ||
            pol_path_resolve(fn, cwd, runner_realpath, NULL, resolved, sizeof(resolved)) < 0)
                return false;
        return pol_path_verdict(resolved, POL_ACCESS_WRITE, &r->roots) == POL_WHY_NONE;
}

/* Past the last frame without meeting a library's own: the tool, on a thread other than the
 * one that ran the tool's code (every thread of a run is there because the tool started it,
 * directly or through a library: its work is the tool's intent, whatever frames carry it),
 * and on that thread once the tool's code has returned (atexit, weakref callbacks and
 * finalizers run at the interpreter's end call what the tool registered). Before that, a
 * hook called with no frame on the tool's thread is the runtime's own doing. */
static bool runtime_call; /* audit_runtime: the runner's own gc calls at its end (exit.c) */

void audit_runtime(bool on)
{
        runtime_call = on;
}

static bool bottom_is_tool(struct runner *r)
{
        if (r->displaying || runtime_call)
                return false; /* the interpreter's own report of an exception (unraisable_audited),
                                 or the runner's own scan at its end (exit.c: no code of the tool's runs) */
        return PyThread_get_thread_ident() != r->tool_thread || r->tool_returned;
}

/* True if the first frame out from the innermost that is not in one of the rule's
 * pass-through modules, nor a trampoline (policy/audit.c: a stdlib function that only calls
 * what it was handed), is the tool's own code, or if there is none and bottom_is_tool. */
static bool tool_asks(struct runner *r, unsigned passthrough)
{
        PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
        Py_XINCREF(f);
        bool tool = false, decided = false;
        while (f) {
                PyCodeObject *code = PyFrame_GetCode(f);
                const char *fn = code ? PyUnicode_AsUTF8(code->co_filename) : NULL;
                const char *func = code && fn ? PyUnicode_AsUTF8(code->co_name) : NULL;
                Py_XDECREF(code); /* fn and func stay alive: the frame holds its code */
                if (!fn) {
                        PyErr_Clear();
                        decided = true;
                        break;
                }
                if (tools_code(r, fn)) {
                        tool = decided = true;
                        break;
                }
                if (!pol_trampoline_match(fn, func, r->stdlib) &&
                    (!passthrough || !pol_passthrough_match(passthrough, fn, r->stdlib))) {
                        decided = true;
                        break;
                }
                PyFrameObject *back = PyFrame_GetBack(f);
                Py_DECREF(f);
                f = back;
        }
        Py_XDECREF(f);
        PyErr_Clear();
        return decided ? tool : bottom_is_tool(r);
}

/* The line of the innermost frame of the tool's own code, 0 if none is on the stack. */
static long tool_line(void)
{
        PyFrameObject *f = PyEval_GetFrame();
        Py_XINCREF(f);
        long line = 0;
        while (f && !line) {
                PyCodeObject *code = PyFrame_GetCode(f);
                const char *fn = code ? PyUnicode_AsUTF8(code->co_filename) : NULL;
                if (fn && strcmp(fn, TOOL_NAME) == 0)
                        line = PyFrame_GetLineNumber(f);
                Py_XDECREF(code);
                PyFrameObject *back = PyFrame_GetBack(f);
                Py_DECREF(f);
                f = back;
        }
        Py_XDECREF(f);
        PyErr_Clear();
        return line;
}

/* ---- arguments ---- */

/* What an open descriptor names, if it names a place in the file system (not a pipe or a
 * socket). */
static bool fd_path(long fd, char *buf, size_t size)
{
        char link[64];
        snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
        ssize_t n = fd >= 0 ? readlink(link, buf, size - 1) : -1;
        if (n <= 0)
                return false;
        buf[n] = 0;
        return buf[0] == '/' && strncmp(buf, "/memfd:", 7) != 0; /* a memfd is memory, not a place */
}

static struct runner *path_arg_runner;

/* A path argument as text: str, bytes or os.PathLike; an fd (os.listdir(fd), os.chmod(fd)) as
 * the place it names. False for anything else. An os.PathLike's __fspath__ may be the tool's
 * own Python code (sqlite3.connect raises its event with the object as given): it runs with
 * the hook judging again, as anywhere else, or what it does would pass unjudged. */
static bool path_arg(PyObject *o, char *buf, size_t size)
{
        if (!o)
                return false;
        if (PyLong_Check(o)) {
                long fd = PyLong_AsLong(o);
                PyErr_Clear();
                return fd_path(fd, buf, size);
        }
        bool in_hook = path_arg_runner->in_hook;
        path_arg_runner->in_hook = false;
        PyObject *p = PyOS_FSPath(o);
        path_arg_runner->in_hook = in_hook;
        if (!p) {
                PyErr_Clear(); /* a refusal in it is on the record already */
                return false;
        }
        const char *s = NULL;
        if (PyUnicode_Check(p))
                s = PyUnicode_AsUTF8(p);
        else if (PyBytes_Check(p))
                s = PyBytes_AsString(p);
        bool ok = s && strlen(s) < size;
        if (ok)
                strcpy(buf, s);
        Py_DECREF(p);
        PyErr_Clear();
        return ok;
}

static const char *str_arg(PyObject *args, Py_ssize_t i)
{
        PyObject *o = PyTuple_Check(args) && i < PyTuple_GET_SIZE(args) ? PyTuple_GET_ITEM(args, i) : NULL;
        const char *s = o && PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
        PyErr_Clear();
        return s;
}

static PyObject *arg(PyObject *args, Py_ssize_t i)
{
        return PyTuple_Check(args) && i < PyTuple_GET_SIZE(args) ? PyTuple_GET_ITEM(args, i) : NULL;
}

/* The directory a relative path of an event is relative to: the dir_fd argument at index i
 * when the event has one and it is given (os.unlink(name, dir_fd=fd), as shutil.rmtree and
 * tempfile do), else the tool's current directory. */
static void base_dir(struct runner *r, PyObject *args, int i, char *buf, size_t size)
{
        PyObject *o = i >= 0 ? arg(args, i) : NULL;
        if (o && PyLong_Check(o)) {
                long fd = PyLong_AsLong(o);
                PyErr_Clear();
                if (fd >= 0) {
                        if (!fd_path(fd, buf, size))
                                buf[0] = 0; /* not a directory we can name: judged as unresolvable */
                        return;
                }
        }
        if (!getcwd(buf, size))
                snprintf(buf, size, "%s", r->workdir);
}

/* Judges a path; relative paths are relative to base (NULL: the tool's current directory). */
static enum pol_why path_verdict_at(struct runner *r, const char *base, const char *path, enum pol_access acc)
{
        /* The data-free devices are fine to read and write (the jail's table, its audit column). */
        if (pol_jail_device(path))
                return POL_WHY_NONE;
        char cwd[PATH_MAX], resolved[PATH_MAX];
        if (!base) {
                if (!getcwd(cwd, sizeof(cwd)))
                        snprintf(cwd, sizeof(cwd), "%s", r->workdir);
                base = cwd;
        }
        if ((path[0] != '/' && base[0] != '/') ||
            pol_path_resolve(path, base, runner_realpath, NULL, resolved, sizeof(resolved)) < 0)
                return acc == POL_ACCESS_WRITE ? POL_WHY_WRITE : POL_WHY_READ;
        return pol_path_verdict(resolved, acc, &r->roots);
}

static enum pol_why path_verdict(struct runner *r, const char *path, enum pol_access acc)
{
        return path_verdict_at(r, NULL, path, acc);
}

/* ---- refusing ---- */

static int refuse(struct runner *r, const char *op, enum pol_why why)
{
        char msg[PATH_MAX * 2 + 256];
        POL_REASON(msg, sizeof(msg), RUNTIME_BLOCKED, op, pol_why_text(why));
        if (r->refusals_recorded < RUNTIME_EVENTS_MAX) {
                r->refusals_recorded++;
                runner_event(r, "audit", "blocked", op, pol_why_text(why), msg, tool_line(), 0, NULL);
        } else
                r->refusals_dropped++;
        PyErr_SetString(r->sandbox_blocked, msg);
        return -1;
}

/* A run granted network: connect to the relay's address, and getaddrinfo of its literal
 * (socket.create_connection's first step, urllib's and urllib3's), are the only network
 * events let by. The address as Python shows it: (host, port) for AF_INET; anything else (an
 * AF_INET6 or AF_UNIX address, a name) is refused. */
static int egress(struct runner *r, const char *event, PyObject *args, enum pol_why why)
{
        bool connect = strcmp(event, "socket.connect") == 0;
        PyObject *host = NULL, *port = NULL;
        if (connect) {
                PyObject *a = arg(args, 1);
                if (a && PyTuple_Check(a) && PyTuple_GET_SIZE(a) == 2) {
                        host = PyTuple_GET_ITEM(a, 0);
                        port = PyTuple_GET_ITEM(a, 1);
                }
        } else {
                host = arg(args, 0);
                port = arg(args, 1);
        }
        const char *h = host && PyUnicode_Check(host) ? PyUnicode_AsUTF8(host) : NULL;
        long pn = -1;
        const char *ps = NULL;
        if (port && PyLong_Check(port))
                pn = PyLong_AsLong(port);
        else if (port && PyUnicode_Check(port))
                ps = PyUnicode_AsUTF8(port);
        PyErr_Clear();
        if (ps && strcmp(ps, "3128") == 0)
                pn = JAIL_EGRESS_PORT;
        if (h && strcmp(h, JAIL_EGRESS_ADDR) == 0 && pn == JAIL_EGRESS_PORT)
                return 0;
        char op[PATH_MAX];
        PyObject *shown = connect ? arg(args, 1) : NULL;
        PyObject *rep = shown ? PyObject_Repr(shown) : NULL;
        const char *rs = rep ? PyUnicode_AsUTF8(rep) : NULL;
        PyErr_Clear();
        if (connect)
                snprintf(op, sizeof(op), "socket.connect(%.200s)", rs ? rs : "?");
        else if (ps || pn < 0)
                snprintf(op, sizeof(op), "socket.getaddrinfo('%.200s', %.16s)", h ? h : "?", ps ? ps : "None");
        else
                snprintf(op, sizeof(op), "socket.getaddrinfo('%.200s', %ld)", h ? h : "?", pn);
        Py_XDECREF(rep);
        return refuse(r, op, why);
}

static int decide(struct runner *r, const struct pol_audit_rule *rule, const char *event, PyObject *args)
{
        char p1[PATH_MAX], p2[PATH_MAX], op[PATH_MAX * 2 + 64];
        const char *name = rule->op ? rule->op : event;
        switch (rule->kind) {
        case POL_AUDIT_DENY: return refuse(r, name, rule->why);
        case POL_AUDIT_DENY_TOOL: return tool_asks(r, rule->passthrough) ? refuse(r, name, rule->why) : 0;
        case POL_AUDIT_IMPORT: {
                const char *module = str_arg(args, 0);
                if (!module || !tool_asks(r, rule->passthrough))
                        return 0;
                enum pol_why w = pol_module(module, &r->caps);
                if (w == POL_WHY_NONE)
                        return 0;
                snprintf(op, sizeof(op), "import %s", module);
                return refuse(r, op, w);
        }
        case POL_AUDIT_FS_READ: {
                if (!path_arg(arg(args, 0), p1, sizeof(p1)) || !tool_asks(r, rule->passthrough))
                        return 0;
                if (path_verdict(r, p1, POL_ACCESS_READ) == POL_WHY_NONE)
                        return 0;
                snprintf(op, sizeof(op), "%s('%s')", event, p1);
                return refuse(r, op, POL_WHY_READ);
        }
        case POL_AUDIT_OPEN: {
                if (!path_arg(arg(args, 0), p1, sizeof(p1)))
                        return 0;
                const char *mode = str_arg(args, 1);
                PyObject *fl = arg(args, 2);
                int flags = fl && PyLong_Check(fl) ? (int)PyLong_AsLong(fl) : 0;
                PyErr_Clear();
                if (mode && r->skip_opener_event) {
                        r->skip_opener_event = false;
                        return 0;
                }
                bool write = mode ? pol_mode_writes(mode) : pol_flags_write(flags);
                if (!write && !tool_asks(r, rule->passthrough))
                        return 0; /* libraries read what they need: the kernel bounds it */
                enum pol_why w = path_verdict_at(r, r->open_base, p1, write ? POL_ACCESS_WRITE : POL_ACCESS_READ);
                if (w == POL_WHY_NONE)
                        return 0;
                snprintf(op, sizeof(op), "open('%s', '%s')", p1, mode ? mode : write ? "w" : "r");
                return refuse(r, op, w);
        }
        case POL_AUDIT_FS_WRITE:
        case POL_AUDIT_FS_WRITE2: {
                bool two = rule->kind == POL_AUDIT_FS_WRITE2;
                bool a = path_arg(arg(args, 0), p1, sizeof(p1));
                bool b = two && path_arg(arg(args, 1), p2, sizeof(p2));
                char base1[PATH_MAX], base2[PATH_MAX];
                base_dir(r, args, rule->dir_fd[0], base1, sizeof(base1));
                base_dir(r, args, rule->dir_fd[1], base2, sizeof(base2));
                bool bad = (a && path_verdict_at(r, base1, p1, POL_ACCESS_WRITE) != POL_WHY_NONE) ||
                           (b && path_verdict_at(r, base2, p2, POL_ACCESS_WRITE) != POL_WHY_NONE);
                if (!bad)
                        return 0;
                if (two)
                        snprintf(op, sizeof(op), "%s('%s', '%s')", event, a ? p1 : "?", b ? p2 : "?");
                else
                        snprintf(op, sizeof(op), "%s('%s')", event, p1);
                return refuse(r, op, POL_WHY_WRITE);
        }
        case POL_AUDIT_LINK: {
                if (!path_arg(arg(args, 0), p1, sizeof(p1)) || !path_arg(arg(args, 1), p2, sizeof(p2)))
                        return 0;
                /* The link is made at dst (a write); what it leads to, src, is judged from
                 * dst's directory for a symlink, as the kernel will follow it. */
                char base[PATH_MAX + 4], target[PATH_MAX * 2 + 4];
                snprintf(base, sizeof(base), "%s", p2);
                char *slash = strrchr(base, '/');
                if (slash)
                        *slash = 0;
                else
                        strcpy(base, ".");
                if (p1[0] == '/' || strcmp(event, "os.link") == 0) /* a hard link's src: as given */
                        snprintf(target, sizeof(target), "%s", p1);
                else
                        snprintf(target, sizeof(target), "%s/%s", base, p1);
                /* os.link(src, dst, src_dir_fd, dst_dir_fd); os.symlink(src, dst, dir_fd), where a
                 * relative src is relative to dst's directory, itself relative to dir_fd. */
                bool hard = strcmp(event, "os.link") == 0;
                char base1[PATH_MAX], base2[PATH_MAX];
                base_dir(r, args, rule->dir_fd[1], base2, sizeof(base2));
                if (hard)
                        base_dir(r, args, rule->dir_fd[0], base1, sizeof(base1));
                else
                        strcpy(base1, base2);
                bool bad = path_verdict_at(r, base2, p2, POL_ACCESS_WRITE) != POL_WHY_NONE ||
                           (path_verdict_at(r, base1, target, POL_ACCESS_READ) != POL_WHY_NONE &&
                            path_verdict_at(r, base1, target, POL_ACCESS_WRITE) != POL_WHY_NONE);
                if (!bad)
                        return 0;
                snprintf(op, sizeof(op), "%s('%s', '%s')", event, p1, p2);
                return refuse(r, op, POL_WHY_LINK);
        }
        case POL_AUDIT_MMAP: {
                PyObject *fo = arg(args, 0);
                long fd = fo && PyLong_Check(fo) ? PyLong_AsLong(fo) : -1;
                PyErr_Clear();
                if (fd < 0 || !tool_asks(r, rule->passthrough))
                        return 0; /* anonymous memory, or a library's own mapping */
                if (!fd_path(fd, p1, sizeof(p1)) || path_verdict(r, p1, POL_ACCESS_READ) == POL_WHY_NONE)
                        return 0;
                snprintf(op, sizeof(op), "mmap('%s')", p1);
                return refuse(r, op, POL_WHY_READ);
        }
        case POL_AUDIT_ATTR: {
                const char *attr = str_arg(args, 1);
                if (!attr || pol_attr(attr) == POL_WHY_NONE || !tool_asks(r, rule->passthrough))
                        return 0;
                snprintf(op, sizeof(op), "attribute %s", attr);
                return refuse(r, op, POL_WHY_INTROSPECTION);
        }
        case POL_AUDIT_SQLITE: {
                if (!path_arg(arg(args, 0), p1, sizeof(p1)) || !p1[0] || strcmp(p1, ":memory:") == 0 ||
                    (strncmp(p1, "file:", 5) == 0 && strstr(p1, "mode=memory")))
                        return 0;
                if (path_verdict(r, p1, POL_ACCESS_WRITE) == POL_WHY_NONE ||
                    (access(p1, F_OK) == 0 && path_verdict(r, p1, POL_ACCESS_READ) == POL_WHY_NONE))
                        return 0;
                snprintf(op, sizeof(op), "sqlite3.connect('%s')", p1);
                return refuse(r, op, POL_WHY_WRITE);
        }
        case POL_AUDIT_SOCKET: {
                PyObject *fam = arg(args, 1), *typ = arg(args, 2);
                long family = fam && PyLong_Check(fam) ? PyLong_AsLong(fam) : -1;
                long type = typ && PyLong_Check(typ) ? PyLong_AsLong(typ) : -1;
                PyErr_Clear();
                /* -1: an object for a socket that exists already (fileno=): nothing is made */
                if (family == AF_UNIX || family == -1)
                        return 0;
                /* granted network: a TCP socket, for the relay (jail/seccomp.c says the same) */
                if (rule->why == POL_WHY_NETWORK_EGRESS && family == AF_INET && type >= 0 &&
                    (type & 0xf) == SOCK_STREAM)
                        return 0;
                char sa[96];
                pol_sc_socket_args((uint64_t)family, (uint64_t)type, sa, sizeof(sa));
                snprintf(op, sizeof(op), "socket.socket(%s)", sa);
                return refuse(r, op, rule->why);
        }
        case POL_AUDIT_EGRESS: return egress(r, event, args, rule->why);
        case POL_AUDIT_UNPICKLE: {
                const char *module = str_arg(args, 0), *global = str_arg(args, 1);
                if (!module || !global || !pol_unpickle_denied(module, global))
                        return 0;
                snprintf(op, sizeof(op), "pickle.find_class %s.%s", module, global);
                return refuse(r, op, POL_WHY_UNPICKLE);
        }
        }
        return 0;
}

static int hook(const char *event, PyObject *args, void *data)
{
        struct runner *r = data;
        if (!r->armed || r->in_hook)
                return 0;
        const struct pol_audit_rule *rule = pol_audit_rule(event, &r->caps);
        if (!rule)
                return 0;
        /* Formatting a message or writing an event must not be judged itself. */
        r->in_hook = true;
        int rc = decide(r, rule, event, args);
        r->in_hook = false;
        return rc;
}

int audit_install(struct runner *r)
{
        path_arg_runner = r;
        return PySys_AddAuditHook(hook, r) == 0 ? 0 : -1;
}

/* _posixsubprocess.fork_exec starts a process and raises no audit event of its own
 * (subprocess.Popen raises one before it; the tool can call it directly): it is replaced by
 * this wrapper, which raises one, before any tool code runs. The original is held here only. */
static PyObject *fork_exec_original;

static PyObject *fork_exec_audited(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
        (void)self;
        if (PySys_Audit("_posixsubprocess.fork_exec", NULL) < 0)
                return NULL;
        return PyObject_Vectorcall(fork_exec_original, args, (size_t)nargs, NULL);
}

static PyMethodDef fork_exec_def = { "fork_exec", (PyCFunction)(void (*)(void))fork_exec_audited, METH_FASTCALL,
                                     "fork_exec, audited by Anvil" };

/* os.open's "open" event carries no dir_fd: os.open('parts', O_RDONLY, dir_fd=fd), as
 * shutil.rmtree and tempfile's cleanup do, would be judged relative to the cwd. This wrapper
 * names the directory fd refers to for the event while the original runs. The path is turned
 * into str or bytes first and the other arguments must be plain ints, so that no Python code
 * (an __fspath__ or __index__ of the tool's) runs while the base is set. */
static PyObject *os_open_original;
static struct runner *os_open_runner;

static PyObject *os_open_audited(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
        (void)self;
        struct runner *r = os_open_runner;
        Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        PyObject *dir_fd = NULL;
        for (Py_ssize_t i = 0; i < nkw; i++)
                if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "dir_fd") == 0)
                        dir_fd = args[nargs + i];
        if (!dir_fd || dir_fd == Py_None || nargs < 1 || r->open_base)
                return PyObject_Vectorcall(os_open_original, args, nargsf, kwnames);
        if (!PyLong_CheckExact(dir_fd))
                return PyObject_Vectorcall(os_open_original, args, nargsf, kwnames); /* judged from the cwd */
        for (Py_ssize_t i = 1; i < nargs + nkw; i++)
                if (!PyLong_CheckExact(args[i]))
                        return PyObject_Vectorcall(os_open_original, args, nargsf, kwnames);
        PyObject *path = PyOS_FSPath(args[0]);
        if (!path)
                return NULL;
        PyObject *stack[8];
        if (nargs + nkw > (Py_ssize_t)(sizeof(stack) / sizeof(stack[0]))) {
                Py_DECREF(path);
                return PyObject_Vectorcall(os_open_original, args, nargsf, kwnames); /* the original refuses it */
        }
        stack[0] = path;
        for (Py_ssize_t i = 1; i < nargs + nkw; i++)
                stack[i] = args[i];
        long fd = PyLong_AsLong(dir_fd);
        PyErr_Clear();
        char base[PATH_MAX];
        base_dir(r, NULL, -1, base, sizeof(base));
        if (fd >= 0 && !fd_path(fd, base, sizeof(base)))
                base[0] = 0; /* a dir_fd that names no directory: judged as unresolvable */
        r->open_base = base;
        PyObject *res = PyObject_Vectorcall(os_open_original, stack, (size_t)nargs, kwnames);
        r->open_base = NULL;
        Py_DECREF(path);
        return res;
}

static PyMethodDef os_open_def = { "open", (PyCFunction)(void (*)(void))os_open_audited, METH_FASTCALL | METH_KEYWORDS,
                                   "os.open, its dir_fd seen by Anvil's audit hook" };

/* open(file, ..., opener=f): io.open raises its "open" event for file before it calls the
 * opener, which may open it relative to a dir_fd (open('x.csv', 'w', opener=in_dir)); what is
 * opened is what the opener opens, and its os.open is judged. This wrapper marks the one
 * event to pass over; the arguments must be plain values and the path is turned into str or
 * bytes first, so that no Python code of the tool's runs between the mark and its event. */
static PyObject *io_open_original;
static struct runner *io_open_runner;

static bool plain(PyObject *o)
{
        return o == Py_None || PyUnicode_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o);
}

static PyObject *io_open_audited(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
        (void)self;
        struct runner *r = io_open_runner;
        Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        Py_ssize_t opener =
                nargs > 7 ? 7 : -1; /* open(file, mode, buffering, encoding, errors, newline, closefd, opener) */
        for (Py_ssize_t i = 0; i < nkw; i++)
                if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "opener") == 0)
                        opener = nargs + i;
        if (opener < 0 || args[opener] == Py_None || nargs < 1 || nargs + nkw > 8)
                return PyObject_Vectorcall(io_open_original, args, nargsf, kwnames);
        for (Py_ssize_t i = 1; i < nargs + nkw; i++)
                if (i != opener && !plain(args[i]))
                        return PyObject_Vectorcall(io_open_original, args, nargsf, kwnames); /* judged as given */
        if (PyLong_Check(args[0]))
                return PyObject_Vectorcall(io_open_original, args, nargsf, kwnames); /* an fd: no event */
        PyObject *path = PyOS_FSPath(args[0]);
        if (!path)
                return NULL;
        PyObject *stack[8];
        stack[0] = path;
        for (Py_ssize_t i = 1; i < nargs + nkw; i++)
                stack[i] = args[i];
        r->skip_opener_event = true;
        PyObject *res = PyObject_Vectorcall(io_open_original, stack, (size_t)nargs, kwnames);
        r->skip_opener_event = false; /* its event came, or never will (a bad mode) */
        Py_DECREF(path);
        return res;
}

static PyMethodDef io_open_def = { "open", (PyCFunction)(void (*)(void))io_open_audited, METH_FASTCALL | METH_KEYWORDS,
                                   "open, its opener seen by Anvil's audit hook" };

/* sys.unraisablehook: how the interpreter reports an exception nobody can catch (a thread of
 * _thread's, an atexit callback, a finalizer), with no frame on the stack. Its traceback
 * compiles each shown line to mark it ("compile" events, the line's own file named): that
 * is the interpreter's doing, not the tool's, though bottom_is_tool would say otherwise.
 * This wrapper of the default hook marks the report while it runs; a hook the tool sets
 * itself is judged as its own code. */
static PyObject *unraisable_original;
static struct runner *unraisable_runner;

static PyObject *unraisable_audited(PyObject *self, PyObject *arg)
{
        (void)self;
        struct runner *r = unraisable_runner;
        bool was = r->displaying;
        r->displaying = true;
        PyObject *res = PyObject_CallOneArg(unraisable_original, arg);
        r->displaying = was;
        return res;
}

static PyMethodDef unraisable_def = { "unraisablehook", (PyCFunction)(void (*)(void))unraisable_audited, METH_O,
                                      "sys.unraisablehook, its report seen by Anvil's audit hook" };

/* Replaces name in each of the modules with the wrapper made from def. */
static int wrap(const char *const *modules, const char *name, PyMethodDef *def, PyObject **original)
{
        PyObject *w = NULL;
        int rc = 0;
        for (size_t i = 0; modules[i] && rc == 0; i++) {
                PyObject *m = PyImport_ImportModule(modules[i]);
                if (!m) {
                        PyErr_Clear();
                        continue; /* not built: nothing to wrap */
                }
                if (!*original)
                        *original = PyObject_GetAttrString(m, name);
                if (!w && *original)
                        w = PyCFunction_New(def, NULL);
                rc = w ? PyObject_SetAttrString(m, name, w) : -1;
                Py_DECREF(m);
        }
        Py_XDECREF(w);
        return rc;
}

int audit_arm(struct runner *r)
{
        PyObject *os = PyImport_ImportModule("os");
        PyObject *file = os ? PyObject_GetAttrString(os, "__file__") : NULL;
        const char *f = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : NULL;
        if (f && strlen(f) < sizeof(r->stdlib)) {
                strcpy(r->stdlib, f);
                char *slash = strrchr(r->stdlib, '/');
                if (slash)
                        *slash = 0;
        }
        Py_XDECREF(file);
        Py_XDECREF(os);
        PyErr_Clear();
        if (!r->stdlib[0])
                snprintf(r->stdlib, sizeof(r->stdlib), "/usr/lib/python%d.%d", PY_MAJOR_VERSION, PY_MINOR_VERSION);
        static const char *const posixsubprocess[] = { "_posixsubprocess", NULL }, *const osmods[] = { "posix", "os",
                                                                                                       NULL };
        static const char *const iomods[] = { "builtins", "io", "_io", NULL };
        static const char *const sysmods[] = { "sys", NULL };
        os_open_runner = r;
        io_open_runner = r;
        unraisable_runner = r;
        if (wrap(posixsubprocess, "fork_exec", &fork_exec_def, &fork_exec_original) < 0 ||
            wrap(osmods, "open", &os_open_def, &os_open_original) < 0 ||
            wrap(iomods, "open", &io_open_def, &io_open_original) < 0 ||
            wrap(sysmods, "unraisablehook", &unraisable_def, &unraisable_original) < 0) {
                PyErr_Print();
                return -1;
        }
        r->sandbox_blocked = PyErr_NewExceptionWithDoc("anvil.SandboxBlocked",
                                                       "An operation the sandbox's policy refuses. The refusal is on "
                                                       "the run's record whether or not it is caught.",
                                                       PyExc_PermissionError, NULL);
        PyObject *mod = r->sandbox_blocked ? PyImport_AddModule("anvil") : NULL; /* borrowed */
        if (!mod || PyModule_AddObjectRef(mod, "SandboxBlocked", r->sandbox_blocked) < 0) {
                PyErr_Print();
                return -1;
        }
        r->tool_thread = PyThread_get_thread_ident();
        r->armed = true;
        return 0;
}

void audit_tool_returned(struct runner *r)
{
        r->tool_returned = true;
}

void audit_finish(struct runner *r)
{
        r->armed = false;
        if (!r->refusals_dropped)
                return;
        char msg[160];
        POL_REASON(msg, sizeof(msg), RUNTIME_DROPPED, r->refusals_dropped, (unsigned)RUNTIME_EVENTS_MAX);
        runner_event(r, "audit", "dropped", NULL, NULL, msg, 0, 0, NULL);
}
