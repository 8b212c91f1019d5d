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
#include "jail/runner/runner.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- who asks ---- */

/* The tool's own code: <tool>; code compiled at run time from a string ("<string>",
 * "<timeit-src>", ...: a library compiles strings on the tool's behalf, timeit, cProfile,
 * code), of which only CPython's frozen modules are not the tool's; and code loaded from
 * where the tool can write (a module it wrote to /tmp or artifacts/ and ran). */
static bool tools_code(struct runner *r, const char *fn)
{
        if (strcmp(fn, TOOL_NAME) == 0 || (fn[0] == '<' && strncmp(fn, "<frozen ", 8) != 0))
                return true;
        /* Relative names (runpy.run_path('artifacts/m.py')) are relative to the tool's cwd. */
        char cwd[PATH_MAX], resolved[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)) ||
            pol_path_resolve(fn, cwd, runner_realpath, NULL, resolved, sizeof(resolved)) < 0)
                return false;
        return pol_path_verdict(resolved, POL_ACCESS_WRITE, &r->roots) == POL_WHY_NONE;
}

/* True if the first frame out from the innermost that is not in one of the rule's
 * pass-through modules is the tool's own code. No frame at all: the runtime, not the tool. */
static bool tool_asks(struct runner *r, unsigned passthrough)
{
        PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
        Py_XINCREF(f);
        bool tool = false;
        while (f) {
                PyCodeObject *code = PyFrame_GetCode(f);
                const char *fn = code ? PyUnicode_AsUTF8(code->co_filename) : NULL;
                Py_XDECREF(code);
                if (!fn) {
                        PyErr_Clear();
                        break;
                }
                if (tools_code(r, fn)) {
                        tool = true;
                        break;
                }
                if (!passthrough || !pol_passthrough_match(passthrough, fn, r->stdlib))
                        break;
                PyFrameObject *back = PyFrame_GetBack(f);
                Py_DECREF(f);
                f = back;
        }
        Py_XDECREF(f);
        return tool;
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

/* A path argument as text: str, bytes or os.PathLike. False for an fd or anything else. */
static bool path_arg(PyObject *o, char *buf, size_t size)
{
        if (!o || PyLong_Check(o))
                return false;
        PyObject *p = PyOS_FSPath(o);
        if (!p) {
                PyErr_Clear();
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

/* Judges a path; relative paths are relative to the tool's current directory. */
static enum pol_why path_verdict(struct runner *r, const char *path, enum pol_access acc)
{
        /* The data-free devices are fine to read and write. */
        if (strcmp(path, "/dev/null") == 0 || strcmp(path, "/dev/zero") == 0 || strcmp(path, "/dev/urandom") == 0)
                return POL_WHY_NONE;
        char cwd[PATH_MAX], resolved[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)))
                strcpy(cwd, r->workdir);
        if (pol_path_resolve(path, cwd, runner_realpath, NULL, resolved, sizeof(resolved)) < 0)
                return acc == POL_ACCESS_WRITE ? POL_WHY_WRITE : POL_WHY_READ;
        return pol_path_verdict(resolved, acc, &r->roots);
}

/* ---- refusing ---- */

static int refuse(struct runner *r, const char *op, enum pol_why why)
{
        char msg[PATH_MAX * 2 + 256];
        pol_reason(msg, sizeof(msg), POL_RUNTIME_BLOCKED, op, pol_why_text(why));
        if (r->refusals_recorded < RUNTIME_EVENTS_MAX) {
                r->refusals_recorded++;
                runner_event(r, "audit", "blocked", op, pol_why_text(why), msg, tool_line(), 0, NULL);
        } else
                r->refusals_dropped++;
        PyErr_SetString(r->sandbox_blocked, msg);
        return -1;
}

static int decide(struct runner *r, const struct pol_audit_rule *rule, const char *event, PyObject *args)
{
        char p1[PATH_MAX], p2[PATH_MAX], op[PATH_MAX * 2 + 64];
        const char *name = rule->op ? rule->op : event;
        switch (rule->kind) {
        case POL_AUDIT_DENY:
                return refuse(r, name, rule->why);
        case POL_AUDIT_DENY_TOOL:
                return tool_asks(r, rule->passthrough) ? refuse(r, name, rule->why) : 0;
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
                bool write = mode ? pol_mode_writes(mode) : pol_flags_write(flags);
                if (!write && !tool_asks(r, rule->passthrough))
                        return 0; /* libraries read what they need: the kernel bounds it */
                enum pol_why w = path_verdict(r, p1, write ? POL_ACCESS_WRITE : POL_ACCESS_READ);
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
                bool bad = (a && path_verdict(r, p1, POL_ACCESS_WRITE) != POL_WHY_NONE) ||
                           (b && path_verdict(r, p2, POL_ACCESS_WRITE) != POL_WHY_NONE);
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
                if (p1[0] == '/' || strcmp(event, "os.link") == 0)
                        snprintf(target, sizeof(target), "%s", p1);
                else
                        snprintf(target, sizeof(target), "%s/%s", base, p1);
                bool bad = path_verdict(r, p2, POL_ACCESS_WRITE) != POL_WHY_NONE ||
                           (path_verdict(r, target, POL_ACCESS_READ) != POL_WHY_NONE &&
                            path_verdict(r, target, POL_ACCESS_WRITE) != POL_WHY_NONE);
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
                char link[64];
                snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
                ssize_t n = readlink(link, p1, sizeof(p1) - 1);
                if (n <= 0)
                        return 0;
                p1[n] = 0;
                if (p1[0] != '/' || path_verdict(r, p1, POL_ACCESS_READ) == POL_WHY_NONE)
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

static int audit_fork_exec(void)
{
        PyObject *m = PyImport_ImportModule("_posixsubprocess");
        if (!m) {
                PyErr_Clear();
                return 0; /* not built: nothing to wrap */
        }
        fork_exec_original = PyObject_GetAttrString(m, "fork_exec");
        PyObject *w = fork_exec_original ? PyCFunction_New(&fork_exec_def, NULL) : NULL;
        int rc = w ? PyObject_SetAttrString(m, "fork_exec", w) : -1;
        Py_XDECREF(w);
        Py_DECREF(m);
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
        if (audit_fork_exec() < 0) {
                PyErr_Print();
                return -1;
        }
        r->sandbox_blocked = PyErr_NewExceptionWithDoc(
                "anvil.SandboxBlocked",
                "An operation the sandbox's policy refuses. The refusal is on the run's record whether or not it is caught.",
                PyExc_PermissionError, NULL);
        PyObject *mod = r->sandbox_blocked ? PyImport_AddModule("anvil") : NULL; /* borrowed */
        if (!mod || PyModule_AddObjectRef(mod, "SandboxBlocked", r->sandbox_blocked) < 0) {
                PyErr_Print();
                return -1;
        }
        r->armed = true;
        return 0;
}

void audit_finish(struct runner *r)
{
        r->armed = false;
        if (!r->refusals_dropped)
                return;
        char msg[160];
        pol_reason(msg, sizeof(msg), POL_RUNTIME_DROPPED, r->refusals_dropped, (unsigned)RUNTIME_EVENTS_MAX);
        runner_event(r, "audit", "dropped", NULL, NULL, msg, 0, 0, NULL);
}
