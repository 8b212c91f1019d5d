/* R10, the fast end (issue 16): what Py_FinalizeEx does that a tool's files depend on, and
 * none of what it does that they do not; then the caller sends its last events and _exit()s.
 *
 * Py_FinalizeEx of an interpreter that imported numpy, pandas and matplotlib costs ~120-200 ms
 * on this machine (tearing down every module, two full collections): a warm run's print(1)
 * paid it at its end, and so did a cold run that imported pandas. A jail serves one run and
 * is torn down by the supervisor; the process's memory needs no freeing. What must not be
 * lost is what the tool wrote, in Python's order (Python 3.11, pylifecycle.c):
 *
 *   E1  non-daemon threads joined: threading._shutdown(), as wait_for_thread_shutdown does
 *       (only if the tool imported threading);
 *   E2  atexit handlers run: atexit._run_exitfuncs(), as _PyAtExit_Call does (logging's
 *       shutdown, weakref.finalize, the tool's own);
 *   E3  sys.stdout and sys.stderr flushed, as flush_std_files does: a failing stdout flush
 *       makes the exit code 120, as python3's;
 *   E4  __main__'s globals cleared as finalize_modules clears a module (_PyModule_ClearDict):
 *       the tool's objects that only its globals held are freed in refcount order, so a
 *       wrapper closes before the file under it, and their __del__ run, as at Python's end;
 *   E5  every io object still open closed (what their dealloc at Python's end would do: close,
 *       so a GzipFile writes its trailer): those held elsewhere (a module, a closure, a cycle).
 *       Found in gc.get_objects(): every instance of a class deriving from _io._IOBase (each C
 *       io class, FileIO, BufferedWriter/Random/RWPair, TextIOWrapper, and every Python
 *       subclass of io.IOBase: GzipFile, BZ2File, LZMAFile, SpooledTemporaryFile...) is a GC
 *       type, tracked from its allocation until its dealloc, so every live one is in a
 *       generation's list, reachable or not; a duck-typed file (codecs' StreamWriter,
 *       tempfile's wrapper) buffers nothing of its own and wraps one that is found. Not in
 *       those lists: the permanent generation (gc.freeze). A warm jail freezes the data
 *       stack's objects after its imports (exit_warm_prepare), so the scan sees only the
 *       run's objects, and keeps the io objects open at that moment to close with the rest; a
 *       tool that called gc.freeze itself (exit_watch_freeze, R5, puts a watch in its place;
 *       the freeze count is no sign, as frozen objects that die leave it) gets gc.unfreeze()
 *       and a scan of everything; one that unfroze put them back where the scan looks. Outermost first: each round closes the open ones no other open
 *       one refers to (directly or through its __dict__), so a TextIOWrapper flushes into its
 *       buffer before that is closed; a cycle of them is closed together. The interpreter's
 *       own standard streams (sys.__stdout__ etc., their buffers and raw files) are flushed,
 *       not closed: the runner writes to stderr after this;
 *   E6  C stdio flushed: fflush(NULL), for an extension's FILE *.
 * Not done, as a jail has no use for it: freeing modules, the final collections, the
 * interpreter's state. An object with a __del__ held only by a module other than __main__ or
 * by a cycle is not finalized; Python's own end does not promise that either.
 *
 * All of it runs with the audit hook armed: the tool's atexit handlers, its __del__ and its
 * close() methods are the tool's code and judged as such. gc.get_objects and gc.get_referents,
 * called from C with no Python frame, are the runtime's (audit_runtime): the originals, taken
 * before the tool's first line, which run nothing of the tool's; a close() or a `closed` the
 * tool defined is not wrapped so, and is judged as the tool's. */
#include "runner/runner.h"

#include <stdio.h>

static PyObject *warm_open;      /* the io objects open when the warm jail froze its imports */
static PyObject *gc_freeze_orig; /* gc.freeze itself; the tool's gc.freeze is freeze_watch */
static bool tool_froze;          /* the tool called gc.freeze: its objects may be hidden */
/* gc.get_objects and gc.get_referents as they were before the tool's first line (R5): the end
 * calls these, never what the tool may have put in the gc module's place, as the runtime's
 * (audit_runtime) */
