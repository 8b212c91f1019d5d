/* Unit tests for policy/rules.c and policy/capabilities.c: what a tool may import and call, which
 * attributes reach the interpreter, which calls take paths and how, open modes and os.open
 * flags, and capabilities. Every rule both ways: refused with its why, and the legitimate
 * neighbours (same prefix, same module, a name one character off) allowed (issue 3: a refusal
 * of legitimate code is a bug as serious as a missed escape). Paths, roots and the audit table
 * are in test_rules_paths.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "lib/cleanup.h"
#include "policy/rules.h"

#define NONE POL_WHY_NONE

struct name_case {
        const char *name;
        enum pol_why why; /* NONE: allowed */
};

/* Fails naming the case: which name, what it got, what was wanted. */
static void check_why(const char *what, const char *name, enum pol_why got, enum pol_why want)
{
        if (got != want)
                fail_msg("%s(\"%s\"): got %s (%d), want %s (%d)", what, name, pol_why_text(got), (int)got,
                         pol_why_text(want), (int)want);
}

static const struct pol_caps no_caps = { { false } };
static const struct pol_caps net_caps = { { [POL_CAP_NETWORK] = true } };
static const struct pol_caps all_caps = { { [POL_CAP_NETWORK] = true, [POL_CAP_PROCESS] = true } };

/* ---- pol_module ---- */

static const struct name_case module_cases[] = {
        /* network: the modules whose purpose is to reach another host */
        { "socket", POL_WHY_NETWORK },
        { "_socket", POL_WHY_NETWORK },
        { "ssl", POL_WHY_NETWORK },
        { "_ssl", POL_WHY_NETWORK },
        { "http.client", POL_WHY_NETWORK },
        { "http.server", POL_WHY_NETWORK },
        { "urllib.request", POL_WHY_NETWORK },
        { "ftplib", POL_WHY_NETWORK },
        { "smtplib", POL_WHY_NETWORK },
        { "poplib", POL_WHY_NETWORK },
        { "imaplib", POL_WHY_NETWORK },
        { "telnetlib", POL_WHY_NETWORK },
        { "nntplib", POL_WHY_NETWORK },
        { "requests", POL_WHY_NETWORK },
        { "requests.adapters", POL_WHY_NETWORK },
        { "urllib3", POL_WHY_NETWORK },
        { "urllib3.util.retry", POL_WHY_NETWORK },
        { "httpx", POL_WHY_NETWORK },
        { "aiohttp", POL_WHY_NETWORK },
        { "paramiko", POL_WHY_NETWORK },
        { "websocket", POL_WHY_NETWORK },
        { "websockets", POL_WHY_NETWORK },
        { "socketserver", POL_WHY_NETWORK },
        { "xmlrpc.client", POL_WHY_NETWORK },
        { "xmlrpc.server", POL_WHY_NETWORK },
        /* process creation */
        { "subprocess", POL_WHY_PROCESS },
        { "_posixsubprocess", POL_WHY_PROCESS },

        { "pty", POL_WHY_PROCESS },
        /* native code */
        { "ctypes", POL_WHY_NATIVE },
        { "ctypes.util", POL_WHY_NATIVE },
        { "ctypes.wintypes", POL_WHY_NATIVE },
        { "_ctypes", POL_WHY_NATIVE },
        { "cffi", POL_WHY_NATIVE },
        { "_cffi_backend", POL_WHY_NATIVE },
        /* allowed: parents of a banned module, the data stack, the standard library */
        { "http", NONE },
        { "http.cookies", NONE },
        { "urllib", NONE },
        { "urllib.parse", NONE },
        { "urllib.error", NONE },
        { "xmlrpc", NONE },
        { "json", NONE },
        { "multiprocessing", NONE }, /* its Process and Pool are refused as calls */
        { "multiprocessing.pool", NONE },
        { "csv", NONE },
        { "re", NONE },
        { "pandas", NONE },
        { "numpy", NONE },
        { "numpy.ctypeslib", NONE }, /* a numpy module; its ctypes import is a library's */
        { "matplotlib", NONE },
        { "matplotlib.pyplot", NONE },
        { "inspect", NONE },
        { "pickle", NONE },
        { "marshal", NONE },
        { "asyncio", NONE },
        { "sqlite3", NONE },
        { "os", NONE },
        { "os.path", NONE },
        { "sys", NONE },
        { "logging", NONE },
        { "threading", NONE },
        { "concurrent.futures", NONE },
        { "pathlib", NONE },
        { "shutil", NONE },
        { "email", NONE },
        { "ipaddress", NONE },
        /* a banned name as a prefix, not at a dot boundary */
        { "socketx", NONE },
        { "sockets", NONE },
        { "ssl_utils", NONE },
        { "subprocessing", NONE },
        { "ptyprocess_x", NONE },
        { "ctypesgen", NONE },
        { "requests_mock", NONE },
        { "http.clients", NONE },
        { "urllib.requests", NONE },
        { "", NONE },
};

