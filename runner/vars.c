/* Variables between an agent's steps, and final_answer (DESIGN §8). In an agent's loop each
 * code action is one run; what passes from one to the next is JSON-serialisable variables
 * only, and the model ends with final_answer(value).
 *
 * In (R6a): the run spec's `variables`, a JSON object as text, is decoded here with Python's
 * own json module (inside the jail: untrusted parsing belongs here) and each key bound as a
 * global of __main__. It is strict: NaN and Infinity (which Python's json would take) and a
 * key given twice anywhere are refused, and each name must be one a tool can use
 * (policy/variables.c: an identifier, no keyword, not private or dunder, no builtin's name,
 * at most 128 bytes; at most 1000 of them). A request that breaks a rule is refused whole,
 * before the pre-check and before the tool's first line, with event "refused", op
 * "variables": the supervisor answers with an error frame bad_request, not a result.
 * This runs under every layer of the jail (R6: Landlock seen enforced, the seccomp filter
 * loaded and seen from outside by the supervisor, no_new_privs, the namespaces, fds 0-3,
 * besides the rlimits and the cgroup), and before the audit hook is armed (R6c: it is not the
 * tool's doing). Nothing of the data can run: json's C scanner builds only dicts, lists,
 * strings, numbers, booleans and None, and calls no code but the two hooks below (C); 1 MiB
 * of text bounds the work. What it asks of the kernel (importing json: openat, newfstatat,
 * read, lseek, ioctl TCGETS, mmap, close) is nothing the filter refuses (policy/seccomp_rules.c);
 * what needs no data of the request's, final_answer and the encoder's parts, is set up
 * before the filter, by vars_init (R5).
 *
 * Out (R9a): after the tool's last line, whether it ended or raised, the globals of __main__
 * it left (names starting with '_' are not variables) are judged one by one, in their order:
 * the name rules again, then modules, functions and classes (not values), then the count, then
 * the value must encode with CPython's C encoder (the json module's own, taken before any
 * tool code ran, so a tool that patches json changes nothing here; no NaN, nesting at most
 * POL_VARIABLES_DEPTH_MAX) into text that fits what is left of PROTO_VARIABLES_MAX. What
 * passes is kept, in one JSON object, so that the next step's request accepts it; the rest is
 * listed with its type and why (at most PROTO_VARIABLES_DROPPED_MAX; all are counted). One
 * event "variables" carries both. A killed tool never gets here.
 *
 * final_answer(value) is a builtin: it encodes the value as above (a TypeError if it cannot, a
 * ValueError beyond PROTO_FINAL_ANSWER_MAX), writes event "final_answer" with the JSON, and
 * raises anvil.FinalAnswer, a SystemExit with code 0: the tool ends successfully, its
 * variables are collected as for any end. Called again (a tool that caught the exit), the
 * last value is the one the result keeps. It is C, holds nothing of the runner's, and does
 * nothing the tool could not do itself (json, and a write to fd 3): what it runs of the
 * tool's (a list or dict subclass's own methods, while encoding) runs in the tool's frames,
 * judged by the audit hook as the tool's. */
#include "runner/runner.h"

#include <stdio.h>
#include <string.h>

#include "lib/utf8.h"
#include "policy/variables.h"

#define CAUSE_MAX 200 /* bytes of a cause in a reason (the field holds EV_SHORT) */

static struct runner *V;
static PyObject *make_encoder;   /* _json.make_encoder */
static PyObject *encode_str;     /* _json.encode_basestring: text as UTF-8, not \u escapes */
static PyObject *keywords;       /* frozenset(keyword.kwlist) */
static PyObject *builtin_names;  /* frozenset of the builtins' names, final_answer included */
static PyObject *default_fn;     /* the encoder's default: refuses what JSON cannot hold */
static PyObject *final_answer_exc;
static PyObject *pairs_fn, *constant_fn;
static const void *not_json_obj; /* what default_fn was last called with (compared, never used) */
static char refusal[512];        /* set by the decoder's hooks, for a refusal of their own */

/* ---- small helpers ---- */

