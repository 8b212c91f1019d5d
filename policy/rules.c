/* The tables: modules, calls, attributes, and calls that take paths. */
#include <fcntl.h>
#include <string.h>

#include "lib/cleanup.h"
#include "policy/rules.h"

/* ---- modules ---- */

/* A module and all below it. `network` rules give way to a granted network capability. */
static const struct {
        const char *module;
        enum pol_why why;
} module_rules[] = {
        /* network: the modules whose purpose is to reach another host */
        { "socket", POL_WHY_NETWORK },         { "_socket", POL_WHY_NETWORK },
        { "ssl", POL_WHY_NETWORK },            { "_ssl", POL_WHY_NETWORK },
        { "http.client", POL_WHY_NETWORK },    { "http.server", POL_WHY_NETWORK },
        { "urllib.request", POL_WHY_NETWORK }, { "ftplib", POL_WHY_NETWORK },
        { "smtplib", POL_WHY_NETWORK },        { "poplib", POL_WHY_NETWORK },
        { "imaplib", POL_WHY_NETWORK },        { "telnetlib", POL_WHY_NETWORK },
        { "nntplib", POL_WHY_NETWORK },        { "xmlrpc.client", POL_WHY_NETWORK },
        { "xmlrpc.server", POL_WHY_NETWORK },  { "socketserver", POL_WHY_NETWORK },
        { "requests", POL_WHY_NETWORK },       { "urllib3", POL_WHY_NETWORK },
        { "httpx", POL_WHY_NETWORK },          { "aiohttp", POL_WHY_NETWORK },
        { "paramiko", POL_WHY_NETWORK },       { "websocket", POL_WHY_NETWORK },
        { "websockets", POL_WHY_NETWORK },
        /* process creation */
        { "subprocess", POL_WHY_PROCESS },     { "_posixsubprocess", POL_WHY_PROCESS },
        { "pty", POL_WHY_PROCESS },
        /* (multiprocessing is not here: its Process and Pool are refused as calls, and its
         * cpu_count is what tools use it for) */
        /* native code */
        { "ctypes", POL_WHY_NATIVE },          { "_ctypes", POL_WHY_NATIVE },
        { "cffi", POL_WHY_NATIVE },            { "_cffi_backend", POL_WHY_NATIVE },
};

/* True if module is prefix or below it ("http.client.x" is below "http.client"). */
static bool below(const char *module, const char *prefix)
{
        size_t n = strlen(prefix);
        return strncmp(module, prefix, n) == 0 && (module[n] == 0 || module[n] == '.');
}

static enum pol_why apply_caps(enum pol_why w, const struct pol_caps *caps)
{
        if (w == POL_WHY_NETWORK && caps && caps->granted[POL_CAP_NETWORK])
                return POL_WHY_NONE;
        return w;
}

enum pol_why pol_module(const char *module, const struct pol_caps *caps)
{
        for (size_t i = 0; i < ELEMENTSOF(module_rules); i++)
                if (below(module, module_rules[i].module))
                        return apply_caps(module_rules[i].why, caps);
        return POL_WHY_NONE;
}

/* ---- calls ---- */

/* Exact qualified names, or prefixes ending in '.' for a whole module's functions. */
static const struct {
        const char *name;
        enum pol_why why;
} call_rules[] = {
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
        /* process creation and control */
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
        { "subprocess.", POL_WHY_PROCESS },
        { "multiprocessing.", POL_WHY_PROCESS },
        { "pty.", POL_WHY_PROCESS },
        { "concurrent.futures.ProcessPoolExecutor", POL_WHY_PROCESS },
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
        /* network, for modules reached some other way than an import the pre-check saw */
        { "socket.", POL_WHY_NETWORK },
        { "urllib.request.", POL_WHY_NETWORK },
        { "http.client.", POL_WHY_NETWORK },
        { "asyncio.open_connection", POL_WHY_NETWORK },
        { "asyncio.start_server", POL_WHY_NETWORK },
        { "asyncio.open_unix_connection", POL_WHY_NETWORK },
        { "asyncio.start_unix_server", POL_WHY_NETWORK },
        /* code compiled from strings by a library on the tool's behalf */
        { "timeit.timeit", POL_WHY_DYNAMIC },
        { "timeit.repeat", POL_WHY_DYNAMIC },
        { "timeit.Timer", POL_WHY_DYNAMIC },
        { "cProfile.run", POL_WHY_DYNAMIC },
        { "cProfile.runctx", POL_WHY_DYNAMIC },
        { "profile.run", POL_WHY_DYNAMIC },
        { "profile.runctx", POL_WHY_DYNAMIC },
        { "code.interact", POL_WHY_DYNAMIC },
        { "code.InteractiveInterpreter", POL_WHY_DYNAMIC },
        { "code.InteractiveConsole", POL_WHY_DYNAMIC },
        { "code.compile_command", POL_WHY_DYNAMIC },
        { "codeop.compile_command", POL_WHY_DYNAMIC },
        { "runpy.run_path", POL_WHY_DYNAMIC },
        { "runpy.run_module", POL_WHY_DYNAMIC },
        { "pdb.run", POL_WHY_DYNAMIC },
        { "sys.settrace", POL_WHY_INTROSPECTION },
        { "sys.setprofile", POL_WHY_INTROSPECTION },
        /* native code */
        { "ctypes.", POL_WHY_NATIVE },
        { "numpy.ctypeslib.", POL_WHY_NATIVE },
};