static void test_module(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(module_cases); i++) {
                const struct name_case *c = &module_cases[i];
                check_why("pol_module", c->name, pol_module(c->name, NULL), c->why);
                check_why("pol_module(no caps)", c->name, pol_module(c->name, &no_caps), c->why);
        }
}

/* A granted network capability lifts the network rules and nothing else. */
static void test_module_caps(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(module_cases); i++) {
                const struct name_case *c = &module_cases[i];
                enum pol_why net = c->why == POL_WHY_NETWORK ? NONE : c->why;
                check_why("pol_module(network)", c->name, pol_module(c->name, &net_caps), net);
                /* process is never grantable; a caps struct that says so anyway changes nothing */
                check_why("pol_module(all)", c->name, pol_module(c->name, &all_caps), net);
        }
        check_why("pol_module(network)", "socket", pol_module("socket", &net_caps), NONE);
        check_why("pol_module(network)", "subprocess", pol_module("subprocess", &net_caps), POL_WHY_PROCESS);
        check_why("pol_module(network)", "ctypes", pol_module("ctypes", &net_caps), POL_WHY_NATIVE);
}

/* ---- pol_call ---- */

static const struct name_case call_cases[] = {
        /* dynamic code */
        { "eval", POL_WHY_DYNAMIC },
        { "exec", POL_WHY_DYNAMIC },
        { "compile", POL_WHY_DYNAMIC },
        { "__import__", POL_WHY_DYNAMIC },
        { "builtins.eval", POL_WHY_DYNAMIC },
        { "builtins.exec", POL_WHY_DYNAMIC },
        { "builtins.compile", POL_WHY_DYNAMIC },
        { "builtins.__import__", POL_WHY_DYNAMIC },
        { "marshal.loads", POL_WHY_DYNAMIC },
        { "marshal.load", POL_WHY_DYNAMIC },
        { "types.FunctionType", POL_WHY_DYNAMIC },
        { "types.CodeType", POL_WHY_DYNAMIC },
        /* process creation */
        { "os.fork", POL_WHY_PROCESS },
        { "os.forkpty", POL_WHY_PROCESS },
        { "os.system", POL_WHY_PROCESS },
        { "os.popen", POL_WHY_PROCESS },
        { "os.execl", POL_WHY_PROCESS },
        { "os.execle", POL_WHY_PROCESS },
        { "os.execlp", POL_WHY_PROCESS },
        { "os.execlpe", POL_WHY_PROCESS },
        { "os.execv", POL_WHY_PROCESS },
        { "os.execve", POL_WHY_PROCESS },
        { "os.execvp", POL_WHY_PROCESS },
        { "os.execvpe", POL_WHY_PROCESS },
        { "os.spawnl", POL_WHY_PROCESS },
        { "os.spawnle", POL_WHY_PROCESS },
        { "os.spawnlp", POL_WHY_PROCESS },
        { "os.spawnlpe", POL_WHY_PROCESS },
        { "os.spawnv", POL_WHY_PROCESS },
        { "os.spawnve", POL_WHY_PROCESS },
        { "os.spawnvp", POL_WHY_PROCESS },
        { "os.spawnvpe", POL_WHY_PROCESS },
        { "os.posix_spawn", POL_WHY_PROCESS },
        { "os.posix_spawnp", POL_WHY_PROCESS },
        { "os.register_at_fork", POL_WHY_PROCESS },
        { "subprocess.run", POL_WHY_PROCESS },
        { "subprocess.Popen", POL_WHY_PROCESS },
        { "subprocess.check_output", POL_WHY_PROCESS },
        { "multiprocessing.Process", POL_WHY_PROCESS },
        { "multiprocessing.Pool", POL_WHY_PROCESS },
        { "pty.spawn", POL_WHY_PROCESS },
        { "concurrent.futures.ProcessPoolExecutor", POL_WHY_PROCESS },
        /* signals */
        { "os.kill", POL_WHY_SIGNAL },
        { "os.killpg", POL_WHY_SIGNAL },
        { "signal.pthread_kill", POL_WHY_SIGNAL },
        { "signal.pidfd_send_signal", POL_WHY_SIGNAL },
        /* frames */
        { "sys._getframe", POL_WHY_INTROSPECTION },
        { "sys._current_frames", POL_WHY_INTROSPECTION },
        { "inspect.currentframe", POL_WHY_INTROSPECTION },
        { "inspect.stack", POL_WHY_INTROSPECTION },
        { "inspect.trace", POL_WHY_INTROSPECTION },
        { "inspect.getouterframes", POL_WHY_INTROSPECTION },
        { "inspect.getinnerframes", POL_WHY_INTROSPECTION },
        { "gc.get_referrers", POL_WHY_INTROSPECTION },
        { "gc.get_referents", POL_WHY_INTROSPECTION },
        { "gc.get_objects", POL_WHY_INTROSPECTION },
        /* network */
        { "socket.create_connection", POL_WHY_NETWORK },
        { "socket.socket", POL_WHY_NETWORK },
        { "urllib.request.urlopen", POL_WHY_NETWORK },
        { "urllib.request.urlretrieve", POL_WHY_NETWORK },
        { "http.client.HTTPSConnection", POL_WHY_NETWORK },
        { "asyncio.open_connection", POL_WHY_NETWORK },
        { "asyncio.start_server", POL_WHY_NETWORK },
        { "asyncio.open_unix_connection", POL_WHY_NETWORK },
        { "asyncio.start_unix_server", POL_WHY_NETWORK },
        /* native code */
        { "ctypes.CDLL", POL_WHY_NATIVE },
        { "ctypes.cdll.LoadLibrary", POL_WHY_NATIVE },
        /* allowed: builtins, the neighbours of each rule, the data stack */
        { "print", NONE },
        { "len", NONE },
        { "open", NONE }, /* a path rule, not a call rule */
        { "getattr", NONE },
        { "evaluate", NONE },
        { "execute", NONE },
        { "compiled", NONE },
        { "re.compile", NONE },
        { "builtins.print", NONE },
        { "os.path.join", NONE },
        { "os.getpid", NONE },
        { "os.cpu_count", NONE },
        { "os.listdir", NONE },
        { "os.environ.get", NONE },
        { "os.forkserver_x", NONE }, /* exact names: os.fork is not a prefix */
        { "os.fork_x", NONE },
        { "os.killer", NONE },
        { "os.exec", NONE },
        { "os.spawn", NONE },
        { "inspect.signature", NONE },
        { "inspect.getsource", NONE },
        { "inspect.isclass", NONE },
        { "inspect.stacks", NONE },
        { "sys.exit", NONE },
        { "sys._getframex", NONE },
        { "pickle.loads", NONE },
        { "pickle.load", NONE },
        { "marshal.dumps", NONE },
        { "json.loads", NONE },
        { "types.SimpleNamespace", NONE },
        { "concurrent.futures.ThreadPoolExecutor", NONE },
        { "concurrent.futures.as_completed", NONE },
        { "threading.Thread", NONE },
        { "asyncio.run", NONE },
        { "asyncio.gather", NONE },
        { "asyncio.sleep", NONE },
        { "signal.signal", NONE },
        { "gc.collect", NONE },
        { "urllib.parse.urlparse", NONE },
        { "pandas.read_csv", NONE },
        { "numpy.array", NONE },
        /* module prefixes only at a dot boundary */
        { "subprocessx.run", NONE },
        { "subprocess", NONE }, /* the bare name is not a call of the module's functions */
        { "socketx.connect", NONE },
        { "ptyx.spawn", NONE },
        { "ctypesx.CDLL", NONE },
        { "multiprocessingx.Process", NONE },
        { "multiprocessing.cpu_count", NONE },
        { "timeit.timeit", POL_WHY_DYNAMIC },
        { "cProfile.run", POL_WHY_DYNAMIC },
        { "code.interact", POL_WHY_DYNAMIC },
        { "runpy.run_path", POL_WHY_DYNAMIC },
        { "sys.settrace", POL_WHY_INTROSPECTION },
        { "numpy.ctypeslib.load_library", POL_WHY_NATIVE },
        { "timeit.default_timer", NONE },
        { "my.subprocess.run", NONE },
        { "", NONE },
};