static PyObject *gc_get_objects_orig, *gc_get_referents_orig;

static void gc_originals(PyObject *gc)
{
        if (!gc_get_objects_orig)
                gc_get_objects_orig = PyObject_GetAttrString(gc, "get_objects");
        if (!gc_get_referents_orig)
                gc_get_referents_orig = PyObject_GetAttrString(gc, "get_referents");
        PyErr_Clear();
}

/* gc.get_objects(), the original, with its audit event the runtime's: it runs nothing of the
 * tool's. */
static PyObject *gc_objects(void)
{
        if (!gc_get_objects_orig)
                return NULL;
        audit_runtime(true);
        PyObject *objs = PyObject_CallNoArgs(gc_get_objects_orig);
        audit_runtime(false);
        return objs;
}

/* gc.freeze as the tool sees it: said here, then done. The tool cannot reach the original
 * (gc.get_referrers and gc.get_referents are refused to it by the audit hook). */
static PyObject *freeze_watch(PyObject *self, PyObject *args)
{
        (void)self;
        (void)args;
        tool_froze = true;
        return gc_freeze_orig ? PyObject_CallNoArgs(gc_freeze_orig) : Py_NewRef(Py_None);
}

static PyMethodDef freeze_def = { "freeze", freeze_watch, METH_NOARGS,
                                  "gc.freeze(), watched by Anvil's runner: its end then scans every object" };

int exit_watch_freeze(void)
{
        PyObject *gc = PyImport_ImportModule("gc");
        PyObject *w = PyCFunction_New(&freeze_def, NULL);
        gc_freeze_orig = gc ? PyObject_GetAttrString(gc, "freeze") : NULL;
        if (gc)
                gc_originals(gc);
        int r = gc && w && gc_freeze_orig && PyObject_SetAttrString(gc, "freeze", w) == 0 ? 0 : -1;
        Py_XDECREF(w);
        Py_XDECREF(gc);
        if (r < 0)
                PyErr_Print();
        return r;
}

static PyObject *io_base(void)
{
        PyObject *io = PyImport_ImportModule("_io");
        PyObject *base = io ? PyObject_GetAttrString(io, "_IOBase") : NULL;
        Py_XDECREF(io);
        if (base && !PyType_Check(base))
                Py_CLEAR(base);
        return base;
}

/* 1 if o is an io object that says it is open, 0 if not (or it cannot say: a detached
 * wrapper raises). */
static int io_open(PyObject *o)
{
        PyObject *c = PyObject_GetAttrString(o, "closed");
        int r = c ? PyObject_Not(c) : 0;
        Py_XDECREF(c);
        if (r < 0 || !c)
                PyErr_Clear();
        return r > 0;
}

static PyObject *key(PyObject *o)
{
        return PyLong_FromVoidPtr(o);
}

/* The interpreter's standard streams and what is under them: flushed, never closed. */
static PyObject *std_streams(void)
{
        PyObject *keep = PyDict_New();
        static const char *const names[] = { "__stdin__", "__stdout__", "__stderr__" };
        for (size_t i = 0; keep && i < sizeof(names) / sizeof(names[0]); i++) {
                PyObject *o = PySys_GetObject(names[i]); /* borrowed */
                Py_XINCREF(o);
                for (int depth = 0; o && o != Py_None && depth < 3; depth++) {
                        PyObject *k = key(o);
                        if (k)
                                (void)PyDict_SetItem(keep, k, o);
                        Py_XDECREF(k);
                        PyObject *next = PyObject_GetAttrString(o, depth == 0 ? "buffer" : "raw");
                        Py_DECREF(o);
                        o = next;
                }
                Py_XDECREF(o);
                PyErr_Clear();
        }
        return keep;
}