/* What a denied prefix above covers but is harmless. */
static const char *const call_allowed[] = {
        "multiprocessing.cpu_count",
};

enum pol_why pol_call(const char *qualified, const struct pol_caps *caps)
{
        for (size_t i = 0; i < ELEMENTSOF(call_allowed); i++)
                if (strcmp(qualified, call_allowed[i]) == 0)
                        return POL_WHY_NONE;
        for (size_t i = 0; i < ELEMENTSOF(call_rules); i++) {
                const char *n = call_rules[i].name;
                size_t len = strlen(n);
                bool hit = n[len - 1] == '.' ? strncmp(qualified, n, len) == 0 : strcmp(qualified, n) == 0;
                if (hit)
                        return apply_caps(call_rules[i].why, caps);
        }
        return POL_WHY_NONE;
}

/* ---- attributes ---- */

/* What leads from an object to the interpreter's insides: the globals of functions, the
 * frames of generators, coroutines and tracebacks, code objects, and the class tree by which
 * every loaded class (os._wrap_close, say) can be found. */
static const char *const introspection_attrs[] = {
        "__subclasses__", "__globals__", "__builtins__", "__code__",    "__closure__", "__mro__",
        "__bases__",      "__base__",    "__self__",     "__func__",    "__loader__",  "__spec__",
        "mro",            "f_globals",   "f_locals",     "f_builtins",  "f_back",      "f_code",
        "f_trace",        "gi_frame",    "gi_code",      "gi_yieldfrom", "cr_frame",   "cr_code",
        "cr_await",       "ag_frame",    "ag_code",      "ag_await",    "tb_frame",    "tb_next",
        "co_code",        "co_consts",   "co_names",     "func_globals", "__reduce__",  "__reduce_ex__",
};

enum pol_why pol_attr(const char *attr)
{
        for (size_t i = 0; i < ELEMENTSOF(introspection_attrs); i++)
                if (strcmp(attr, introspection_attrs[i]) == 0)
                        return POL_WHY_INTROSPECTION;
        return POL_WHY_NONE;
}

/* ---- calls that take paths ---- */

#define R(pos, kw) { pos, kw, POL_ACCESS_READ, -1, NULL, NULL }
#define W(pos, kw) { pos, kw, POL_ACCESS_WRITE, -1, NULL, NULL }
#define M(pos, kw, mpos, mkw, mdef) { pos, kw, POL_ACCESS_MODE, mpos, mkw, mdef }
#define FL(pos, kw, fpos, fkw) { pos, kw, POL_ACCESS_FLAGS, fpos, fkw, NULL }

