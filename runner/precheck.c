/* The pre-check (DESIGN §5): the tool's source parsed with Python's own ast module and walked
 * here, in C; nothing of it is executed. Every finding is reported with its line and
 * column, not only the first, and a tool with findings does not run.
 *
 * Two passes over the tree. The first learns what names stand for, wherever they are bound
 * (flow-insensitive, so a name bound anywhere to os.system or to '/etc/passwd' is suspect
 * everywhere): imports and their aliases, names assigned a dotted reference (f = os.fork),
 * names assigned string literals (p = '/etc/passwd'), names assigned Path(literal). The
 * second judges imports, calls, attributes and the path arguments of calls that take paths
 * (policy/rules.c). A string is only ever judged as a path where a call takes a path:
 * raise ValueError('Required columns missing'), '2024/01/05' and df['a/b'] are never
 * findings. */
#include "runner/runner.h"

#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/cleanup.h"

#define FINDINGS_MAX 100
#define NAME_MAX_LEN 256

struct binding {
        char *name;
        char *value;
};

struct bindings {
        struct binding *v;
        size_t n;
};

struct pc {
        struct runner *r;
        PyObject *ast_type; /* ast.AST */
        struct bindings aliases; /* name -> dotted reference */
        struct bindings strings; /* name -> string literal (several per name) */
        struct bindings paths;   /* name -> Path(literal)'s literal */
        struct bindings stars;   /* modules imported with * (name unused) */
        struct bindings seen;    /* "line:col:message" already reported */
        int findings;
        bool failed;
        bool chdir; /* the tool changes its directory: relative paths are judged at run time */
};

/* ---- small helpers ---- */

static void bind(struct bindings *b, const char *name, const char *value)
{
        for (size_t i = 0; i < b->n; i++)
                if (strcmp(b->v[i].name, name) == 0 && strcmp(b->v[i].value, value) == 0)
                        return;
        struct binding *nv = realloc(b->v, (b->n + 1) * sizeof(*nv));
        if (!nv)
                return;
        b->v = nv;
        b->v[b->n].name = strdup(name);
        b->v[b->n].value = strdup(value);
        if (b->v[b->n].name && b->v[b->n].value)
                b->n++;
}

static const char *lookup(const struct bindings *b, const char *name)
{
        for (size_t i = b->n; i > 0; i--)
                if (strcmp(b->v[i - 1].name, name) == 0)
                        return b->v[i - 1].value;
        return NULL;
}

static void bindings_free(struct bindings *b)
{
        for (size_t i = 0; i < b->n; i++) {
                free(b->v[i].name);
                free(b->v[i].value);
        }
        free(b->v);
        memset(b, 0, sizeof(*b));
}

/* The node's class name ("Call", "Import"). */
static const char *kind(PyObject *node)
{
        const char *n = Py_TYPE(node)->tp_name;
        const char *dot = strrchr(n, '.');
        return dot ? dot + 1 : n;
}

static bool is(PyObject *node, const char *k)
{
        return node && node != Py_None && strcmp(kind(node), k) == 0;
}

/* A field of a node, new reference or NULL (Python errors cleared). */
static PyObject *field(PyObject *node, const char *name)
{
        PyObject *v = PyObject_GetAttrString(node, name);
        if (!v)
                PyErr_Clear();
        return v;
}

static long int_field(PyObject *node, const char *name)
{
        PyObject *v = field(node, name);
        long x = v && PyLong_Check(v) ? PyLong_AsLong(v) : 0;
        Py_XDECREF(v);
        PyErr_Clear();
        return x;
}

/* A str field copied into buf; false if absent or not a str. */
static bool str_field(PyObject *node, const char *name, char *buf, size_t size)
{
        PyObject *v = field(node, name);
        bool ok = false;
        if (v && PyUnicode_Check(v)) {
                const char *s = PyUnicode_AsUTF8(v);
                if (s && strlen(s) < size) {
                        strcpy(buf, s);
                        ok = true;
                }
        }
        Py_XDECREF(v);
        PyErr_Clear();
        return ok;
}

/* ---- literals and names ---- */

/* A string literal, folded where that is certain: 'a' 'b', 'a' + 'b', f'abc' without fields,
 * os.path.join of literals. Returns a malloc'd string or NULL. */