static void test_call(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(call_cases); i++) {
                const struct name_case *c = &call_cases[i];
                check_why("pol_call", c->name, pol_call(c->name, NULL), c->why);
                check_why("pol_call(no caps)", c->name, pol_call(c->name, &no_caps), c->why);
        }
}

static void test_call_caps(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(call_cases); i++) {
                const struct name_case *c = &call_cases[i];
                enum pol_why net = c->why == POL_WHY_NETWORK ? NONE : c->why;
                check_why("pol_call(network)", c->name, pol_call(c->name, &net_caps), net);
                check_why("pol_call(all)", c->name, pol_call(c->name, &all_caps), net);
        }
        check_why("pol_call(network)", "socket.create_connection", pol_call("socket.create_connection", &net_caps),
                  NONE);
        check_why("pol_call(network)", "os.fork", pol_call("os.fork", &net_caps), POL_WHY_PROCESS);
}

/* ---- pol_attr ---- */

/* Every attribute of policy/rules.c's introspection_attrs, copied: one missing from the table
 * fails here. */
static const char *const attrs_refused[] = {
        "__subclasses__", "__globals__", "__builtins__", "__code__",     "__closure__", "__mro__",
        "__bases__",      "__base__",    "__self__",     "__func__",     "__loader__",  "__spec__",
        "mro",            "f_globals",   "f_locals",     "f_builtins",   "f_back",      "f_code",
        "f_trace",        "gi_frame",    "gi_code",      "gi_yieldfrom", "cr_frame",    "cr_code",
        "cr_await",       "ag_frame",    "ag_code",      "ag_await",     "tb_frame",    "tb_next",
        "co_code",        "co_consts",   "co_names",     "func_globals", "__reduce__",  "__reduce_ex__",
};