/* The last part of a type's name: "DataFrame", "ndarray", "set", "module". */
static const char *type_name(PyObject *o)
{
        const char *n = Py_TYPE(o)->tp_name;
        const char *dot = strrchr(n, '.');
        return dot ? dot + 1 : n;
}

/* Copies at most max bytes of s (cut at a character), NUL bytes as U+FFFD. */
static char *text_cut(const char *s, size_t n, size_t max)
{
        if (n > max) {
                n = max;
                while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
                        n--;
        }
        return utf8_sanitize((const uint8_t *)s, n, NULL);
}

/* str() of the pending exception, cut, valid UTF-8; the exception is cleared. */
static void take_cause(char *buf, size_t size)
{
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        PyObject *s = value ? PyObject_Str(value) : NULL;
        Py_ssize_t n = 0;
        const char *u = s ? PyUnicode_AsUTF8AndSize(s, &n) : NULL;
        PyErr_Clear();
        if (!u || n == 0) {
                u = type ? ((PyTypeObject *)type)->tp_name : "an error";
                n = (Py_ssize_t)strlen(u);
        }
        char *c = text_cut(u, (size_t)n, size - 1 < CAUSE_MAX ? size - 1 : CAUSE_MAX);
        snprintf(buf, size, "%s", c ? c : "an error");
        free(c);
        Py_XDECREF(s);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
}

/* ---- encoding ---- */

static PyObject *refuse_default(PyObject *self, PyObject *o)
{
        (void)self;
        char msg[160];
        not_json_obj = o;
        PyErr_SetString(PyExc_TypeError, POL_REASON(msg, sizeof(msg), VARIABLE_HOLDS, type_name(o)));
        return NULL;
}

static PyMethodDef default_def = { "not_json", refuse_default, METH_O, "refuses what JSON cannot hold" };

/* v as compact JSON text (a str), or NULL with the exception set. Uses only what was taken
 * before the tool's first line, never the json module as the tool may have left it. */
static PyObject *encode(PyObject *v)
{
        PyObject *markers = PyDict_New(); /* circular references are an error, not a recursion */
        PyObject *enc = markers ? PyObject_CallFunction(make_encoder, "OOOOssiii", markers, default_fn, encode_str,
                                                        Py_None, ":", ",", 0, 0, 0)
                                : NULL;
        PyObject *chunks = enc ? PyObject_CallFunction(enc, "Oi", v, 0) : NULL;
        PyObject *empty = chunks ? PyUnicode_FromStringAndSize("", 0) : NULL;
        PyObject *text = empty ? PyUnicode_Join(empty, chunks) : NULL;
        Py_XDECREF(empty);
        Py_XDECREF(chunks);
        Py_XDECREF(enc);
        Py_XDECREF(markers);
        return text;
}

/* Encodes v into UTF-8 JSON: 0 with *text (a new str) and its bytes, or -1 with why it cannot
 * be (a VARIABLE_NOT_JSON reason) in reason; the exception then is still pending, for the
 * caller to clear or raise. */
static int encode_utf8(PyObject *v, PyObject **text, const char **utf8, Py_ssize_t *len, char *reason, size_t size)
{
        const void *saved = not_json_obj;
        not_json_obj = NULL;
        *text = encode(v);
        *utf8 = *text ? PyUnicode_AsUTF8AndSize(*text, len) : NULL; /* a lone surrogate: no UTF-8 */
        bool top = not_json_obj == v;
        not_json_obj = saved;
        if (*utf8)
                return 0;
        Py_CLEAR(*text);
        if (top) {
                POL_REASON(reason, size, VARIABLE_NOT_JSON);
                return -1;
        }
        /* The cause, without losing the exception: fetched, formatted, restored. */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        Py_XINCREF(type);
        Py_XINCREF(value);
        Py_XINCREF(tb);
        PyErr_Restore(type, value, tb);
        char cause[CAUSE_MAX + 1];
        take_cause(cause, sizeof(cause));
        PyErr_Restore(type, value, tb);
        POL_REASON(reason, size, VARIABLE_NOT_JSON_WHY, cause);
        return -1;
}

/* ---- final_answer ---- */

