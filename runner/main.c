/* anvil-py: the runner, the first program of the jail that is not ours alone. It embeds
 * Debian's libpython3 and runs the tool as __main__ from a code object named "<tool>".
 *
 *   R1  read the run spec (a run_spec frame) on fd 0, then put /dev/null there (a warm
 *       jail's runner, spec.warm: once R6w has read the run's half)
 *   R2  not dumpable; parent-death signal and no_new_privs are inherited from pid 1
 *   R3  the audit hook (audit.c): PySys_AddAuditHook here, before Py_InitializeFromConfig,
 *       so Python code can never remove it; it lets everything by until R6c
 *   R4  start the interpreter: isolated config, no bytecode written, Debian's sys.path;
 *       pre-warm what the data stack would otherwise do in the run (platform's processor)
 *   R5  final_answer made a builtin, and what vars.c's encoder needs taken (vars_init)
 *   R6  the jail's promises, fail closed: Landlock, when the spec says the jail was
 *       restricted with it, is seen enforced (jail/landlock.c); seccomp (inforce.c) is
 *       loaded, its listener sent to pid 1 on fd 4, which is then closed, and the
 *       supervisor's word awaited that it sees the filter in our /proc status and watches
 *       the listener (S6a: NOTIFY_OK); no_new_privs, the filter, the namespaces and only fds
 *       0-3 open are checked. One not in force refuses the run ("refused: <layer> not in
 *       force (...)"), event "refused", and nothing of the request's is read. Else event
 *       "in_force", the runner's first, naming what it saw: the supervisor takes it (for the
 *       tier's Landlock) only as the first event, the one sent before any untrusted byte
 *   R6w a warm jail's runner (spec.warm): numpy, pandas and matplotlib (Agg) imported, event
 *       "warm_ready", then the run's own half of the spec read on fd 0 (a second run_spec,
 *       of which source, variables, args and save_source are taken). Nothing of any run
 *       exists in the jail before it; the supervisor sends it when a run takes the jail
 *   R6a the spec's variables, if any, decoded and bound as globals of __main__ (vars.c);
 *       malformed ones refuse the run (event "refused", op "variables": the request's fault,
 *       which the supervisor answers with an error frame), and no tool code runs; then
 *       sys.argv: the tool's name, then the spec's args (set_argv)
 *   R6b the pre-check (precheck.c): the source parsed with ast and walked, nothing executed;
 *       a tool with findings stops here, status blocked, its result with the full tier
 *   R6c arm the audit hook. With the Python layers off (a test build's supervisor), event
 *       "layers_disabled" right after "in_force", and R6b and R6c are left out
 *   R7  event "started"
 *   R8  compile as "<tool>", run in __main__
 *   R9  event "exception" with the traceback, if one escaped the tool
 *   R9a event "variables": the globals the tool left that the next step can have (vars.c)
 *   R9b an agent's step (spec.save_source): when the tool ended with code 0 having written an
 *       artifact, its source is saved beside it as write_roots[0]/tool.py, never over a file
 *       the tool wrote itself; event "source_saved" or "source_not_saved" with why. After
 *       R10's fast end, so the tool's threads and its output are done
 *   R10 the fast end (exit.c): the tool's threads joined, its atexit handlers run, its open
 *       files flushed and closed, C stdio flushed, as Python's end would, without
 *       Py_FinalizeEx; the summary of refusals not recorded, event "blocked" if a refusal
 *       ended the tool, event "finished", _exit with the tool's code
 *
 * What runs before the filter (R1-R5), and why none of it handles untrusted input. The
 * request's own bytes, the tool's source and its variables (what the model wrote), are first
 * interpreted at R6a and R6b, under every layer the tier promises. Before R6:
 *   - R1 must come first: the spec says what R6 is to find (the Landlock ABI, whether seccomp
 *     is promised, a jail without namespaces) and where the tool's roots are. The frame is
 *     the supervisor's, read with the strict msgpack decoder of proto/ (fuzzed; the very
 *     code the supervisor itself, outside any jail, ran on the client's frame that carried
 *     the same bytes): source and variables come out of it as opaque strings, checked only
 *     for their length, UTF-8 and no NUL. What is interpreted of the spec before R6 is the
 *     supervisor's own: the jail's paths (runner_policy_init), the granted capabilities'
 *     names (matched against a table), the `uname -p` and `file -b` it ran itself outside
 *     (prewarm_platform), the flags of R6.
 *   - R2-R5 read no byte of the request's: a prctl, a C function pointer, the interpreter's
 *     start-up (its fixed environment and its own root-owned files on the read-only /usr:
 *     the stdlib, Debian's site and .pth files) and imports of _json, keyword and builtins.
 *     They run before R6 so that R6's checks see the process as the tool will get it (an
 *     fd the start-up left open is refused there); under the filter they would gain
 *     nothing, as no untrusted byte steers them.
 * What R6a and R6b ask of the kernel (importing json and ast: openat, newfstatat, read,
 * lseek, mmap, close, ioctl TCGETS on the files) is none of the calls policy/seccomp_rules.c
 * refuses, and a call it refused would be a seccomp event on the run's record, which
 * tests/e2e/t_filter_first.sh finds none of. Had one been needed, that work would be done
 * at R5, on trusted input, never by a wider filter.
 *
 * Events go to fd 3 as runner_event frames. Everything here is on the untrusted side: the
 * supervisor decodes these frames as strictly as a client's, and only trusts what the kernel
 * tells it (the exit status, cgroup figures). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "jail/jail.h"
#include "runner/runner.h"
#include "lib/fd.h"
#include "policy/limits.h"
#include "policy/reasons.h"
#include "proto/proto.h"

static struct runner R;

static void send_event(const char *kind, const char *op, const char *message, long line, const char *tb)
{
        runner_event(&R, "runner", kind, op, NULL, message, line, 0, tb);
}

/* R9b. The tool's code has all ended here; this writes as the tool could have (the jail's
 * write root), once, with O_EXCL and O_NOFOLLOW. */