static const char *const attrs_allowed[] = {
        "__name__", "__init__",  "__class__",       "__dict__",   "__doc__",       "__module__", "__qualname__",
        "__len__",  "__eq__",    "__repr__",        "__str__",    "__enter__",     "__exit__",   "__call__",
        "__annotations__", "__slots__", "__file__", "__init_subclass__", "__getattribute__", "__new__",
        "__iter__", "__next__",  "__version__",     "__all__",    "__wrapped__",   "__post_init__",
        "mro_x",    "f_globalsx", "_f_back",        "f_lineno",   "tb_lineno",     "co_name",    "co_filename",
        "subclasses", "globals", "code",            "frame",      "self",          "func",       "base",
        "__subclasses", "subclasses__", "",
        /* pandas and numpy names that look like the refused ones */
        "columns",  "loc",       "iloc",            "dtypes",     "T",             "values",     "f",
};

static void test_attr(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(attrs_refused); i++)
                check_why("pol_attr", attrs_refused[i], pol_attr(attrs_refused[i]), POL_WHY_INTROSPECTION);
        for (size_t i = 0; i < ELEMENTSOF(attrs_allowed); i++)
                check_why("pol_attr", attrs_allowed[i], pol_attr(attrs_allowed[i]), NONE);
}

/* ---- pol_path_call and pol_path_self_method ---- */

enum path_kind {
        FUNC,   /* pol_path_call(name, false) */
        METHOD, /* pol_path_call(name, true) */
        SELF,   /* pol_path_self_method(name) */
};

struct path_case {
        const char *name;
        enum path_kind kind;
        size_t n; /* 0: not a path-taking call */
        struct pol_path_arg args[2];
};

#define R(pos, kw) { pos, kw, POL_ACCESS_READ, -1, NULL, NULL }
#define W(pos, kw) { pos, kw, POL_ACCESS_WRITE, -1, NULL, NULL }
#define M(pos, kw, mpos, mkw, mdef) { pos, kw, POL_ACCESS_MODE, mpos, mkw, mdef }
#define FL(pos, kw, fpos, fkw) { pos, kw, POL_ACCESS_FLAGS, fpos, fkw, NULL }
#define NOPATH(name, kind) { name, kind, 0, { { 0 } } }