static PyObject *final_answer(PyObject *self, PyObject *value)
{
        (void)self;
        PyObject *text;
        const char *utf8;
        Py_ssize_t len = 0;
        char reason[PROTO_REASON_MAX], msg[PROTO_REASON_MAX + 160];
        if (encode_utf8(value, &text, &utf8, &len, reason, sizeof(reason)) < 0) {
                /* What says the value is not JSON becomes the tool's TypeError; anything else
                 * (a refusal of the audit hook in a method of the tool's, an exit) goes on as
                 * it was raised, so that it ends the tool as it would anywhere. */
                if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError) &&
                    !PyErr_ExceptionMatches(PyExc_RecursionError))
                        return NULL;
                if (V->sandbox_blocked && PyErr_ExceptionMatches(V->sandbox_blocked))
                        return NULL;
                PyErr_Clear();
                char tn[PROTO_NAME_MAX + 1];
                snprintf(tn, sizeof(tn), "%s", type_name(value));
                PyErr_SetString(PyExc_TypeError, POL_REASON(msg, sizeof(msg), FINAL_ANSWER_NOT_JSON, tn, reason));
                return NULL;
        }
        if ((size_t)len > PROTO_FINAL_ANSWER_MAX) {
                Py_DECREF(text);
                PyErr_SetString(PyExc_ValueError, POL_REASON(msg, sizeof(msg), FINAL_ANSWER_TOO_LARGE,
                                                             (unsigned long long)len,
                                                             (unsigned long long)PROTO_FINAL_ANSWER_MAX));
                return NULL;
        }
        struct proto_msg m = { .type = PROTO_RUNNER_EVENT };
        m.u.runner_event.event.layer = "runner";
        m.u.runner_event.event.kind = "final_answer";
        m.u.runner_event.event.message = POL_REASON(msg, sizeof(msg), FINAL_ANSWER, (unsigned long long)len);
        m.u.runner_event.final_answer = (char *)utf8; /* valid UTF-8, no NUL (JSON escapes it) */
        runner_send(V, &m);
        Py_DECREF(text);
        PyObject *zero = PyLong_FromLong(0);
        if (zero) {
                PyErr_SetObject(final_answer_exc, zero);
                Py_DECREF(zero);
        }
        return NULL;
}

/* final_answer(value), or final_answer(answer=value) as smolagents' tool is called (its
 * parameter's name; value=, the name our prompt shows, too). */
static PyObject *final_answer_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
        Py_ssize_t nargs = PyTuple_GET_SIZE(args), nkw = kwargs ? PyDict_GET_SIZE(kwargs) : 0;
        PyObject *value = NULL; /* borrowed */
        if (nargs == 1 && nkw == 0)
                value = PyTuple_GET_ITEM(args, 0);
        else if (nargs == 0 && nkw == 1 && !(value = PyDict_GetItemString(kwargs, "answer")))
                value = PyDict_GetItemString(kwargs, "value");
        if (!value) {
                char msg[PROTO_REASON_MAX];
                PyErr_SetString(PyExc_TypeError, POL_REASON(msg, sizeof(msg), FINAL_ANSWER_ARGS));
                return NULL;
        }
        return final_answer(self, value);
}

static PyMethodDef final_answer_def = {
        "final_answer", (PyCFunction)(void (*)(void))final_answer_call, METH_VARARGS | METH_KEYWORDS,
        "final_answer(value), or final_answer(answer=value): records value (JSON-serialisable) as the run's final "
        "answer and ends the tool successfully (raises anvil.FinalAnswer, a SystemExit with code 0)."
};

/* ---- decoding ---- */

/* object_pairs_hook: a dict, or a refusal if a key is given twice (Python's json keeps the
 * last, another decoder the first: the same text must not mean two things). */