static char *literal(struct pc *pc, PyObject *node);

static char *join_literals(struct pc *pc, PyObject *call)
{
        PyObject *args = field(call, "args");
        if (!args || !PyList_Check(args) || PyList_GET_SIZE(args) == 0) {
                Py_XDECREF(args);
                return NULL;
        }
        char out[PATH_MAX] = "";
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args); i++) {
                _cleanup_free_ char *part = literal(pc, PyList_GET_ITEM(args, i));
                if (!part || strlen(out) + strlen(part) + 2 >= sizeof(out)) {
                        Py_DECREF(args);
                        return NULL;
                }
                if (part[0] == '/')
                        out[0] = 0; /* os.path.join drops what came before an absolute part */
                else if (out[0] && out[strlen(out) - 1] != '/')
                        strcat(out, "/");
                strcat(out, part);
        }
        Py_DECREF(args);
        return strdup(out);
}

static bool dotted(struct pc *pc, PyObject *node, char *out, size_t size);
static PyObject *call_arg(PyObject *call, int pos, const char *kw);

static char *literal(struct pc *pc, PyObject *node)
{
        if (!node || node == Py_None)
                return NULL;
        if (is(node, "Constant")) {
                PyObject *v = field(node, "value");
                char *s = NULL;
                if (v && PyUnicode_Check(v)) {
                        const char *u = PyUnicode_AsUTF8(v);
                        s = u ? strdup(u) : NULL;
                }
                Py_XDECREF(v);
                PyErr_Clear();
                return s;
        }
        if (is(node, "JoinedStr")) {
                PyObject *values = field(node, "values");
                char out[PATH_MAX] = "";
                bool ok = values && PyList_Check(values);
                for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(values); i++) {
                        _cleanup_free_ char *part = literal(pc, PyList_GET_ITEM(values, i));
                        ok = part && strlen(out) + strlen(part) < sizeof(out);
                        if (ok)
                                strcat(out, part);
                }
                Py_XDECREF(values);
                return ok ? strdup(out) : NULL;
        }
        if (is(node, "BinOp")) {
                PyObject *op = field(node, "op"), *l = field(node, "left"), *rt = field(node, "right");
                char *s = NULL;
                if (is(op, "Add")) {
                        _cleanup_free_ char *a = literal(pc, l);
                        _cleanup_free_ char *b = literal(pc, rt);
                        if (a && b && (s = malloc(strlen(a) + strlen(b) + 1)))
                                strcat(strcpy(s, a), b);
                }
                Py_XDECREF(op);
                Py_XDECREF(l);
                Py_XDECREF(rt);
                return s;
        }
        if (is(node, "Call")) {
                PyObject *func = field(node, "func");
                char q[NAME_MAX_LEN];
                char *s = NULL;
                if (func && dotted(pc, func, q, sizeof(q))) {
                        if (strcmp(q, "os.path.join") == 0)
                                s = join_literals(pc, node);
                        else if (strcmp(q, "pathlib.Path") == 0 || strcmp(q, "pathlib.PosixPath") == 0 ||
                                 strcmp(q, "pathlib.PurePath") == 0 || strcmp(q, "os.fspath") == 0) {
                                /* open(Path('/etc/passwd')): the Path is its literal */
                                PyObject *a = call_arg(node, 0, NULL);
                                s = a ? literal(pc, a) : NULL;
                                Py_XDECREF(a);
                        }
                }
                Py_XDECREF(func);
                return s;
        }
        return NULL;
}

/* The dotted name an expression stands for: os.path.join, a name imported as an alias, a
 * name assigned a dotted reference, a name star-imported from a module (if that module's
 * function is one the rules name). False if it stands for nothing known. */