static const struct pol_path_arg a_open[] = { M(0, "file", 1, "mode", "r") };
static const struct pol_path_arg a_os_open[] = { FL(0, "path", 1, "flags") };
static const struct pol_path_arg a_read0[] = { R(0, "path") };
static const struct pol_path_arg a_write0[] = { W(0, "path") };
static const struct pol_path_arg a_read_fp[] = { R(0, "filepath_or_buffer") };
static const struct pol_path_arg a_read_io[] = { R(0, "io") };
static const struct pol_path_arg a_read_pathbuf[] = { R(0, "path_or_buffer") };
static const struct pol_path_arg a_read_file[] = { R(0, "file") };
static const struct pol_path_arg a_read_fname[] = { R(0, "fname") };
static const struct pol_path_arg a_write_fname[] = { W(0, "fname") };
static const struct pol_path_arg a_write_file[] = { W(0, "file") };
static const struct pol_path_arg a_write_pathbuf[] = { W(0, "path_or_buf") };
static const struct pol_path_arg a_write_excel[] = { W(0, "excel_writer") };
static const struct pol_path_arg a_write_path[] = { W(0, "path") };
static const struct pol_path_arg a_src_dst[] = { R(0, "src"), W(1, "dst") };
static const struct pol_path_arg a_both_w[] = { W(0, "src"), W(1, "dst") };
/* SQLite opens read-write and falls back to read-only where it cannot write: an existing file
 * is judged as a read (inputs/sales.db is fine), a new one as a write. */
static const struct pol_path_arg a_sqlite[] = { { 0, "database", POL_ACCESS_OPEN_OR_CREATE, -1, NULL, NULL } };
static const struct pol_path_arg a_memmap[] = { M(0, "filename", 2, "mode", "r+") };
static const struct pol_path_arg a_zip[] = { M(0, "file", 1, "mode", "r") };
static const struct pol_path_arg a_tar[] = { M(0, "name", 1, "mode", "r") };
static const struct pol_path_arg a_method_mode[] = { M(-1, NULL, 0, "mode", "r") };
static const struct pol_path_arg a_method_target_w[] = { W(0, "target") };
static const struct pol_path_arg a_read_top[] = { R(0, "top") };
static const struct pol_path_arg a_read_filename[] = { R(0, "filename") };
static const struct pol_path_arg a_write_name[] = { W(0, "name") };
static const struct pol_path_arg a_write_buf[] = { W(0, "buf") };
static const struct pol_path_arg a_write_fid[] = { W(0, "fid") };

static const struct {
        const char *name;
        const struct pol_path_arg *args;
        size_t n;
} path_funcs[] = {
#define F(name, a) { name, a, ELEMENTSOF(a) }
        F("open", a_open),
        F("io.open", a_open),
        F("codecs.open", a_open),
        F("os.open", a_os_open),
        F("os.listdir", a_read0),
        F("os.scandir", a_read0),
        F("os.walk", a_read_top),
        F("os.stat", a_read0),
        F("os.lstat", a_read0),
        F("os.path.exists", a_read0),
        F("os.path.isfile", a_read0),
        F("os.path.isdir", a_read0),
        F("os.path.getsize", a_read_filename),
        F("os.readlink", a_read0),
        F("os.remove", a_write0),
        F("os.unlink", a_write0),
        F("os.rmdir", a_write0),
        F("os.mkdir", a_write0),
        F("os.makedirs", a_write_name),
        F("os.chmod", a_write0),
        F("os.chown", a_write0),
        F("os.truncate", a_write0),
        F("os.utime", a_write0),
        F("os.rename", a_both_w),
        F("os.replace", a_both_w),
        F("os.symlink", a_src_dst),
        F("os.link", a_src_dst),
        F("shutil.copy", a_src_dst),
        F("shutil.copy2", a_src_dst),
        F("shutil.copyfile", a_src_dst),
        F("shutil.copytree", a_src_dst),
        F("shutil.move", a_both_w),
        F("shutil.rmtree", a_write_path),
        F("sqlite3.connect", a_sqlite),
        F("zipfile.ZipFile", a_zip),
        F("tarfile.open", a_tar),
        F("pandas.read_csv", a_read_fp),
        F("pandas.read_table", a_read_fp),
        F("pandas.read_fwf", a_read_fp),
        F("pandas.read_json", a_read_pathbuf),
        F("pandas.read_excel", a_read_io),
        F("pandas.read_parquet", a_read0),
        F("pandas.read_feather", a_read0),
        F("pandas.read_pickle", a_read_fp),
        F("pandas.read_html", a_read_io),
        F("pandas.read_xml", a_read_pathbuf),
        F("pandas.read_hdf", a_read_pathbuf),
        F("pandas.read_stata", a_read_fp),
        F("pandas.read_sas", a_read_fp),
        F("pandas.read_spss", a_read0),
        F("pandas.read_orc", a_read0),
        F("numpy.load", a_read_file),
        F("numpy.loadtxt", a_read_fname),
        F("numpy.genfromtxt", a_read_fname),
        F("numpy.fromfile", a_read_file),
        F("numpy.memmap", a_memmap),
        F("numpy.save", a_write_file),
        F("numpy.savez", a_write_file),
        F("numpy.savez_compressed", a_write_file),
        F("numpy.savetxt", a_write_fname),
        F("matplotlib.pyplot.savefig", a_write_fname),
        F("matplotlib.pyplot.imread", a_read_fname),
        F("matplotlib.pyplot.imsave", a_write_fname),
        F("matplotlib.image.imread", a_read_fname),
        F("matplotlib.image.imsave", a_write_fname),
#undef F
};