static PyObject *pairs_hook(PyObject *self, PyObject *pairs)
{
        (void)self;
        PyObject *d = PyDict_New();
        Py_ssize_t n = PyList_Check(pairs) ? PyList_GET_SIZE(pairs) : -1;
        for (Py_ssize_t i = 0; d && i < n; i++) {
                PyObject *kv = PyList_GET_ITEM(pairs, i);
                if (!PyTuple_Check(kv) || PyTuple_GET_SIZE(kv) != 2) {
                        Py_CLEAR(d);
                        PyErr_SetString(PyExc_ValueError, "object_pairs_hook: not a pair");
                        break;
                }
                PyObject *k = PyTuple_GET_ITEM(kv, 0);
                int has = PyDict_Contains(d, k);
                if (has != 0) {
                        if (has > 0) {
                                Py_ssize_t kn = 0;
                                const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8AndSize(k, &kn) : NULL;
                                char shown[100];
                                PyErr_Clear();
                                pol_var_show(ks ? ks : "?", ks ? (size_t)kn : 1, shown, sizeof(shown));
                                POL_REASON(refusal, sizeof(refusal), VARIABLES_DUPLICATE, shown);
                                PyErr_SetString(PyExc_ValueError, refusal);
                        }
                        Py_CLEAR(d);
                        break;
                }
                if (PyDict_SetItem(d, k, PyTuple_GET_ITEM(kv, 1)) < 0)
                        Py_CLEAR(d);
        }
        if (n < 0 && d) {
                Py_CLEAR(d);
                PyErr_SetString(PyExc_ValueError, "object_pairs_hook: not a list");
        }
        return d;
}

/* parse_constant: NaN, Infinity and -Infinity are not JSON. */
static PyObject *constant_hook(PyObject *self, PyObject *name)
{
        (void)self;
        const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        PyErr_Clear();
        char inner[64];
        POL_REASON(inner, sizeof(inner), VARIABLES_CONSTANT, s ? s : "?");
        POL_REASON(refusal, sizeof(refusal), VARIABLES_NOT_JSON, inner);
        PyErr_SetString(PyExc_ValueError, refusal);
        return NULL;
}

static PyMethodDef pairs_def = { "object_pairs_hook", pairs_hook, METH_O, NULL };
static PyMethodDef constant_def = { "parse_constant", constant_hook, METH_O, NULL };

static const char *json_kind(PyObject *o)
{
        if (PyList_Check(o))
                return "an array";
        if (PyUnicode_Check(o))
                return "a string";
        if (PyBool_Check(o))
                return "a boolean";
        if (PyLong_Check(o) || PyFloat_Check(o))
                return "a number";
        return "null";
}

static enum pol_why name_why(PyObject *k, const char **utf8, Py_ssize_t *len)
{
        *utf8 = PyUnicode_Check(k) ? PyUnicode_AsUTF8AndSize(k, len) : NULL;
        if (!*utf8) {
                PyErr_Clear();
                *utf8 = "?";
                *len = 1;
                return POL_WHY_VAR_NOT_IDENTIFIER; /* not a str, or a lone surrogate in it */
        }
        int ident = PyUnicode_IsIdentifier(k);
        int kw = PySet_Contains(keywords, k);
        int bi = PySet_Contains(builtin_names, k);
        PyErr_Clear();
        return pol_var_name(*utf8, (size_t)*len, ident > 0, kw > 0, bi > 0);
}