/* Marks in `inner` every open candidate that o refers to, directly or through a dict. */
static void mark_inner(PyObject *getref, PyObject *o, PyObject *open, PyObject *inner)
{
        audit_runtime(true); /* the original gc.get_referents runs nothing of the tool's */
        PyObject *refs = PyObject_CallOneArg(getref, o);
        audit_runtime(false);
        if (!refs || !PyList_Check(refs)) {
                Py_XDECREF(refs);
                PyErr_Clear();
                return;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(refs); i++) {
                PyObject *r = PyList_GET_ITEM(refs, i);
                PyObject *vals = PyDict_Check(r) ? PyDict_Values(r) : NULL;
                Py_ssize_t n = vals ? PyList_GET_SIZE(vals) : 1;
                for (Py_ssize_t j = 0; j < n; j++) {
                        PyObject *v = vals ? PyList_GET_ITEM(vals, j) : r;
                        if (v == o)
                                continue;
                        PyObject *k = key(v);
                        if (k && PyDict_Contains(open, k) == 1)
                                (void)PyDict_SetItem(inner, k, Py_True);
                        Py_XDECREF(k);
                }
                Py_XDECREF(vals);
        }
        Py_DECREF(refs);
        PyErr_Clear();
}

/* E5: `open` maps key -> object; closes them outermost first. */
static void close_all(PyObject *gc, PyObject *open)
{
        (void)gc;
        PyObject *getref = Py_XNewRef(gc_get_referents_orig);
        for (int round = 0; getref && PyDict_GET_SIZE(open) > 0 && round < 64; round++) {
                PyObject *inner = PyDict_New();
                PyObject *items = PyDict_Items(open);
                if (!inner || !items) {
                        Py_XDECREF(inner);
                        Py_XDECREF(items);
                        break;
                }
                for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++)
                        mark_inner(getref, PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 1), open, inner);
                bool cycle = PyDict_GET_SIZE(inner) == PyDict_GET_SIZE(open);
                for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
                        PyObject *k = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0);
                        PyObject *o = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 1);
                        if (!cycle && PyDict_Contains(inner, k) == 1)
                                continue;
                        PyObject *r = PyObject_CallMethod(o, "close", NULL);
                        if (!r)
                                PyErr_WriteUnraisable(o); /* "Exception ignored in", as at Python's end */
                        Py_XDECREF(r);
                        (void)PyDict_DelItem(open, k);
                }
                Py_DECREF(items);
                Py_DECREF(inner);
                /* what closing one did to the others (a wrapper closes its buffer) */
                PyObject *left = PyDict_Items(open);
                for (Py_ssize_t i = 0; left && i < PyList_GET_SIZE(left); i++)
                        if (!io_open(PyTuple_GET_ITEM(PyList_GET_ITEM(left, i), 1)))
                                (void)PyDict_DelItem(open, PyTuple_GET_ITEM(PyList_GET_ITEM(left, i), 0));
                Py_XDECREF(left);
                PyErr_Clear();
        }
        Py_XDECREF(getref);
        PyErr_Clear();
}

/* Adds to `open` each io object of `objs` (a list) that is open and not a standard stream. */
static void collect_open(PyObject *objs, PyTypeObject *base, PyObject *std, PyObject *open)
{
        for (Py_ssize_t i = 0; objs && i < PyList_GET_SIZE(objs); i++) {
                PyObject *o = PyList_GET_ITEM(objs, i);
                if (!PyObject_TypeCheck(o, base))
                        continue;
                PyObject *k = key(o);
                if (k && PyDict_Contains(std, k) != 1 && io_open(o))
                        (void)PyDict_SetItem(open, k, o);
                Py_XDECREF(k);
        }
        PyErr_Clear();
}