static const struct path_case path_cases[] = {
        { "open", FUNC, 1, { M(0, "file", 1, "mode", "r") } },
        { "io.open", FUNC, 1, { M(0, "file", 1, "mode", "r") } },
        { "codecs.open", FUNC, 1, { M(0, "file", 1, "mode", "r") } },
        { "os.open", FUNC, 1, { FL(0, "path", 1, "flags") } },
        { "pathlib.Path", FUNC, 0, { { 0 } } }, /* a Path is judged where it is used, not made */
        { "os.listdir", FUNC, 1, { R(0, "path") } },
        { "os.walk", FUNC, 1, { R(0, "top") } },
        { "os.path.exists", FUNC, 1, { R(0, "path") } },
        { "os.path.getsize", FUNC, 1, { R(0, "filename") } },
        { "os.remove", FUNC, 1, { W(0, "path") } },
        { "os.unlink", FUNC, 1, { W(0, "path") } },
        { "os.mkdir", FUNC, 1, { W(0, "path") } },
        { "os.makedirs", FUNC, 1, { W(0, "name") } },
        { "os.rename", FUNC, 2, { W(0, "src"), W(1, "dst") } },
        { "os.replace", FUNC, 2, { W(0, "src"), W(1, "dst") } },
        { "os.symlink", FUNC, 2, { R(0, "src"), W(1, "dst") } },
        { "os.link", FUNC, 2, { R(0, "src"), W(1, "dst") } },
        { "shutil.copy", FUNC, 2, { R(0, "src"), W(1, "dst") } },
        { "shutil.copy2", FUNC, 2, { R(0, "src"), W(1, "dst") } },
        { "shutil.copyfile", FUNC, 2, { R(0, "src"), W(1, "dst") } },
        { "shutil.copytree", FUNC, 2, { R(0, "src"), W(1, "dst") } },
        { "shutil.move", FUNC, 2, { W(0, "src"), W(1, "dst") } },
        { "shutil.rmtree", FUNC, 1, { W(0, "path") } },
        { "sqlite3.connect", FUNC, 1, { { 0, "database", POL_ACCESS_OPEN_OR_CREATE, -1, NULL, NULL } } }, /* read if it exists */
        { "zipfile.ZipFile", FUNC, 1, { M(0, "file", 1, "mode", "r") } },
        { "tarfile.open", FUNC, 1, { M(0, "name", 1, "mode", "r") } },
        { "pandas.read_csv", FUNC, 1, { R(0, "filepath_or_buffer") } },
        { "pandas.read_table", FUNC, 1, { R(0, "filepath_or_buffer") } },
        { "pandas.read_json", FUNC, 1, { R(0, "path_or_buffer") } },
        { "pandas.read_excel", FUNC, 1, { R(0, "io") } },
        { "pandas.read_parquet", FUNC, 1, { R(0, "path") } },
        { "pandas.read_pickle", FUNC, 1, { R(0, "filepath_or_buffer") } },
        { "numpy.load", FUNC, 1, { R(0, "file") } },
        { "numpy.loadtxt", FUNC, 1, { R(0, "fname") } },
        { "numpy.genfromtxt", FUNC, 1, { R(0, "fname") } },
        { "numpy.fromfile", FUNC, 1, { R(0, "file") } },
        { "numpy.save", FUNC, 1, { W(0, "file") } },
        { "numpy.savez", FUNC, 1, { W(0, "file") } },
        { "numpy.savez_compressed", FUNC, 1, { W(0, "file") } },
        { "numpy.savetxt", FUNC, 1, { W(0, "fname") } },
        { "matplotlib.pyplot.savefig", FUNC, 1, { W(0, "fname") } },
        { "matplotlib.pyplot.imread", FUNC, 1, { R(0, "fname") } },
        { "matplotlib.pyplot.imsave", FUNC, 1, { W(0, "fname") } },
        { "matplotlib.image.imread", FUNC, 1, { R(0, "fname") } },
        /* methods, whatever their object */
        { "to_csv", METHOD, 1, { W(0, "path_or_buf") } },
        { "to_json", METHOD, 1, { W(0, "path_or_buf") } },
        { "to_excel", METHOD, 1, { W(0, "excel_writer") } },
        { "to_parquet", METHOD, 1, { W(0, "path") } },
        { "to_pickle", METHOD, 1, { W(0, "path") } },
        { "to_html", METHOD, 1, { W(0, "buf") } },
        { "to_string", METHOD, 1, { W(0, "buf") } },
        { "to_markdown", METHOD, 1, { W(0, "buf") } },
        { "tofile", METHOD, 1, { W(0, "fid") } },
        { "savefig", METHOD, 1, { W(0, "fname") } },
        { "symlink_to", METHOD, 1, { W(0, "target") } },
        { "hardlink_to", METHOD, 1, { W(0, "target") } },
        /* a Path's own path */
        { "read_text", SELF, 1, { R(-1, NULL) } },
        { "read_bytes", SELF, 1, { R(-1, NULL) } },
        { "iterdir", SELF, 1, { R(-1, NULL) } },
        { "glob", SELF, 1, { R(-1, NULL) } },
        { "exists", SELF, 1, { R(-1, NULL) } },
        { "write_text", SELF, 1, { W(-1, NULL) } },
        { "write_bytes", SELF, 1, { W(-1, NULL) } },
        { "mkdir", SELF, 1, { W(-1, NULL) } },
        { "touch", SELF, 1, { W(-1, NULL) } },
        { "unlink", SELF, 1, { W(-1, NULL) } },
        { "open", SELF, 1, { M(-1, NULL, 0, "mode", "r") } },
        /* not path-taking: a string argument of these is never a path (DESIGN §5) */
        NOPATH("print", FUNC),
        NOPATH("len", FUNC),
        NOPATH("ValueError", FUNC),
        NOPATH("pandas.DataFrame", FUNC),
        NOPATH("pandas.to_datetime", FUNC),
        NOPATH("pandas.Timestamp", FUNC),
        NOPATH("str.format", FUNC),
        NOPATH("json.dumps", FUNC),
        NOPATH("json.loads", FUNC),
        NOPATH("re.compile", FUNC),
        NOPATH("re.split", FUNC),
        NOPATH("os.path.join", FUNC),
        NOPATH("os.path.basename", FUNC),
        NOPATH("urllib.parse.urlparse", FUNC),
        NOPATH("datetime.datetime.strptime", FUNC),
        NOPATH("numpy.array", FUNC),
        NOPATH("logging.getLogger", FUNC),
        NOPATH("open_x", FUNC),
        NOPATH("xopen", FUNC),
        NOPATH("pandas.read_csvx", FUNC),
        NOPATH("numpy.saves", FUNC),
        NOPATH("", FUNC),
        /* functions are not methods and methods not functions */
        NOPATH("to_csv", FUNC),
        NOPATH("savefig", FUNC),
        NOPATH("open", METHOD),
        NOPATH("pandas.read_csv", METHOD),
        NOPATH("write_text", METHOD),
        NOPATH("to_csv", SELF),
        NOPATH("savefig", SELF),
        /* string and DataFrame methods */
        NOPATH("join", METHOD),
        NOPATH("join", SELF),
        NOPATH("split", METHOD),
        NOPATH("split", SELF),
        NOPATH("format", METHOD),
        NOPATH("strip", METHOD),
        NOPATH("startswith", METHOD),
        NOPATH("groupby", METHOD),
        NOPATH("merge", METHOD),
        NOPATH("rename", METHOD),
        NOPATH("plot", METHOD),
        NOPATH("set_title", METHOD),
        NOPATH("read", METHOD),
        NOPATH("write", METHOD),
        NOPATH("to_dict", METHOD),
        NOPATH("to_numpy", METHOD),
        NOPATH("to_list", METHOD),
        NOPATH("to_datetime", METHOD),
        NOPATH("to_csvx", METHOD),
        NOPATH("read_textx", SELF),
        NOPATH("", METHOD),
        NOPATH("", SELF),
};