/* Decodes and binds; 0, or -1 with the refusal in msg. */
static int bind_variables(const char *text, PyObject *globals, char *msg, size_t size, unsigned long long *bound)
{
        refusal[0] = 0;
        PyObject *json = PyImport_ImportModule("json");
        PyObject *loads = json ? PyObject_GetAttrString(json, "loads") : NULL;
        PyObject *s = loads ? PyUnicode_FromString(text) : NULL;
        PyObject *args = s ? PyTuple_Pack(1, s) : NULL;
        PyObject *kw = args ? Py_BuildValue("{sOsO}", "object_pairs_hook", pairs_fn, "parse_constant", constant_fn) : NULL;
        PyObject *obj = kw ? PyObject_Call(loads, args, kw) : NULL;
        Py_XDECREF(kw);
        Py_XDECREF(args);
        Py_XDECREF(s);
        Py_XDECREF(loads);
        Py_XDECREF(json);
        int rc = -1;
        if (!obj) {
                if (refusal[0]) {
                        PyErr_Clear();
                        snprintf(msg, size, "%s", refusal);
                } else {
                        char cause[CAUSE_MAX + 1];
                        take_cause(cause, sizeof(cause));
                        POL_REASON(msg, size, VARIABLES_NOT_JSON, cause);
                }
                return -1;
        }
        if (!PyDict_Check(obj)) {
                POL_REASON(msg, size, VARIABLES_NOT_OBJECT, json_kind(obj));
                goto out;
        }
        if (PyDict_GET_SIZE(obj) > POL_VARIABLES_COUNT_MAX) {
                POL_REASON(msg, size, VARIABLES_TOO_MANY, (unsigned long long)PyDict_GET_SIZE(obj),
                           (unsigned)POL_VARIABLES_COUNT_MAX);
                goto out;
        }
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(obj, &pos, &k, &v)) {
                const char *name;
                Py_ssize_t len;
                enum pol_why why = name_why(k, &name, &len);
                if (why != POL_WHY_NONE) {
                        char shown[100];
                        pol_var_show(name, (size_t)len, shown, sizeof(shown));
                        POL_REASON(msg, size, VARIABLES_BAD_NAME, shown, pol_why_text(why));
                        goto out;
                }
        }
        if (PyDict_Update(globals, obj) < 0) {
                char cause[CAUSE_MAX + 1];
                take_cause(cause, sizeof(cause));
                POL_REASON(msg, size, VARIABLES_NOT_JSON, cause);
                goto out;
        }
        *bound = (unsigned long long)PyDict_GET_SIZE(obj);
        rc = 0;
out:
        Py_DECREF(obj);
        return rc;
}

/* ---- setup (R5) and binding (R6a) ---- */

static PyObject *attr_of(const char *module, const char *name)
{
        PyObject *m = PyImport_ImportModule(module);
        PyObject *a = m ? PyObject_GetAttrString(m, name) : NULL;
        Py_XDECREF(m);
        return a;
}

int vars_init(struct runner *r)
{
        V = r;
        make_encoder = attr_of("_json", "make_encoder");
        encode_str = attr_of("_json", "encode_basestring");
        PyObject *kwlist = attr_of("keyword", "kwlist");
        keywords = kwlist ? PyFrozenSet_New(kwlist) : NULL;
        Py_XDECREF(kwlist);
        default_fn = PyCFunction_New(&default_def, NULL);
        pairs_fn = PyCFunction_New(&pairs_def, NULL);
        constant_fn = PyCFunction_New(&constant_def, NULL);
        /* anvil.FinalAnswer, in the module audit.c adds SandboxBlocked to. */
        final_answer_exc = PyErr_NewExceptionWithDoc(
                "anvil.FinalAnswer", "Raised by final_answer(value) once the value is recorded: ends the tool with code 0.",
                PyExc_SystemExit, NULL);
        PyObject *anvil = final_answer_exc ? PyImport_AddModule("anvil") : NULL; /* borrowed */
        PyObject *fa = PyCFunction_New(&final_answer_def, NULL);
        PyObject *builtins = PyImport_ImportModule("builtins");
        if (!make_encoder || !encode_str || !keywords || !default_fn || !pairs_fn || !constant_fn || !anvil || !fa ||
            !builtins || PyModule_AddObjectRef(anvil, "FinalAnswer", final_answer_exc) < 0 ||
            PyModule_AddObjectRef(anvil, "final_answer", fa) < 0 ||
            PyObject_SetAttrString(builtins, "final_answer", fa) < 0) {
                PyErr_Print();
                Py_XDECREF(fa);
                Py_XDECREF(builtins);
                return -1;
        }
        Py_DECREF(fa);
        /* The builtins' names as they are now, before any tool code: the same in every run. */
        builtin_names = PyFrozenSet_New(PyModule_GetDict(builtins));
        Py_DECREF(builtins);
        if (!builtin_names) {
                PyErr_Print();
                return -1;
        }
        return 0;
}