static bool dotted(struct pc *pc, PyObject *node, char *out, size_t size)
{
        if (is(node, "Name")) {
                char id[NAME_MAX_LEN];
                if (!str_field(node, "id", id, sizeof(id)))
                        return false;
                const char *a = lookup(&pc->aliases, id);
                if (a && strcmp(a, id) != 0) {
                        snprintf(out, size, "%s", a);
                        return true;
                }
                for (size_t i = 0; i < pc->stars.n; i++) {
                        char q[NAME_MAX_LEN * 2];
                        snprintf(q, sizeof(q), "%s.%s", pc->stars.v[i].name, id);
                        const struct pol_path_arg *pa;
                        if (pol_call(q, NULL) != POL_WHY_NONE || pol_path_call(q, false, &pa) > 0)
                                return (size_t)snprintf(out, size, "%s", q) < size;
                }
                snprintf(out, size, "%s", id);
                return true;
        }
        if (is(node, "Attribute")) {
                PyObject *value = field(node, "value");
                char base[NAME_MAX_LEN], attr[NAME_MAX_LEN];
                bool ok = value && dotted(pc, value, base, sizeof(base)) && str_field(node, "attr", attr, sizeof(attr));
                Py_XDECREF(value);
                if (ok && (size_t)snprintf(out, size, "%s.%s", base, attr) >= size)
                        ok = false;
                return ok;
        }
        return false;
}

/* A call's argument: positional index pos, or keyword kw. New reference or NULL. */
static PyObject *call_arg(PyObject *call, int pos, const char *kw)
{
        if (pos >= 0) {
                PyObject *args = field(call, "args");
                if (args && PyList_Check(args) && pos < PyList_GET_SIZE(args)) {
                        PyObject *a = PyList_GET_ITEM(args, pos);
                        if (!is(a, "Starred")) {
                                Py_INCREF(a);
                                Py_DECREF(args);
                                return a;
                        }
                }
                Py_XDECREF(args);
        }
        if (kw) {
                PyObject *kws = field(call, "keywords");
                for (Py_ssize_t i = 0; kws && PyList_Check(kws) && i < PyList_GET_SIZE(kws); i++) {
                        PyObject *k = PyList_GET_ITEM(kws, i);
                        char name[NAME_MAX_LEN];
                        if (str_field(k, "arg", name, sizeof(name)) && strcmp(name, kw) == 0) {
                                PyObject *v = field(k, "value");
                                Py_DECREF(kws);
                                return v;
                        }
                }
                Py_XDECREF(kws);
        }
        return NULL;
}

/* The candidate strings of a path expression: a literal, or every literal a name was ever
 * assigned. */
static size_t candidates(struct pc *pc, PyObject *node, char **out, size_t max)
{
        char *l = literal(pc, node);
        if (l) {
                out[0] = l;
                return 1;
        }
        size_t n = 0;
        char id[NAME_MAX_LEN];
        if (is(node, "Name") && str_field(node, "id", id, sizeof(id)))
                for (size_t i = 0; i < pc->strings.n && n < max; i++)
                        if (strcmp(pc->strings.v[i].name, id) == 0)
                                out[n++] = strdup(pc->strings.v[i].value);
        return n;
}

/* ---- findings ---- */

static void report(struct pc *pc, PyObject *node, const char *op, enum pol_why why, const char *message)
{
        long line = int_field(node, "lineno"), col = int_field(node, "col_offset") + 1;
        char key[PATH_MAX + 64];
        snprintf(key, sizeof(key), "%ld:%ld:%s", line, col, message);
        if (lookup(&pc->seen, key))
                return;
        bind(&pc->seen, key, "");
        if (pc->findings++ >= FINDINGS_MAX)
                return;
        runner_event(pc->r, "precheck", "blocked", op, pol_why_text(why), message, line, col, NULL);
}

static void finding(struct pc *pc, PyObject *node, const char *op, enum pol_why why)
{
        char msg[PATH_MAX + 128];
        POL_REASON(msg, sizeof(msg), PRECHECK_BLOCKED, op, pol_why_text(why));
        report(pc, node, op, why, msg);
}

static void check_module(struct pc *pc, PyObject *node, const char *module)
{
        enum pol_why w = pol_module(module, &pc->r->caps);
        if (w != POL_WHY_NONE) {
                /* The operation as shown: the module's name cut to NAME_MAX_LEN (a longer one
                 * is judged whole by pol_module, above). */
                char op[NAME_MAX_LEN + 8];
                snprintf(op, sizeof(op), "import %.*s", NAME_MAX_LEN, module);
                finding(pc, node, op, w);
        }
}