static const char *access_name(enum pol_access a)
{
        switch (a) {
        case POL_ACCESS_READ:
                return "read";
        case POL_ACCESS_WRITE:
                return "write";
        case POL_ACCESS_MODE:
                return "mode";
        case POL_ACCESS_FLAGS:
                return "flags";
        case POL_ACCESS_OPEN_OR_CREATE:
                return "open-or-create";
        }
        return "?";
}

static bool str_eq(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

static void test_path_calls(void **state)
{
        (void)state;
        static const char *const kinds[] = { "pol_path_call(function)", "pol_path_call(method)", "pol_path_self_method" };
        for (size_t i = 0; i < ELEMENTSOF(path_cases); i++) {
                const struct path_case *c = &path_cases[i];
                const struct pol_path_arg *args = NULL;
                size_t n = c->kind == SELF ? pol_path_self_method(c->name, &args)
                                           : pol_path_call(c->name, c->kind == METHOD, &args);
                if (n != c->n)
                        fail_msg("%s(\"%s\"): %zu path arguments, want %zu", kinds[c->kind], c->name, n, c->n);
                if (n)
                        assert_non_null(args);
                for (size_t j = 0; j < n; j++) {
                        const struct pol_path_arg *g = &args[j], *w = &c->args[j];
                        bool mode = w->access == POL_ACCESS_MODE || w->access == POL_ACCESS_FLAGS;
                        if (g->pos != w->pos || !str_eq(g->kw, w->kw) || g->access != w->access ||
                            (mode && (g->mode_pos != w->mode_pos || !str_eq(g->mode_kw, w->mode_kw) ||
                                      !str_eq(g->mode_default, w->mode_default))))
                                fail_msg("%s(\"%s\") arg %zu: got pos %d kw %s %s mode %d/%s/%s, want pos %d kw %s "
                                         "%s mode %d/%s/%s",
                                         kinds[c->kind], c->name, j, g->pos, g->kw ? g->kw : "-", access_name(g->access),
                                         g->mode_pos, g->mode_kw ? g->mode_kw : "-",
                                         g->mode_default ? g->mode_default : "-", w->pos, w->kw ? w->kw : "-",
                                         access_name(w->access), w->mode_pos, w->mode_kw ? w->mode_kw : "-",
                                         w->mode_default ? w->mode_default : "-");
                }
        }
}

/* ---- pol_mode_writes, pol_flags_write ---- */

static const struct {
        const char *mode;
        bool writes;
} mode_cases[] = {
        { "r", false },   { "rb", false },  { "rt", false },  { "br", false },  { "", false },
        { "w", true },    { "wb", true },   { "wt", true },   { "a", true },    { "ab", true },
        { "at", true },   { "x", true },    { "xb", true },   { "r+", true },   { "rb+", true },
        { "r+b", true },  { "w+", true },   { "a+", true },   { "x+", true },
        /* zipfile and tarfile modes */
        { "r:gz", false }, { "r:bz2", false }, { "r:*", false }, { "r|gz", false },
        { "w:gz", true },  { "w:bz2", true },  { "x:gz", true },  { "a:", true },
};

static void test_mode_writes(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(mode_cases); i++)
                if (pol_mode_writes(mode_cases[i].mode) != mode_cases[i].writes)
                        fail_msg("pol_mode_writes(\"%s\"): want %s", mode_cases[i].mode,
                                 mode_cases[i].writes ? "true" : "false");
}