int vars_bind(struct runner *r, const char *variables, char *msg, size_t size)
{
        msg[0] = 0;
        if (!variables)
                return 0;
        PyObject *main_mod = PyImport_AddModule("__main__"); /* borrowed */
        unsigned long long bound = 0;
        if (!main_mod) {
                PyErr_Print();
                return -2;
        }
        if (bind_variables(variables, PyModule_GetDict(main_mod), msg, size, &bound) < 0)
                return -1;
        char ev[128];
        runner_event(r, "runner", "variables_bound", NULL, NULL, POL_REASON(ev, sizeof(ev), VARIABLES_BOUND, bound),
                     0, 0, NULL);
        return 0;
}

/* ---- collection (R9a) ---- */

struct out {
        char *buf;
        size_t len, cap;
        unsigned long long kept, not_kept;
        struct proto_array dropped; /* of struct proto_variable_dropped */
};

/* Room for n more bytes and the NUL, so that a member is appended whole or not at all. */
static int out_reserve(struct out *o, size_t n)
{
        if (o->len + n + 1 > o->cap) {
                size_t cap = o->cap ? o->cap : 4096;
                while (o->len + n + 1 > cap)
                        cap *= 2;
                char *nb = realloc(o->buf, cap);
                if (!nb)
                        return -1;
                o->buf = nb;
                o->cap = cap;
        }
        return 0;
}

static int out_add(struct out *o, const char *s, size_t n)
{
        if (out_reserve(o, n) < 0)
                return -1;
        memcpy(o->buf + o->len, s, n);
        o->len += n;
        o->buf[o->len] = 0;
        return 0;
}

static void drop(struct out *o, const char *name, size_t len, PyObject *value, const char *reason)
{
        o->not_kept++;
        if (o->dropped.n >= PROTO_VARIABLES_DROPPED_MAX)
                return;
        struct proto_variable_dropped *d = proto_array_push(&o->dropped, sizeof(*d));
        if (!d)
                return;
        const char *tn = type_name(value);
        d->name = text_cut(name, len, PROTO_NAME_MAX);
        d->type = text_cut(tn, strlen(tn), PROTO_NAME_MAX);
        d->reason = text_cut(reason, strlen(reason), PROTO_REASON_MAX);
}

/* The fewest bytes of JSON v can take, when that is known without running any of its code. */
static uint64_t min_json(PyObject *v)
{
        if (PyList_CheckExact(v))
                return pol_var_min_json(POL_VAR_LIST, (uint64_t)PyList_GET_SIZE(v));
        if (PyTuple_CheckExact(v))
                return pol_var_min_json(POL_VAR_LIST, (uint64_t)PyTuple_GET_SIZE(v));
        if (PyDict_CheckExact(v))
                return pol_var_min_json(POL_VAR_DICT, (uint64_t)PyDict_GET_SIZE(v));
        if (PyUnicode_CheckExact(v))
                return pol_var_min_json(POL_VAR_STR, (uint64_t)PyUnicode_GET_LENGTH(v));
        return 1;
}