void exit_warm_prepare(void)
{
        PyObject *gc = PyImport_ImportModule("gc");
        PyObject *base = io_base();
        PyObject *std = std_streams();
        PyObject *r = gc ? PyObject_CallMethod(gc, "collect", NULL) : NULL;
        Py_XDECREF(r);
        if (gc)
                gc_originals(gc); /* before the tool's first line (R6w) */
        PyObject *objs = gc ? gc_objects() : NULL;
        warm_open = PyDict_New();
        if (objs && base && std && warm_open)
                collect_open(objs, (PyTypeObject *)base, std, warm_open);
        Py_XDECREF(objs);
        r = objs && gc_freeze_orig ? PyObject_CallNoArgs(gc_freeze_orig) : NULL;
        Py_XDECREF(r);
        Py_XDECREF(std);
        Py_XDECREF(base);
        Py_XDECREF(gc);
        PyErr_Clear();
}

/* E3: 0, or -1 if sys.stdout's flush failed (reported as Python does). */
static int flush_std(void)
{
        int rc = 0;
        static const char *const names[] = { "stdout", "stderr" };
        for (int i = 0; i < 2; i++) {
                PyObject *f = PySys_GetObject(names[i]); /* borrowed */
                if (!f || f == Py_None)
                        continue;
                Py_INCREF(f);
                if (io_open(f)) {
                        PyObject *r = PyObject_CallMethod(f, "flush", NULL);
                        if (!r) {
                                PyErr_WriteUnraisable(f);
                                if (i == 0)
                                        rc = -1;
                        }
                        Py_XDECREF(r);
                }
                Py_DECREF(f);
        }
        PyErr_Clear();
        return rc;
}

int exit_fast(int rc, bool skip)
{
        if (skip) {
                /* test builds (test_break "exit-flush"): the control of the tests that the
                 * tool's files are complete; nothing of E1-E6 */
                return rc;
        }
        /* E1 */
        PyObject *name = PyUnicode_FromString("threading");
        PyObject *threading = name ? PyImport_GetModule(name) : NULL; /* only if imported */
        Py_XDECREF(name);
        if (threading) {
                PyObject *r = PyObject_CallMethod(threading, "_shutdown", NULL);
                if (!r)
                        PyErr_WriteUnraisable(threading);
                Py_XDECREF(r);
                Py_DECREF(threading);
        }
        PyErr_Clear();
        /* E2 */
        PyObject *atexit = PyImport_ImportModule("atexit");
        PyObject *r = atexit ? PyObject_CallMethod(atexit, "_run_exitfuncs", NULL) : NULL;
        Py_XDECREF(r);
        Py_XDECREF(atexit);
        PyErr_Clear();
        /* E3 */
        if (flush_std() < 0 && rc == 0)
                rc = 120;
        /* E4 */
        PyObject *main_mod = PyImport_AddModule("__main__"); /* borrowed */
        PyObject *globals = main_mod ? PyModule_GetDict(main_mod) : NULL;
        if (globals)
                _PyModule_ClearDict(globals);
        PyErr_Clear();
        /* E5 */
        PyObject *gc = PyImport_ImportModule("gc");
        PyObject *base = io_base();
        PyObject *std = std_streams();
        PyObject *open = PyDict_New();
        if (gc && base && std && open) {
                if (tool_froze) {
                        /* the tool froze objects itself: scan them all */
                        PyObject *u = PyObject_CallMethod(gc, "unfreeze", NULL);
                        Py_XDECREF(u);
                }
                PyObject *objs = gc_objects();
                if (!objs || !PyList_Check(objs))
                        PyErr_Clear();
                else
                        collect_open(objs, (PyTypeObject *)base, std, open);
                Py_XDECREF(objs);
                if (warm_open) {
                        PyObject *vals = PyDict_Values(warm_open);
                        collect_open(vals, (PyTypeObject *)base, std, open);
                        Py_XDECREF(vals);
                }
                close_all(gc, open);
        }
        Py_XDECREF(open);
        Py_XDECREF(std);
        Py_XDECREF(base);
        Py_XDECREF(gc);
        PyErr_Clear();
        /* E3 again, as Python flushes after the modules' end too */
        if (flush_std() < 0 && rc == 0)
                rc = 120;
        /* E6 */
        (void)fflush(NULL);
        return rc;
}