static const struct {
        const char *what;
        int flags;
        bool writes;
} flag_cases[] = {
        { "O_RDONLY", O_RDONLY, false },
        { "O_RDONLY|O_CLOEXEC", O_RDONLY | O_CLOEXEC, false },
        { "O_RDONLY|O_NOFOLLOW|O_DIRECTORY", O_RDONLY | O_NOFOLLOW | O_DIRECTORY, false },
        { "O_RDONLY|O_NONBLOCK", O_RDONLY | O_NONBLOCK, false },
        { "O_WRONLY", O_WRONLY, true },
        { "O_RDWR", O_RDWR, true },
        { "O_CREAT|O_RDONLY", O_CREAT | O_RDONLY, true },
        { "O_APPEND", O_APPEND, true },
        { "O_TRUNC", O_TRUNC, true },
        { "O_WRONLY|O_CREAT|O_EXCL", O_WRONLY | O_CREAT | O_EXCL, true },
        { "O_RDWR|O_CLOEXEC", O_RDWR | O_CLOEXEC, true },
};

static void test_flags_write(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(flag_cases); i++)
                if (pol_flags_write(flag_cases[i].flags) != flag_cases[i].writes)
                        fail_msg("pol_flags_write(%s): want %s", flag_cases[i].what, flag_cases[i].writes ? "true" : "false");
}

/* ---- capabilities ---- */

static void test_cap_names(void **state)
{
        (void)state;
        static const char *const names[_POL_CAP_MAX] = { [POL_CAP_NETWORK] = "network", [POL_CAP_PROCESS] = "process" };
        for (int c = 0; c < _POL_CAP_MAX; c++) {
                if (!names[c])
                        fail_msg("capability %d has no expected name in this test", c);
                assert_string_equal(pol_cap_name((enum pol_cap)c), names[c]);
                assert_int_equal(pol_cap_from_name(names[c]), c);
                assert_int_equal(pol_cap_from_name(pol_cap_name((enum pol_cap)c)), c);
        }
        assert_string_equal(pol_cap_name(_POL_CAP_MAX), "unknown");
        assert_string_equal(pol_cap_name((enum pol_cap)-1), "unknown");
        static const char *const unknown[] = { "gpu", "", "Network", "NETWORK", "network ", "net", "networks",
                                               "processes", "unknown" };
        for (size_t i = 0; i < ELEMENTSOF(unknown); i++)
                if (pol_cap_from_name(unknown[i]) != -1)
                        fail_msg("pol_cap_from_name(\"%s\"): want -1", unknown[i]);
}