/* Methods, by name whatever their object: a DataFrame's to_csv, a Figure's savefig, a Path's
 * write_text. A method of that name on something else that takes no path (rare) is checked
 * only when its argument is a path literal; a literal given there is a path anyway. */
static const struct {
        const char *name;
        const struct pol_path_arg *args;
        size_t n;
} path_methods[] = {
#define F(name, a) { name, a, ELEMENTSOF(a) }
        F("to_csv", a_write_pathbuf),
        F("to_json", a_write_pathbuf),
        F("to_excel", a_write_excel),
        F("to_parquet", a_write_path),
        F("to_feather", a_write_path),
        F("to_pickle", a_write_path),
        F("to_html", a_write_buf),
        F("to_string", a_write_buf),
        F("to_markdown", a_write_buf),
        F("to_xml", a_write_pathbuf),
        F("to_latex", a_write_buf),
        F("to_hdf", a_write_pathbuf),
        F("to_stata", a_write_path),
        F("to_orc", a_write_path),
        F("tofile", a_write_fid),
        F("savefig", a_write_fname),
        F("symlink_to", a_method_target_w),
        F("hardlink_to", a_method_target_w),
#undef F
};

/* Methods of a Path whose path is the object itself: the caller passes the object's path
 * (a Path(...) literal) with these. */
static const struct pol_path_arg a_self_r[] = { R(-1, NULL) };
static const struct pol_path_arg a_self_w[] = { W(-1, NULL) };
static const struct {
        const char *name;
        const struct pol_path_arg *args;
        size_t n;
} path_self_methods[] = {
        { "read_text", a_self_r, 1 },      { "read_bytes", a_self_r, 1 },  { "iterdir", a_self_r, 1 },
        { "glob", a_self_r, 1 },           { "rglob", a_self_r, 1 },       { "stat", a_self_r, 1 },
        { "exists", a_self_r, 1 },         { "is_file", a_self_r, 1 },     { "is_dir", a_self_r, 1 },
        { "resolve", a_self_r, 1 },        { "write_text", a_self_w, 1 },  { "write_bytes", a_self_w, 1 },
        { "mkdir", a_self_w, 1 },          { "touch", a_self_w, 1 },       { "unlink", a_self_w, 1 },
        { "rmdir", a_self_w, 1 },          { "chmod", a_self_w, 1 },       { "rename", a_self_w, 1 },
        { "replace", a_self_w, 1 },        { "open", a_method_mode, 1 },
};

size_t pol_path_call(const char *name, bool is_method, const struct pol_path_arg **args)
{
        if (!is_method) {
                for (size_t i = 0; i < ELEMENTSOF(path_funcs); i++)
                        if (strcmp(name, path_funcs[i].name) == 0) {
                                *args = path_funcs[i].args;
                                return path_funcs[i].n;
                        }
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(path_methods); i++)
                if (strcmp(name, path_methods[i].name) == 0) {
                        *args = path_methods[i].args;
                        return path_methods[i].n;
                }
        return 0;
}

size_t pol_path_self_method(const char *name, const struct pol_path_arg **args)
{
        for (size_t i = 0; i < ELEMENTSOF(path_self_methods); i++)
                if (strcmp(name, path_self_methods[i].name) == 0) {
                        *args = path_self_methods[i].args;
                        return path_self_methods[i].n;
                }
        return 0;
}

bool pol_mode_writes(const char *mode)
{
        /* tarfile's modes carry a compression after ':' or '|' ("r:xz"): not a write. */
        size_t n = strcspn(mode, ":|");
        for (size_t i = 0; i < n; i++)
                if (strchr("wax+", mode[i]))
                        return true;
        return false;
}

bool pol_flags_write(int flags)
{
        return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) != 0;
}