static void judge(struct out *o, PyObject *k, PyObject *v)
{
        const char *name;
        Py_ssize_t len;
        char reason[PROTO_REASON_MAX];
        enum pol_why why = name_why(k, &name, &len);
        if (why == POL_WHY_VAR_PRIVATE)
                return; /* _x, __name__, __builtins__: the module's or the tool's own, not variables */
        if (why == POL_WHY_NONE && PyModule_Check(v))
                why = POL_WHY_VAR_MODULE;
        else if (why == POL_WHY_NONE && (PyFunction_Check(v) || PyCFunction_Check(v) || PyMethod_Check(v) ||
                                         PyType_Check(v)))
                why = POL_WHY_VAR_CALLABLE;
        if (why != POL_WHY_NONE) {
                drop(o, name, (size_t)len, v, pol_why_text(why));
                return;
        }
        if (o->kept >= POL_VARIABLES_COUNT_MAX) {
                drop(o, name, (size_t)len, v, POL_REASON(reason, sizeof(reason), VARIABLE_TOO_MANY,
                                                           (unsigned)POL_VARIABLES_COUNT_MAX));
                return;
        }
        /* One byte for the closing brace is always kept free. */
        uint64_t room = PROTO_VARIABLES_MAX - 1 - o->len;
        POL_REASON(reason, sizeof(reason), VARIABLE_TOO_LARGE, (unsigned long long)PROTO_VARIABLES_MAX);
        if (pol_var_cost(o->kept, (size_t)len, 0) + min_json(v) > room) {
                drop(o, name, (size_t)len, v, reason);
                return;
        }
        PyObject *text;
        const char *utf8;
        Py_ssize_t n;
        if (encode_utf8(v, &text, &utf8, &n, reason, sizeof(reason)) < 0) {
                PyErr_Clear();
                drop(o, name, (size_t)len, v, reason);
                return;
        }
        if (pol_var_cost(o->kept, (size_t)len, (size_t)n) > room) {
                drop(o, name, (size_t)len, v,
                     POL_REASON(reason, sizeof(reason), VARIABLE_TOO_LARGE, (unsigned long long)PROTO_VARIABLES_MAX));
                Py_DECREF(text);
                return;
        }
        /* ,"name":value (an identifier needs no escapes), whole or not at all */
        if (out_reserve(o, (size_t)pol_var_cost(o->kept, (size_t)len, (size_t)n)) < 0) {
                drop(o, name, (size_t)len, v, reason);
                Py_DECREF(text);
                return;
        }
        if (o->kept)
                (void)out_add(o, ",", 1);
        (void)out_add(o, "\"", 1);
        (void)out_add(o, name, (size_t)len);
        (void)out_add(o, "\":", 2);
        (void)out_add(o, utf8, (size_t)n);
        o->kept++;
        Py_DECREF(text);
}

/* Python's own end waits for the tool's threads that are not daemons (threading._shutdown);
 * it is waited for first here, so that what they leave is collected too. */
static void join_threads(void)
{
        PyObject *name = PyUnicode_FromString("threading");
        PyObject *mod = name ? PyImport_GetModule(name) : NULL;
        Py_XDECREF(name);
        if (!mod) {
                PyErr_Clear();
                return;
        }
        PyObject *res = PyObject_CallMethod(mod, "_shutdown", NULL);
        if (!res)
                PyErr_Clear(); /* Py_FinalizeEx will report it */
        Py_XDECREF(res);
        Py_DECREF(mod);
}

void vars_collect(struct runner *r)
{
        join_threads();
        PyObject *main_mod = PyImport_AddModule("__main__"); /* borrowed */
        PyObject *items = main_mod ? PyDict_Items(PyModule_GetDict(main_mod)) : NULL; /* what the tool's code may change */
        if (!items) {
                PyErr_Clear();
                return;
        }
        int limit = Py_GetRecursionLimit();
        Py_SetRecursionLimit(POL_VARIABLES_DEPTH_MAX);
        struct out o = { 0 };
        /* The closing brace's room is kept free by judge(): reserved here with the opening. */
        if (out_reserve(&o, 2) < 0 || out_add(&o, "{", 1) < 0) {
                Py_SetRecursionLimit(limit);
                Py_DECREF(items);
                return;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
                PyObject *kv = PyList_GET_ITEM(items, i);
                judge(&o, PyTuple_GET_ITEM(kv, 0), PyTuple_GET_ITEM(kv, 1));
                PyErr_Clear();
        }
        Py_SetRecursionLimit(limit);
        Py_DECREF(items);
        if (out_add(&o, "}", 1) == 0) {
                char msg[160];
                struct proto_msg m = { .type = PROTO_RUNNER_EVENT };
                m.u.runner_event.event.layer = "runner";
                m.u.runner_event.event.kind = "variables";
                m.u.runner_event.event.message = POL_REASON(msg, sizeof(msg), VARIABLES_KEPT, o.kept,
                                                            (unsigned long long)o.len, o.not_kept);
                m.u.runner_event.variables = o.buf;
                m.u.runner_event.variables_dropped = o.dropped;
                runner_send(r, &m);
        }
        free(o.buf);
        for (size_t i = 0; i < o.dropped.n; i++)
                proto_schema_free(&proto_variable_dropped_schema, (struct proto_variable_dropped *)o.dropped.items + i);
        free(o.dropped.items);
}