static void test_cap_server_policy(void **state)
{
        (void)state;
        check_why("pol_cap_server_policy", "network", pol_cap_server_policy(POL_CAP_NETWORK), POL_WHY_CAP_NO_EGRESS);
        check_why("pol_cap_server_policy", "process", pol_cap_server_policy(POL_CAP_PROCESS), POL_WHY_CAP_NEVER);
        check_why("pol_cap_server_policy", "_POL_CAP_MAX", pol_cap_server_policy(_POL_CAP_MAX), POL_WHY_CAP_UNKNOWN);
        check_why("pol_cap_server_policy", "-1", pol_cap_server_policy((enum pol_cap)-1), POL_WHY_CAP_UNKNOWN);
}

#define MAXN 4
struct caps_case {
        const char *what;
        const char *requested[MAXN];
        size_t n_requested;
        const char *approved[MAXN];
        size_t n_approved;
        enum pol_why why[MAXN]; /* for each requested */
        bool granted[_POL_CAP_MAX];
};

static const struct caps_case caps_cases[] = {
        { "network requested and approved: the server has no egress yet",
          { "network" }, 1, { "network" }, 1, { POL_WHY_CAP_NO_EGRESS }, { false } },
        { "network requested, not approved", { "network" }, 1, { NULL }, 0, { POL_WHY_CAP_NOT_APPROVED }, { false } },
        { "network requested, something else approved",
          { "network" }, 1, { "process", "gpu" }, 2, { POL_WHY_CAP_NOT_APPROVED }, { false } },
        { "process requested and approved: never", { "process" }, 1, { "process" }, 1, { POL_WHY_CAP_NEVER }, { false } },
        { "process requested, not approved: never comes first",
          { "process" }, 1, { NULL }, 0, { POL_WHY_CAP_NEVER }, { false } },
        { "unknown requested and approved", { "gpu" }, 1, { "gpu" }, 1, { POL_WHY_CAP_UNKNOWN }, { false } },
        { "names are case-sensitive", { "Network" }, 1, { "Network" }, 1, { POL_WHY_CAP_UNKNOWN }, { false } },
        { "nothing requested, network approved", { NULL }, 0, { "network" }, 1, { NONE }, { false } },
        { "nothing requested, nothing approved", { NULL }, 0, { NULL }, 0, { NONE }, { false } },
        { "each requested name has its own why",
          { "network", "process", "gpu", "network" }, 4, { "network", "process", "gpu" }, 3,
          { POL_WHY_CAP_NO_EGRESS, POL_WHY_CAP_NEVER, POL_WHY_CAP_UNKNOWN, POL_WHY_CAP_NO_EGRESS }, { false } },
        { "a NULL in the approved list is skipped",
          { "network" }, 1, { NULL, "network" }, 2, { POL_WHY_CAP_NO_EGRESS }, { false } },
};

static void test_caps_resolve(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(caps_cases); i++) {
                const struct caps_case *c = &caps_cases[i];
                struct pol_caps granted;
                memset(&granted, 0xff, sizeof(granted)); /* cleared by the call, whatever it held */
                enum pol_why why[MAXN] = { [0 ... MAXN - 1] = _POL_WHY_MAX };
                pol_caps_resolve(c->requested, c->n_requested, c->approved, c->n_approved, NULL, &granted, why);
                for (size_t j = 0; j < c->n_requested; j++)
                        if (why[j] != c->why[j])
                                fail_msg("%s: requested[%zu] \"%s\": got %s, want %s", c->what, j, c->requested[j],
                                         pol_why_text(why[j]), pol_why_text(c->why[j]));
                for (size_t j = c->n_requested; j < MAXN; j++)
                        if (why[j] != _POL_WHY_MAX)
                                fail_msg("%s: why[%zu] written past n_requested", c->what, j);
                for (int k = 0; k < _POL_CAP_MAX; k++)
                        if (granted.granted[k] != c->granted[k])
                                fail_msg("%s: %s %s", c->what, pol_cap_name((enum pol_cap)k),
                                         granted.granted[k] ? "granted" : "not granted");
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_module),
                cmocka_unit_test(test_module_caps),
                cmocka_unit_test(test_call),
                cmocka_unit_test(test_call_caps),
                cmocka_unit_test(test_attr),
                cmocka_unit_test(test_path_calls),
                cmocka_unit_test(test_mode_writes),
                cmocka_unit_test(test_flags_write),
                cmocka_unit_test(test_cap_names),
                cmocka_unit_test(test_cap_server_policy),
                cmocka_unit_test(test_caps_resolve),
        };
        return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