static void save_source(const struct proto_run_spec *spec)
{
        if (spec->write_roots.n < 1)
                return;
        int dfd = open(spec->write_roots.items[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return; /* nothing written there, then */
        int probe = dup(dfd);
        DIR *d = probe >= 0 ? fdopendir(probe) : NULL;
        bool any = false;
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        any = true;
        if (d)
                (void)closedir(d);
        else if (probe >= 0)
                (void)close(probe);
        if (!any) {
                (void)close(dfd);
                return; /* no artifact: not a deliverable, nothing to save */
        }
        char msg[256];
        int fd = openat(dfd, POL_SOURCE_ARTIFACT, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        struct anvil_err err = ANVIL_ERR_INIT;
        if (fd < 0) {
                snprintf(msg, sizeof(msg), "the source was not saved as artifacts/%s: %s", POL_SOURCE_ARTIFACT,
                         errno == EEXIST ? "the tool wrote a file of that name itself" : strerror(errno));
                send_event("source_not_saved", NULL, msg, 0, NULL);
        } else if (fd_write_all(fd, spec->source, strlen(spec->source), &err) < 0) {
                (void)unlinkat(dfd, POL_SOURCE_ARTIFACT, 0);
                snprintf(msg, sizeof(msg), "the source was not saved as artifacts/%s: %s", POL_SOURCE_ARTIFACT,
                         err.msg);
                send_event("source_not_saved", NULL, msg, 0, NULL);
        } else {
                snprintf(msg, sizeof(msg), "the source saved as artifacts/%s", POL_SOURCE_ARTIFACT);
                send_event("source_saved", NULL, msg, 0, NULL);
        }
        if (fd >= 0)
                (void)close(fd);
        (void)close(dfd);
}

/* R1 (and R6w's second half). */
static int read_spec(struct proto_run_spec *spec)
{
        struct proto_reader r;
        struct proto_msg m;
        struct anvil_err err = ANVIL_ERR_INIT;
        proto_reader_init(&r, PROTO_FRAME_MAX);
        int k = proto_read_msg(JAIL_FD_SPEC, &r, &m, &err);
        proto_reader_free(&r);
        if (k <= 0) {
                fprintf(stderr, "anvil-py: cannot read the run spec: %s\n", k == 0 ? "no input" : err.msg);
                return -1;
        }
        if (m.type != PROTO_RUN_SPEC) {
                fprintf(stderr, "anvil-py: expected a run_spec, got %s\n", proto_type_name(m.type));
                proto_msg_free(&m);
                return -1;
        }
        *spec = m.u.run_spec; /* ownership moves to the caller */
        return 0;
}

/* Once the last spec is read, fd 0 is /dev/null. */
static int read_spec_done(void)
{
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, JAIL_FD_SPEC) < 0) {
                perror("anvil-py: cannot reopen stdin on /dev/null");
                return -1;
        }
        (void)close(null);
        return 0;
}

static int start_python(void)
{
        /* UTF-8 mode (python3 -X utf8): the jail's locale is C.UTF-8, but an isolated
         * interpreter does not read it and would print ASCII; a tool's print('é') and
         * open(..., 'w') default to UTF-8, as python3 -I does under C.UTF-8. */
        PyPreConfig preconfig;
        PyPreConfig_InitIsolatedConfig(&preconfig);
        preconfig.utf8_mode = 1;
        PyStatus pst = Py_PreInitialize(&preconfig);
        if (PyStatus_Exception(pst)) {
                fprintf(stderr, "anvil-py: cannot pre-initialize the interpreter: %s\n",
                        pst.err_msg ? pst.err_msg : "?");
                return -1;
        }
        PyConfig config;
        PyConfig_InitIsolatedConfig(&config);
        config.write_bytecode = 0;
        config.parse_argv = 0;
        /* As python3 does (the isolated config turns it off): SIGPIPE and SIGXFSZ ignored, so
         * a write past RLIMIT_FSIZE or to a closed pipe is an OSError the tool can handle,
         * and SIGINT is KeyboardInterrupt. */
        config.install_signal_handlers = 1;
        /* Unbuffered stdout and stderr (python3 -u): what a tool printed before it was killed
         * (timeout, memory) is in its result, not lost in a buffer. */
        config.buffered_stdio = 0;
        config.site_import = 1; /* Debian's site adds /usr/lib/python3/dist-packages */
        PyStatus st = PyConfig_SetString(&config, &config.program_name, L"/usr/bin/python3");
        if (!PyStatus_Exception(st))
                st = PyConfig_SetString(&config, &config.home, L"/usr");
        if (!PyStatus_Exception(st)) {
                wchar_t *argv[] = { (wchar_t *)L"" TOOL_NAME };
                st = PyConfig_SetArgv(&config, 1, argv);
        }
        if (!PyStatus_Exception(st))
                st = Py_InitializeFromConfig(&config);
        PyConfig_Clear(&config);
        if (PyStatus_Exception(st)) {
                fprintf(stderr, "anvil-py: cannot start the interpreter: %s\n", st.err_msg ? st.err_msg : "?");
                return -1;
        }
        return 0;
}

/* R6a: sys.argv is [TOOL_NAME, *run_request.args], set here, under every layer, rather than
 * in the start-up's config (R4), which reads no byte of the request's. Each argument is a
 * string the decoder held to UTF-8 without NUL, and the supervisor to the bounds
 * (pol_args_check); none is the interpreter's to parse. */
static int set_argv(const struct proto_strv *args)
{
        PyObject *argv = PyList_New((Py_ssize_t)args->n + 1);
        if (!argv)
                return -1;
        PyObject *name = PyUnicode_FromString(TOOL_NAME);
        if (!name) {
                Py_DECREF(argv);
                return -1;
        }
        PyList_SET_ITEM(argv, 0, name);
        for (size_t i = 0; i < args->n; i++) {
                PyObject *a = PyUnicode_DecodeUTF8(args->items[i], (Py_ssize_t)strlen(args->items[i]), "strict");
                if (!a) {
                        Py_DECREF(argv);
                        return -1;
                }
                PyList_SET_ITEM(argv, (Py_ssize_t)i + 1, a);
        }
        int r = PySys_SetObject("argv", argv);
        Py_DECREF(argv);
        return r;
}

/* The innermost line of the traceback that is in the tool's own code. */
static long tool_line(PyObject *tb)
{
        long line = 0;
        for (PyObject *t = tb; t && t != Py_None;) {
                PyObject *frame = PyObject_GetAttrString(t, "tb_frame");
                PyObject *lineno = PyObject_GetAttrString(t, "tb_lineno");
                if (frame && lineno) {
                        PyCodeObject *code = PyFrame_GetCode((PyFrameObject *)frame);
                        PyObject *fname = code ? PyObject_GetAttrString((PyObject *)code, "co_filename") : NULL;
                        const char *fn = fname ? PyUnicode_AsUTF8(fname) : NULL;
                        if (fn && strcmp(fn, TOOL_NAME) == 0)
                                line = PyLong_AsLong(lineno);
                        Py_XDECREF(fname);
                        Py_XDECREF(code);
                }
                Py_XDECREF(frame);
                Py_XDECREF(lineno);
                PyObject *next = PyObject_GetAttrString(t, "tb_next");
                if (t != tb)
                        Py_DECREF(t);
                t = next;
                if (!t)
                        break;
        }
        PyErr_Clear();
        return line;
}

/* The pending exception, normalized, with its traceback attached (Python 3.11 API). */
static PyObject *take_exception(void)
{
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb && value)
                PyException_SetTraceback(value, tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        if (!value) {
                value = Py_None;
                Py_INCREF(value);
        }
        return value;
}

/* The tool ended on a refusal: anvil.SandboxBlocked itself, or an exception a library raised
 * while handling one (urllib turns the refusal of a socket call into URLError, with the
 * refusal as its __context__, or __cause__ with `raise ... from`). The links are walked
 * as CPython stores them, bounded: a chain the tool made into a loop ends the walk. */
static bool ends_on_refusal(PyObject *exc)
{
        if (!R.sandbox_blocked)
                return false;
        PyObject *e = exc;
        for (int i = 0; e && i < 32; i++) {
                if (PyObject_TypeCheck(e, (PyTypeObject *)R.sandbox_blocked))
                        return true;
                PyObject *next = ((PyBaseExceptionObject *)e)->cause; /* borrowed */
                if (!next || !PyExceptionInstance_Check(next))
                        next = ((PyBaseExceptionObject *)e)->context;
                e = next && PyExceptionInstance_Check(next) ? next : NULL;
        }
        return false;
}

/* Reports the pending exception (R9), prints it as Python would, returns the exit code. */
static int report_exception(void)
{
        if (PyErr_ExceptionMatches(PyExc_SystemExit)) {
                /* sys.exit(n): Python's own rules for the exit code, and no "exception" event. */
                PyObject *exc = take_exception();
                PyObject *code = PyObject_GetAttrString(exc, "code");
                int rc = 0;
                if (code && PyLong_Check(code))
                        rc = (int)PyLong_AsLong(code);
                else if (code && code != Py_None) {
                        PyObject_Print(code, stderr, Py_PRINT_RAW);
                        fputc('\n', stderr);
                        rc = 1;
                }
                Py_XDECREF(code);
                Py_DECREF(exc);
                PyErr_Clear();
                return rc;
        }
        PyObject *exc = take_exception();
        if (ends_on_refusal(exc))
                R.stopped_by_refusal = true;
        PyObject *tb = PyException_GetTraceback(exc);
        PyObject *type_name = PyObject_GetAttrString((PyObject *)Py_TYPE(exc), "__name__");
        PyObject *tbmod = PyImport_ImportModule("traceback");
        PyObject *lines = tbmod ? PyObject_CallMethod(tbmod, "format_exception", "O", exc) : NULL;
        PyObject *only = tbmod ? PyObject_CallMethod(tbmod, "format_exception_only", "O", exc) : NULL;
        PyObject *empty = PyUnicode_FromString("");
        PyObject *text = (lines && empty) ? PyUnicode_Join(empty, lines) : NULL;
        PyObject *msg = (only && empty) ? PyUnicode_Join(empty, only) : NULL;
        PyErr_Clear();
        const char *ttext = text ? PyUnicode_AsUTF8(text) : NULL;
        const char *tmsg = msg ? PyUnicode_AsUTF8(msg) : NULL;
        PyErr_Clear();
        char *m = tmsg ? strdup(tmsg) : NULL;
        if (m && *m && m[strlen(m) - 1] == '\n')
                m[strlen(m) - 1] = 0; /* "KeyError: 'x'" */
        const char *op = type_name ? PyUnicode_AsUTF8(type_name) : "exception";
        PyErr_Clear();
        send_event("exception", op, m ? m : "exception", tool_line(tb), ttext);
        if (ttext)
                fputs(ttext, stderr);
        free(m);
        Py_XDECREF(text);
        Py_XDECREF(msg);
        Py_XDECREF(empty);
        Py_XDECREF(lines);
        Py_XDECREF(only);
        Py_XDECREF(tbmod);
        Py_XDECREF(type_name);
        Py_XDECREF(tb);
        Py_DECREF(exc);
        return 1;
}

static int run_tool(const char *source)
{
        PyObject *main_mod = PyImport_AddModule("__main__"); /* borrowed */
        if (!main_mod)
                return report_exception();
        PyObject *globals = PyModule_GetDict(main_mod); /* borrowed */
        PyObject *code = Py_CompileString(source, TOOL_NAME, Py_file_input);
        if (!code)
                return report_exception();
        /* The source in linecache, as for any script: tracebacks a tool formats and
         * inspect.getsource see its lines. */
        PyObject *linecache = PyImport_ImportModule("linecache");
        PyObject *cache = linecache ? PyObject_GetAttrString(linecache, "cache") : NULL;
        PyObject *lines = PyUnicode_FromString(source);
        PyObject *split = lines ? PyObject_CallMethod(lines, "splitlines", "O", Py_True) : NULL;
        PyObject *entry = split ? Py_BuildValue("(nOOs)", (Py_ssize_t)strlen(source), Py_None, split, TOOL_NAME) : NULL;
        if (!cache || !entry || PyDict_SetItemString(cache, TOOL_NAME, entry) < 0)
                PyErr_Clear(); /* only tracebacks lose their lines */
        Py_XDECREF(entry);
        Py_XDECREF(split);
        Py_XDECREF(lines);
        Py_XDECREF(cache);
        Py_XDECREF(linecache);
        PyObject *res = PyEval_EvalCode(code, globals, globals);
        Py_DECREF(code);
        if (!res)
                return report_exception();
        Py_DECREF(res);
        return 0;
}

/* R4: pre-warm. pandas asks platform.uname() at import, and platform runs `uname -p` for the
 * processor; platform.architecture() runs `file -b` on the interpreter: processes the jail
 * refuses. The supervisor ran both once, outside (the spec's platform_processor and
 * platform_file): the processor is put where platform caches it, and platform's
 * _syscmd_file is replaced by one that answers for the interpreter with what `file` said
 * and gives the default for anything else (as platform does when `file` fails). */
static char *platform_file;
static char python_real[PATH_MAX];

static PyObject *syscmd_file(PyObject *self, PyObject *args, PyObject *kwargs)
{
        (void)self;
        static char *kw[] = { "target", "default", NULL };
        PyObject *target, *deflt = NULL;
        if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:_syscmd_file", kw, &target, &deflt))
                return NULL;
        PyObject *path = PyOS_FSPath(target);
        if (!path)
                return NULL;
        PyObject *bytes = NULL;
        if (!PyUnicode_FSConverter(path, &bytes)) {
                Py_DECREF(path);
                return NULL;
        }
        Py_DECREF(path);
        char real[PATH_MAX];
        bool interpreter = python_real[0] && platform_file[0] && realpath(PyBytes_AS_STRING(bytes), real) &&
                           strcmp(real, python_real) == 0;
        Py_DECREF(bytes);
        if (interpreter)
                return PyUnicode_DecodeLatin1(platform_file, (Py_ssize_t)strlen(platform_file), NULL);
        if (deflt)
                return Py_NewRef(deflt);
        return PyUnicode_FromString("");
}

static PyMethodDef syscmd_file_def = { "_syscmd_file", (PyCFunction)(void (*)(void))syscmd_file,
                                       METH_VARARGS | METH_KEYWORDS,
                                       "`file -b` of the interpreter, run outside the jail by Anvil" };

static void prewarm_platform(const struct proto_run_spec *spec)
{
        PyObject *platform = PyImport_ImportModule("platform");
        if (!platform) {
                PyErr_Print();
                return;
        }
        if (spec->platform_processor) {
                PyObject *u = PyObject_CallMethod(platform, "uname", NULL);
                PyObject *d = u ? PyObject_GenericGetDict(u, NULL) : NULL;
                PyObject *v = PyUnicode_FromString(spec->platform_processor);
                if (!d || !v || PyDict_SetItemString(d, "processor", v) < 0)
                        PyErr_Print(); /* the run goes on; `uname -p` will then be refused */
                Py_XDECREF(v);
                Py_XDECREF(d);
                Py_XDECREF(u);
        }
        if (spec->platform_file) {
                platform_file = spec->platform_file;
                if (!realpath("/usr/bin/python3", python_real))
                        python_real[0] = 0;
                PyObject *f = PyCFunction_New(&syscmd_file_def, NULL);
                if (!f || PyObject_SetAttrString(platform, "_syscmd_file", f) < 0)
                        PyErr_Print();
                Py_XDECREF(f);
        }
        Py_DECREF(platform);
}

/* R6: what the spec says the kernel enforces must be seen enforced before the first byte of
 * the request's is read; if not, the run is refused on the record and nothing of the tool
 * runs. The check is a listing of "/" that Landlock refuses (jail/landlock.c). */
static bool landlock_refused(const struct proto_run_spec *spec)
{
        char evidence[160], msg[256];
        if (spec->landlock_abi == 0 || jail_landlock_verify((int)spec->landlock_abi, evidence, sizeof(evidence)) == 0)
                return false;
        POL_REASON(msg, sizeof(msg), REFUSED_NOT_IN_FORCE, "landlock", evidence);
        send_event("refused", "landlock", msg, 0, NULL);
        fprintf(stderr, "anvil-py: %s\n", msg);
        return true;
}

/* R6, fail closed: also with the Python layers off, which this does not depend on. 0 once
 * event "in_force" is sent, -1 once the refusal is. */
static int layers_in_force(const struct proto_run_spec *spec)
{
        if (landlock_refused(spec))
                return -1;
        char seen[256], layer[32], evidence[300], msg[512];
        if (inforce_kernel_layers(spec, seen, sizeof(seen), layer, sizeof(layer), evidence, sizeof(evidence)) < 0) {
                POL_REASON(msg, sizeof(msg), REFUSED_NOT_IN_FORCE, layer, evidence);
                send_event("refused", NULL, msg, 0, NULL);
                return -1;
        }
        char all[320];
        if (spec->landlock_abi)
                snprintf(all, sizeof(all), "landlock ABI %u, %s", (unsigned)spec->landlock_abi, seen);
        else
                snprintf(all, sizeof(all), "%s", seen);
        send_event("in_force", NULL, POL_REASON(msg, sizeof(msg), LAYERS_IN_FORCE, all), 0, NULL);
        return 0;
}

/* R6w: a warm jail's runner imports the data stack, under every kernel layer and before any
 * byte of a run's exists, then waits for the run's own half of the spec: source, variables,
 * args and save_source; the rest of the first half (roots, layers) stays. The audit hook is
 * not armed yet: the imports are Debian's files and our fixed list, as a cold run's imports
 * of the same modules are, and the hook is armed at R6c before the tool's first line. */
static const char *const warm_modules[] = { "numpy", "pandas", "matplotlib", "matplotlib.pyplot" };

static int warm_wait(struct proto_run_spec *spec)
{
        for (size_t i = 0; i < sizeof(warm_modules) / sizeof(warm_modules[0]); i++) {
                PyObject *m = PyImport_ImportModule(warm_modules[i]);
                if (!m) {
                        PyErr_Print();
                        fprintf(stderr, "anvil-py: warm: cannot import %s\n", warm_modules[i]);
                        return -1;
                }
                if (strcmp(warm_modules[i], "matplotlib") == 0) {
                        PyObject *r = PyObject_CallMethod(m, "use", "s", "Agg");
                        if (!r) {
                                PyErr_Print();
                                Py_DECREF(m);
                                return -1;
                        }
                        Py_DECREF(r);
                }
                Py_DECREF(m);
        }
        exit_warm_prepare();
        char msg[160];
        send_event("warm_ready", NULL, POL_REASON(msg, sizeof(msg), WARM_READY, "numpy, pandas, matplotlib (Agg)"), 0,
                   NULL);
        struct proto_run_spec run;
        if (read_spec(&run) < 0 || read_spec_done() < 0)
                return -1;
        free(spec->source);
        free(spec->variables);
        proto_strv_free(&spec->args);
        spec->source = run.source;
        spec->variables = run.variables;
        spec->args = run.args;
        spec->save_source = run.save_source;
        run.source = run.variables = NULL;
        memset(&run.args, 0, sizeof(run.args));
        struct proto_msg rest = { .type = PROTO_RUN_SPEC };
        rest.u.run_spec = run;
        proto_msg_free(&rest);
        return 0;
}

int main(void)
{
        R.t0 = now_ms();
        /* R1 */
        struct proto_run_spec spec;
        if (read_spec(&spec) < 0)
                return 125;
        if (!spec.warm && read_spec_done() < 0)
                return 125;
        if (runner_policy_init(&R, &spec) < 0) {
                fprintf(stderr, "anvil-py: the run spec's roots cannot be resolved\n");
                return 125;
        }
        /* R2 */
        if (prctl(PR_SET_DUMPABLE, 0) < 0) {
                perror("anvil-py: cannot clear the dumpable flag");
                return 125;
        }
        /* R3 */
        if (audit_install(&R) < 0) {
                fprintf(stderr, "anvil-py: cannot add the audit hook\n");
                return 125;
        }
        /* R4 */
        if (start_python() < 0)
                return 125;
        prewarm_platform(&spec);
        /* R5 */
        if (vars_init(&R) < 0 || exit_watch_freeze() < 0)
                return 125;
        /* R6: from here on, every layer the tier promises is in force. */
        if (layers_in_force(&spec) < 0)
                return 125;
        if (spec.test_no_python_layers) {
                /* A test build's supervisor asked for it, to show the kernel layers alone: said
                 * on the record, never silent. */
                send_event("layers_disabled", NULL, "test mode: the pre-check and the audit hook are off", 0, NULL);
        }
        /* R6w */
        if (spec.warm && warm_wait(&spec) < 0)
                return 125;
        /* R6a: the first of the request's bytes interpreted. */
        {
                char msg[512];
                int v = vars_bind(&R, spec.variables, msg, sizeof(msg));
                if (v == -1) {
                        send_event("refused", "variables", msg, 0, NULL);
                        fprintf(stderr, "anvil-py: %s\n", msg);
                }
                if (v < 0)
                        return 125;
                if (set_argv(&spec.args) < 0) {
                        PyErr_Print();
                        fprintf(stderr, "anvil-py: cannot set sys.argv\n");
                        return 125;
                }
        }
        if (!spec.test_no_python_layers) {
                /* R6b */
                int findings = precheck_run(&R, spec.source);
                if (findings < 0)
                        return 125;
                if (findings > 0) {
                        char msg[96];
                        snprintf(msg, sizeof(msg), "the pre-check refused the tool (%d finding%s); none of it ran",
                                 findings, findings == 1 ? "" : "s");
                        send_event("blocked", NULL, msg, 0, NULL);
                        send_event("finished", NULL, "tool finished with exit code 1", 0, NULL);
                        (void)fflush(NULL);
                        _exit(1); /* none of the tool ran: nothing of its to flush */
                }
                /* R6c */
                if (audit_arm(&R) < 0)
                        return 125;
        }
        pid_t self = getpid();
        /* R7 */
        send_event("started", NULL, "tool started", 0, NULL);
        /* R8, R9 */
        int rc = run_tool(spec.source);
        audit_tool_returned(&R); /* what runs from here with no frame, the tool registered */
        /* A process the tool forked returns here too: it finishes quietly, the run's events
         * are the first process's. */
        bool forked = getpid() != self;
        /* R9a, with the audit hook still armed: what runs of the tool's while its values are
         * encoded is judged as the tool's. */
        if (!forked)
                vars_collect(&R);
        /* R10: the fast end (exit.c): no Py_FinalizeEx, whose teardown of the data stack
         * cost ~120-200 ms; what the tool wrote is complete before the events below. */
        rc = exit_fast(rc, spec.test_break && strcmp(spec.test_break, "exit-flush") == 0);
        if (!forked) {
                audit_finish(&R);
                if (R.stopped_by_refusal)
                        send_event("blocked", NULL, "a refusal the tool did not catch ended it", 0, NULL);
                else if (rc == 0 && spec.save_source)
                        save_source(&spec); /* R9b */
                char msg[64];
                snprintf(msg, sizeof(msg), "tool finished with exit code %d", rc);
                send_event("finished", NULL, msg, 0, NULL);
        }
        _exit(rc);
}