/* "scheme://...": the length of its scheme (a letter, then letters, digits, '+', '-', '.'),
 * or 0 if path is no URL. */
static size_t url_scheme(const char *path)
{
        const char *sep = strstr(path, "://");
        if (!sep || sep == path || !((path[0] | 0x20) >= 'a' && (path[0] | 0x20) <= 'z'))
                return 0;
        for (const char *p = path; p < sep; p++)
                if (!((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') && !(*p >= '0' && *p <= '9') && *p != '+' &&
                    *p != '-' && *p != '.')
                        return 0;
        return (size_t)(sep - path);
}

static void check_path(struct pc *pc, PyObject *node, const char *path, bool write)
{
        /* A URL where a path may go (pd.read_csv, read_json, urlopen, to_csv('s3://...')) is a
         * network attempt, not a file: refused as one unless the network capability was
         * granted (then the audit hook judges the connection). file:// names a path. */
        size_t scheme = url_scheme(path);
        if (scheme == 4 && strncasecmp(path, "file", 4) == 0)
                path += 7;
        else if (scheme) {
                if (pc->r->caps.granted[POL_CAP_NETWORK])
                        return;
                char op[PATH_MAX + 16];
                snprintf(op, sizeof(op), "open URL '%s'", path);
                finding(pc, node, op, POL_WHY_NETWORK_CAP);
                return;
        }
        if (!path[0] || strcmp(path, ":memory:") == 0 || strncmp(path, "file::memory:", 13) == 0 ||
            (pc->chdir && path[0] != '/'))
                return;
        char resolved[PATH_MAX];
        if (pol_path_resolve(path, pc->r->workdir, runner_realpath, NULL, resolved, sizeof(resolved)) < 0)
                return;
        enum pol_access acc = write ? POL_ACCESS_WRITE : POL_ACCESS_READ;
        if (pol_path_verdict(resolved, acc, &pc->r->roots) == POL_WHY_NONE)
                return;
        char roots[512], msg[PATH_MAX + 640];
        pol_roots_display(&pc->r->roots, write, roots, sizeof(roots));
        if (write)
                POL_REASON(msg, sizeof(msg), PRECHECK_WRITE_PATH, path, roots);
        else
                POL_REASON(msg, sizeof(msg), PRECHECK_READ_PATH, path, roots);
        char op[PATH_MAX + 16];
        snprintf(op, sizeof(op), "%s path '%s'", write ? "write" : "read", path);
        report(pc, node, op, write ? POL_WHY_WRITE : POL_WHY_READ, msg);
}

/* Does the mode (or flags) argument of a call write? Unknown modes count as reads: the
 * audit hook sees the real one. */
static bool call_writes(struct pc *pc, PyObject *call, const struct pol_path_arg *a)
{
        PyObject *m = call_arg(call, a->mode_pos, a->mode_kw);
        bool w = false;
        if (a->access == POL_ACCESS_MODE) {
                _cleanup_free_ char *mode = m ? literal(pc, m) : NULL;
                const char *eff = mode ? mode : (m ? NULL : a->mode_default);
                w = eff && pol_mode_writes(eff);
        } else if (m) {
                /* os.open flags: any of the writing flags named in the expression (its dump,
                 * by our own ast module: nothing of the tool runs). */
                PyObject *ast = PyImport_ImportModule("ast");
                PyObject *text = ast ? PyObject_CallMethod(ast, "dump", "O", m) : NULL;
                const char *t = text ? PyUnicode_AsUTF8(text) : NULL;
                w = t && (strstr(t, "O_WRONLY") || strstr(t, "O_RDWR") || strstr(t, "O_CREAT") ||
                          strstr(t, "O_TRUNC") || strstr(t, "O_APPEND"));
                Py_XDECREF(text);
                Py_XDECREF(ast);
                PyErr_Clear();
        }
        Py_XDECREF(m);
        return w;
}

/* True if the call passes a dir_fd, src_dir_fd, dst_dir_fd or opener that is not the literal
 * None: its relative paths are then relative to a directory only known at run time (an
 * opener may open them with a dir_fd). */
static bool has_dir_fd(PyObject *call)
{
        PyObject *kws = field(call, "keywords");
        bool found = false;
        for (Py_ssize_t i = 0; kws && PyList_Check(kws) && i < PyList_GET_SIZE(kws) && !found; i++) {
                PyObject *k = PyList_GET_ITEM(kws, i);
                char name[NAME_MAX_LEN];
                size_t len;
                if (!str_field(k, "arg", name, sizeof(name)) ||
                    (strcmp(name, "opener") != 0 && ((len = strlen(name)) < 6 || strcmp(name + len - 6, "dir_fd") != 0)))
                        continue;
                PyObject *v = field(k, "value");
                PyObject *c = v && is(v, "Constant") ? field(v, "value") : NULL;
                found = c != Py_None;
                Py_XDECREF(c);
                Py_XDECREF(v);
        }
        Py_XDECREF(kws);
        PyErr_Clear();
        return found;
}

static void check_path_args(struct pc *pc, PyObject *call, const struct pol_path_arg *args, size_t n,
                            const char *self_path)
{
        /* With a dir_fd or an opener, a relative path is judged at run time, by the audit
         * hook, which sees the directory (os.unlink('part.csv', dir_fd=fd) is not ./part.csv). */
        bool dir_fd = has_dir_fd(call);
        for (size_t i = 0; i < n; i++) {
                const struct pol_path_arg *a = &args[i];
                bool write = a->access == POL_ACCESS_WRITE ||
                             ((a->access == POL_ACCESS_MODE || a->access == POL_ACCESS_FLAGS) && call_writes(pc, call, a));
                bool or_create = a->access == POL_ACCESS_OPEN_OR_CREATE;
                if (a->pos < 0 && !a->kw) { /* the object's own path */
                        if (self_path)
                                check_path(pc, call, self_path, write);
                        continue;
                }
                PyObject *arg = call_arg(call, a->pos, a->kw);
                if (!arg)
                        continue;
                char *c[16];
                size_t k = candidates(pc, arg, c, 16);
                for (size_t j = 0; j < k; j++) {
                        char cand[PATH_MAX];
                        bool w = write;
                        if (dir_fd && c[j][0] != '/') {
                                free(c[j]);
                                continue;
                        }
                        if (or_create)
                                w = pol_path_resolve(c[j], pc->r->workdir, runner_realpath, NULL, cand, sizeof(cand)) < 0 ||
                                    access(cand, F_OK) < 0;
                        check_path(pc, call, c[j], w);
                        free(c[j]);
                }
                Py_DECREF(arg);
        }
}

/* The literal of Path(literal), or of a name bound to one, or Path(literal) / 'x'. */
static char *path_object(struct pc *pc, PyObject *node)
{
        if (is(node, "Call")) {
                PyObject *func = field(node, "func");
                char q[NAME_MAX_LEN];
                char *s = NULL;
                if (func && dotted(pc, func, q, sizeof(q)) &&
                    (strcmp(q, "pathlib.Path") == 0 || strcmp(q, "pathlib.PosixPath") == 0 ||
                     strcmp(q, "pathlib.PurePath") == 0)) {
                        PyObject *a = call_arg(node, 0, NULL);
                        s = a ? literal(pc, a) : NULL;
                        Py_XDECREF(a);
                }
                Py_XDECREF(func);
                return s;
        }
        if (is(node, "BinOp")) {
                PyObject *op = field(node, "op"), *l = field(node, "left"), *rt = field(node, "right");
                char *s = NULL;
                if (is(op, "Div")) {
                        _cleanup_free_ char *a = path_object(pc, l);
                        _cleanup_free_ char *b = literal(pc, rt);
                        if (a && b && (s = malloc(strlen(a) + strlen(b) + 2)))
                                sprintf(s, b[0] == '/' ? "%.0s%s" : "%s/%s", a, b);
                }
                Py_XDECREF(op);
                Py_XDECREF(l);
                Py_XDECREF(rt);
                return s;
        }
        char id[NAME_MAX_LEN];
        if (is(node, "Name") && str_field(node, "id", id, sizeof(id))) {
                const char *v = lookup(&pc->paths, id);
                return v ? strdup(v) : NULL;
        }
        return NULL;
}

static void check_call(struct pc *pc, PyObject *call)
{
        PyObject *func = field(call, "func");
        if (!func)
                return;
        char q[NAME_MAX_LEN];
        bool named = dotted(pc, func, q, sizeof(q));
        if (named) {
                if (strcmp(q, "importlib.import_module") == 0) {
                        PyObject *a = call_arg(call, 0, "name");
                        _cleanup_free_ char *mod = a ? literal(pc, a) : NULL;
                        if (mod)
                                check_module(pc, call, mod);
                        else
                                finding(pc, call, "importlib.import_module", POL_WHY_DYNAMIC);
                        Py_XDECREF(a);
                } else {
                        enum pol_why w = pol_call(q, &pc->r->caps);
                        if (w != POL_WHY_NONE)
                                finding(pc, call, q, w);
                }
                if (strcmp(q, "getattr") == 0 || strcmp(q, "setattr") == 0 || strcmp(q, "delattr") == 0 ||
                    strcmp(q, "hasattr") == 0) {
                        PyObject *a = call_arg(call, 1, NULL);
                        _cleanup_free_ char *attr = a ? literal(pc, a) : NULL;
                        if (attr && pol_attr(attr) != POL_WHY_NONE) {
                                char op[NAME_MAX_LEN + 16];
                                snprintf(op, sizeof(op), "attribute %s", attr);
                                finding(pc, call, op, POL_WHY_INTROSPECTION);
                        }
                        Py_XDECREF(a);
                }
        }
        /* Calls that take paths: a function by its qualified name; else a method by its name,
         * whatever its object, or a Path's method on the Path's own path. */
        const struct pol_path_arg *pa;
        size_t n = named ? pol_path_call(q, false, &pa) : 0;
        if (n)
                check_path_args(pc, call, pa, n, NULL);
        else if (is(func, "Attribute")) {
                char m[NAME_MAX_LEN];
                PyObject *obj = field(func, "value");
                if (obj && str_field(func, "attr", m, sizeof(m))) {
                        _cleanup_free_ char *self = path_object(pc, obj);
                        if (self)
                                n = pol_path_self_method(m, &pa);
                        if (!n)
                                n = pol_path_call(m, true, &pa);
                        if (n)
                                check_path_args(pc, call, pa, n, self);
                }
                Py_XDECREF(obj);
        }
        Py_DECREF(func);
}

/* ---- the two passes ---- */

static void learn(struct pc *pc, PyObject *node)
{
        if (is(node, "Import")) {
                PyObject *names = field(node, "names");
                for (Py_ssize_t i = 0; names && i < PyList_GET_SIZE(names); i++) {
                        PyObject *al = PyList_GET_ITEM(names, i);
                        char name[NAME_MAX_LEN], as[NAME_MAX_LEN];
                        if (!str_field(al, "name", name, sizeof(name)))
                                continue;
                        if (str_field(al, "asname", as, sizeof(as)))
                                bind(&pc->aliases, as, name);
                        else {
                                char root[NAME_MAX_LEN];
                                snprintf(root, sizeof(root), "%s", name);
                                root[strcspn(root, ".")] = 0;
                                bind(&pc->aliases, root, root);
                        }
                }
                Py_XDECREF(names);
        } else if (is(node, "ImportFrom")) {
                char module[NAME_MAX_LEN];
                PyObject *names = field(node, "names");
                if (int_field(node, "level") == 0 && str_field(node, "module", module, sizeof(module)))
                        for (Py_ssize_t i = 0; names && i < PyList_GET_SIZE(names); i++) {
                                PyObject *al = PyList_GET_ITEM(names, i);
                                char name[NAME_MAX_LEN], as[NAME_MAX_LEN], q[NAME_MAX_LEN * 2];
                                if (!str_field(al, "name", name, sizeof(name)))
                                        continue;
                                if (strcmp(name, "*") == 0) {
                                        bind(&pc->stars, module, "");
                                        continue;
                                }
                                snprintf(q, sizeof(q), "%s.%s", module, name);
                                bind(&pc->aliases, str_field(al, "asname", as, sizeof(as)) ? as : name, q);
                        }
                Py_XDECREF(names);
        } else if (is(node, "Assign") || is(node, "AnnAssign")) {
                PyObject *targets = field(node, "targets");
                PyObject *target = field(node, "target");
                PyObject *value = field(node, "value");
                PyObject *list = targets ? targets : NULL;
                Py_ssize_t n = list ? PyList_GET_SIZE(list) : (target ? 1 : 0);
                for (Py_ssize_t i = 0; value && value != Py_None && i < n; i++) {
                        PyObject *t = list ? PyList_GET_ITEM(list, i) : target;
                        char id[NAME_MAX_LEN], q[NAME_MAX_LEN];
                        if (!is(t, "Name") || !str_field(t, "id", id, sizeof(id)))
                                continue;
                        _cleanup_free_ char *s = literal(pc, value);
                        _cleanup_free_ char *p = path_object(pc, value);
                        if (s)
                                bind(&pc->strings, id, s);
                        else if (p)
                                bind(&pc->paths, id, p);
                        else if ((is(value, "Name") || is(value, "Attribute")) && dotted(pc, value, q, sizeof(q)) &&
                                 strcmp(q, id) != 0)
                                bind(&pc->aliases, id, q);
                }
                Py_XDECREF(targets);
                Py_XDECREF(target);
                Py_XDECREF(value);
        }
}

/* A tool that changes its working directory (os.chdir('artifacts'), contextlib.chdir) makes
 * its relative paths relative to a directory known only at run time: the pre-check leaves
 * them to the audit hook, which sees the real cwd, rather than judge them from the wrong one. */
static void find_chdir(struct pc *pc, PyObject *node)
{
        if (pc->chdir || !is(node, "Call"))
                return;
        PyObject *func = field(node, "func");
        char q[NAME_MAX_LEN];
        if (func && dotted(pc, func, q, sizeof(q)) &&
            (strcmp(q, "os.chdir") == 0 || strcmp(q, "os.fchdir") == 0 || strcmp(q, "posix.chdir") == 0 ||
             strcmp(q, "posix.fchdir") == 0 || strcmp(q, "contextlib.chdir") == 0))
                pc->chdir = true;
        Py_XDECREF(func);
}

/* A module's name, as str_field, but one longer than the buffer is cut at the last dot that
 * fits rather than skipped: `import socket.x.x...` of 800 bytes imports socket first, and a
 * name too long to copy must not be a name never judged. */
static bool module_field(PyObject *node, const char *name, char *buf, size_t size)
{
        if (str_field(node, name, buf, size))
                return true;
        PyObject *v = field(node, name);
        bool ok = false;
        const char *s = v && PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (s) {
                size_t n = size - 1;
                while (n > 0 && s[n] != '.')
                        n--;
                if (n > 0) {
                        memcpy(buf, s, n);
                        buf[n] = '\0';
                        ok = true;
                }
        }
        Py_XDECREF(v);
        PyErr_Clear();
        return ok;
}

/* A name the pre-check cannot hold (NAME_MAX_LEN) would pass unjudged (an alias of 300 bytes
 * for os.system): refused, fail closed. No real tool names anything so. */
static void check_name_len(struct pc *pc, PyObject *node, const char *name)
{
        PyObject *v = field(node, name);
        Py_ssize_t len = 0;
        if (v && PyUnicode_Check(v) && PyUnicode_AsUTF8AndSize(v, &len) && len >= NAME_MAX_LEN) {
                char op[64];
                snprintf(op, sizeof(op), "a name of %zd bytes", len);
                finding(pc, node, op, POL_WHY_NAME_LONG);
        }
        Py_XDECREF(v);
        PyErr_Clear();
}

static void judge(struct pc *pc, PyObject *node)
{
        if (is(node, "Name"))
                check_name_len(pc, node, "id");
        else if (is(node, "Attribute"))
                check_name_len(pc, node, "attr");
        else if (is(node, "alias")) {
                check_name_len(pc, node, "name");
                check_name_len(pc, node, "asname");
        } else if (is(node, "ImportFrom"))
                check_name_len(pc, node, "module");
        if (is(node, "Import")) {
                PyObject *names = field(node, "names");
                for (Py_ssize_t i = 0; names && i < PyList_GET_SIZE(names); i++) {
                        char name[NAME_MAX_LEN];
                        if (module_field(PyList_GET_ITEM(names, i), "name", name, sizeof(name)))
                                check_module(pc, node, name);
                }
                Py_XDECREF(names);
        } else if (is(node, "ImportFrom")) {
                char module[NAME_MAX_LEN];
                PyObject *names = field(node, "names");
                if (int_field(node, "level") == 0 && module_field(node, "module", module, sizeof(module))) {
                        size_t before = (size_t)pc->findings;
                        check_module(pc, node, module);
                        /* from http import client: the package is fine, the module is not */
                        for (Py_ssize_t i = 0; (size_t)pc->findings == before && names && i < PyList_GET_SIZE(names); i++) {
                                char name[NAME_MAX_LEN], q[NAME_MAX_LEN * 2];
                                if (str_field(PyList_GET_ITEM(names, i), "name", name, sizeof(name)) &&
                                    strcmp(name, "*") != 0) {
                                        snprintf(q, sizeof(q), "%s.%s", module, name);
                                        if (pol_module(q, &pc->r->caps) != POL_WHY_NONE)
                                                check_module(pc, node, q);
                                }
                        }
                }
                Py_XDECREF(names);
        } else if (is(node, "Call")) {
                check_call(pc, node);
        } else if (is(node, "Attribute")) {
                char attr[NAME_MAX_LEN];
                if (str_field(node, "attr", attr, sizeof(attr)) && pol_attr(attr) != POL_WHY_NONE) {
                        char op[NAME_MAX_LEN + 16];
                        snprintf(op, sizeof(op), "attribute %s", attr);
                        finding(pc, node, op, POL_WHY_INTROSPECTION);
                }
        } else if (is(node, "Name")) {
                char id[NAME_MAX_LEN];
                if (str_field(node, "id", id, sizeof(id)) && strcmp(id, "__builtins__") == 0)
                        finding(pc, node, "attribute __builtins__", POL_WHY_INTROSPECTION);
        }
}

/* Visits node and everything below it, depth first, with fn. */
static void walk(struct pc *pc, PyObject *node, void (*fn)(struct pc *, PyObject *), int depth)
{
        if (depth > 500 || pc->failed)
                return; /* deeper than CPython's own parser goes: nothing to judge there */
        int isast = PyObject_IsInstance(node, pc->ast_type);
        if (isast <= 0) {
                PyErr_Clear();
                return;
        }
        fn(pc, node);
        PyObject *fields = PyObject_GetAttrString((PyObject *)Py_TYPE(node), "_fields");
        for (Py_ssize_t i = 0; fields && PyTuple_Check(fields) && i < PyTuple_GET_SIZE(fields); i++) {
                const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(fields, i));
                PyObject *v = name ? field(node, name) : NULL;
                if (v && PyList_Check(v)) {
                        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(v); j++)
                                walk(pc, PyList_GET_ITEM(v, j), fn, depth + 1);
                } else if (v)
                        walk(pc, v, fn, depth + 1);
                Py_XDECREF(v);
        }
        Py_XDECREF(fields);
        PyErr_Clear();
}

int precheck_run(struct runner *r, const char *source)
{
        struct pc pc = { .r = r };
        PyObject *ast = PyImport_ImportModule("ast");
        pc.ast_type = ast ? PyObject_GetAttrString(ast, "AST") : NULL;
        PyObject *tree = ast ? PyObject_CallMethod(ast, "parse", "ss", source, TOOL_NAME) : NULL;
        if (!ast || !pc.ast_type) {
                PyErr_Print();
                Py_XDECREF(ast);
                return -1;
        }
        if (!tree) {
                PyErr_Clear(); /* a SyntaxError: compiling the tool reports it as Python would */
                Py_DECREF(pc.ast_type);
                Py_DECREF(ast);
                return 0;
        }
        walk(&pc, tree, learn, 0);
        walk(&pc, tree, find_chdir, 0);
        walk(&pc, tree, judge, 0);
        Py_DECREF(tree);
        Py_DECREF(pc.ast_type);
        Py_DECREF(ast);
        bindings_free(&pc.aliases);
        bindings_free(&pc.strings);
        bindings_free(&pc.paths);
        bindings_free(&pc.stars);
        bindings_free(&pc.seen);
        return pc.findings;
}
