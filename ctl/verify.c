/* anvilctl verify (docs/verify.md): the real pipeline on this machine, through the running
 * service (the broker at $ANVIL_SOCKET, as every anvilctl command), each check printed with
 * what it captured from the results (their reason strings and figures, verbatim), then
 * "N/N checks passed". Every check has a control: a part that would fail if the protection
 * it checks were off (docs/verify.md lists them; tests/e2e/t_verify.sh switches protections
 * off in a test build and sees the check fail).
 *
 * This file: the driver, the runs' plumbing, and checks 1 (an agent's two tasks) and 2 (the
 * canned escapes: 2a as written, refused by the Python layers; 2b written past the Python
 * layers, refused by the kernel's). The others are in verify_checks.c and verify_secrets.c;
 * the scripted model in verify_model.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ctl/client.h"
#include "ctl/verify.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/lines.h"
#include "proto/names.h"

/* ---- output ---- */

void vfy_say(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        fputs("    ", stdout);
        vprintf(fmt, ap);
        putchar('\n');
        va_end(ap);
}

bool vfy_fail(struct vfy *v, const char *fmt, ...)
{
        if (v->failed[0])
                return false;
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(v->failed, sizeof(v->failed), fmt, ap);
        va_end(ap);
        return false;
}

const struct proto_event *vfy_event(const struct proto_run_result *r, enum proto_layer layer, enum proto_event_kind kind)
{
        const struct proto_event *e = r->events.items;
        for (size_t i = 0; i < r->events.n; i++)
                if (proto_event_is(&e[i], layer, kind))
                        return &e[i];
        return NULL;
}

void vfy_say_events(const struct proto_run_result *r, enum proto_layer layer)
{
        const struct proto_event *e = r->events.items;
        for (size_t i = 0; i < r->events.n; i++) {
                enum proto_event_kind kind = proto_kind_from_name(e[i].kind);
                bool refusal = kind == PROTO_KIND_BLOCKED || kind == PROTO_KIND_REFUSED;
                if (layer != PROTO_LAYER_UNKNOWN ? proto_layer_from_name(e[i].layer) == layer : refusal)
                        vfy_say("  %s %s: %s", e[i].layer, e[i].kind, e[i].message ? e[i].message : "");
        }
}

bool vfy_has_line(const char *text, const char *line)
{
        size_t n = strlen(line);
        struct lines it = lines_of_str(text);
        const char *l;
        size_t len;
        while (lines_next(&it, &l, &len))
                if (len == n && memcmp(l, line, n) == 0)
                        return true;
        return false;
}

const char *vfy_mechanism(const struct proto_run_result *r, const char *prefix)
{
        for (size_t i = 0; i < r->isolation.mechanisms.n; i++)
                if (strncmp(r->isolation.mechanisms.items[i], prefix, strlen(prefix)) == 0)
                        return r->isolation.mechanisms.items[i];
        return NULL;
}

/* ---- runs ---- */

/* A reply that does not come within s seconds ends the request: a protection that should
 * have ended the run (the wall clock) and did not is a failure here, not a hang. */
static void read_timeout(int fd, unsigned s)
{
        struct timeval tv = { .tv_sec = s };
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static int push_strv(struct proto_strv *v, const char *const *names)
{
        for (; names && *names; names++)
                if (proto_strv_push(v, *names) < 0)
                        return -1;
        return 0;
}

static int push_input(struct proto_array *inputs, const char *name, const char *data)
{
        struct proto_input *in = proto_array_push(inputs, sizeof(*in));
        if (!in)
                return -1;
        in->name = strdup(name);
        in->data.len = strlen(data);
        in->data.data = (uint8_t *)strdup(data);
        return in->name && in->data.data ? 0 : -1;
}

struct take {
        enum proto_type want;
        void *out;
        size_t size;
        bool got;
};

/* Keeps the frame of type want (its fields moved to out), reads past events. */
static int on_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        struct take *t = ctx;
        if (in->type == PROTO_RUN_EVENT || in->type == PROTO_TASK_EVENT)
                return 1;
        if (in->type != t->want)
                return -1;
        memcpy(t->out, &in->u, t->size);
        memset(&in->u, 0, t->size);
        t->got = true;
        *rc = 0;
        return 0;
}

int vfy_request(struct vfy *v, struct proto_msg *m, const char *what, enum proto_type want, void *out, size_t size,
                   unsigned wait_s)
{
        int fd = ctl_send_request(m, what);
        proto_msg_free(m);
        if (fd < 0)
                return vfy_fail(v, "%s could not be sent to the broker at %s (said above)", what, ctl_socket_path()), -1;
        read_timeout(fd, wait_s);
        struct take t = { want, out, size, false };
        _cleanup_free_ char *failed = NULL;
        uint64_t t0 = now_ms();
        (void)ctl_follow(fd, what, on_frame, &t, &failed);
        close(fd);
        if (t.got)
                return 0;
        if (now_ms() - t0 >= (uint64_t)wait_s * 1000)
                return vfy_fail(v, "no result for %s within %u s (%s)", what, wait_s, failed ? failed : "?"), -1;
        return vfy_fail(v, "%s: %s", what, failed ? failed : "no result"), -1;
}

static char *request_id(struct vfy *v)
{
        char *id = NULL;
        if (asprintf(&id, "verify-%d-%u", (int)getpid(), ++v->seq) < 0)
                return NULL;
        return id;
}

int vfy_run(struct vfy *v, const struct vfy_run *rq, struct proto_run_result *out)
{
        struct proto_msg m = { .type = PROTO_RUN_REQUEST };
        struct proto_run_request *req = &m.u.run_request;
        req->request_id = request_id(v);
        req->source = strdup(rq->source);
        req->limits.wall_s = rq->wall_s * v->slow;
        req->limits.cpu_s = rq->cpu_s * v->slow;
        req->limits.memory_mb = rq->memory_mb;
        req->limits.output_bytes = rq->output_bytes;
        req->python_layers_off = rq->python_layers_off;
        if (!req->request_id || !req->source || push_strv(&req->capabilities_requested, rq->caps_requested) < 0 ||
            push_strv(&req->capabilities_approved, rq->caps_approved) < 0 ||
            (rq->input_name && push_input(&req->inputs, rq->input_name, rq->input_data) < 0)) {
                proto_msg_free(&m);
                return vfy_fail(v, "out of memory"), -1;
        }
        memset(out, 0, sizeof(*out));
        unsigned wait = (unsigned)((rq->wall_s ? rq->wall_s : 10) + (rq->wait_s ? rq->wait_s : 30)) * v->slow;
        return vfy_request(v, &m, "the run", PROTO_RUN_RESULT, out, sizeof(*out), wait);
}

void vfy_run_free(struct proto_run_result *r)
{
        proto_schema_free(proto_schemas[PROTO_RUN_RESULT], r);
        memset(r, 0, sizeof(*r));
}

/* ---- check 1: two tasks, two tools ---- */

static const char sales_csv[] = "region,product,amount\n"
                                "north,anvil,120.5\nsouth,anvil,80\neast,hammer,42.25\nnorth,hammer,17\n"
                                "south,tongs,63.75\neast,anvil,99\nnorth,tongs,11.5\nsouth,hammer,28\n";

static int submit(struct vfy *v, int which, const char *url, struct proto_task_result *out)
{
        struct proto_msg m = { .type = PROTO_TASK_SUBMIT };
        struct proto_task_submit *s = &m.u.task_submit;
        s->request_id = request_id(v);
        s->task = strdup(vfy_task_text[which]);
        s->max_steps = url ? 2 : 6;
        s->time_budget_s = url ? 60 : 600;
        if (url) {
                s->model = calloc(1, sizeof(*s->model));
                if (s->model) {
                        s->model->url = strdup(url);
                        s->model->name = strdup("anvil-verify-scripted");
                }
        }
        if (!s->request_id || !s->task || (url && (!s->model || !s->model->url || !s->model->name)) ||
            push_input(&s->inputs, "verify_sales.csv", sales_csv) < 0) {
                proto_msg_free(&m);
                return vfy_fail(v, "out of memory"), -1;
        }
        memset(out, 0, sizeof(*out));
        return vfy_request(v, &m, "the task", PROTO_TASK_RESULT, out, sizeof(*out), (unsigned)s->time_budget_s + 30);
}

/* The deliverable's run among the task's steps. */
static const struct proto_run_result *deliverable_run(const struct proto_task_result *r)
{
        const struct proto_task_step *s = r->steps.items;
        for (size_t i = 0; r->deliverable && i < r->steps.n; i++)
                if (strcmp(s[i].run.run_id, r->deliverable->run_id) == 0)
                        return &s[i].run;
        return NULL;
}

/* A deliverable's artifact read back from the host where the result says it is: "matches",
 * or why it could not be checked (NULL: it differs or is missing, in why). */
static bool read_back(const char *dir, const struct proto_artifact *a, char *why, size_t size)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir ? dir : "", a->path);
        struct anvil_err err = ANVIL_ERR_INIT;
        _cleanup_free_ uint8_t *data = NULL;
        size_t len;
        if (!dir || fd_read_file(path, 64u << 20, &data, &len, &err) < 0) {
                snprintf(why, size, "not read back (%s)", dir ? err.msg : "no artifacts_dir");
                return err.code == EACCES || err.code == EPERM; /* not ours to read: said, not failed */
        }
        char hex[SHA256_DIGEST_STRING_LENGTH];
        SHA256Data(data, len, hex);
        if (len != a->bytes || strcmp(hex, a->sha256) != 0) {
                snprintf(why, size, "read back from %s: %zu bytes, sha256 %s, not what the result says", path, len, hex);
                return false;
        }
        snprintf(why, size, "read back from %s: the same bytes", path);
        return true;
}

/* One task's result, judged: ok, with a deliverable that wrote real artifacts and printed. */
static bool judge_task(struct vfy *v, int which, const struct proto_task_result *r)
{
        vfy_say("task %s: %s%s%s", r->task_id, r->status, r->error ? ": " : "", r->error ? r->error : "");
        const struct proto_run_result *run = deliverable_run(r);
        if (strcmp(r->status, "ok") != 0 || !run)
                return vfy_fail(v, "task %d ended %s: %s", which + 1, r->status, r->error ? r->error : "no deliverable");
        vfy_say("  deliverable: run %s, %s, stdout:", run->run_id, run->status);
        for (const char *l = run->out_text; l && *l;) {
                size_t n = strcspn(l, "\n");
                vfy_say("    | %.*s", (int)n, l);
                l += n + (l[n] == '\n');
        }
        if (run->final_answer)
                vfy_say("  final answer: %s", run->final_answer);
        size_t real = 0;
        const struct proto_artifact *a = r->deliverable->artifacts.items;
        for (size_t i = 0; i < r->deliverable->artifacts.n; i++) {
                char why[4400];
                bool ok = read_back(run->artifacts_dir, &a[i], why, sizeof(why));
                vfy_say("  artifact %s (%" PRIu64 " bytes, sha256 %s): %s", a[i].path, a[i].bytes, a[i].sha256, why);
                if (!ok)
                        return vfy_fail(v, "task %d: artifact %s: %s", which + 1, a[i].path, why);
                if (strcmp(a[i].path, "tool.py") != 0 && a[i].bytes > 0)
                        real++;
        }
        if (!real)
                return vfy_fail(v, "task %d: its deliverable wrote no artifact but its own source", which + 1);
        if (!run->out_text || !*run->out_text)
                return vfy_fail(v, "task %d: its deliverable printed nothing", which + 1);
        return true;
}

bool vfy_check_tasks(struct vfy *v)
{
        struct vfy_model *model = NULL;
        char url[64] = "";
        struct proto_task_result r[2] = { 0 };
        bool ok = false;
        if (!v->scripted_model) {
                /* The broker's own model, if it has one: a task that names none is refused
                 * when it has not ("no model to ask: ..."), before anything runs. */
                if (submit(v, 0, NULL, &r[0]) == 0) {
                        vfy_say("model: the broker's own (its --model-url and --model; the task's trace names it)");
                } else if (strstr(v->failed, "no model to ask")) {
                        vfy_say("the broker has no model: %s", strstr(v->failed, "no model to ask"));
                        v->failed[0] = '\0';
                } else {
                        return false;
                }
        }
        if (!r[0].task_id) {
                char why[256];
                if (vfy_model_start(&model, url, sizeof(url), why, sizeof(why)) < 0)
                        return vfy_fail(v, "the bundled scripted model could not start: %s", why);
                vfy_say("model: the bundled scripted model (anvilctl's own, at %s): it answers each task with its tool",
                        url);
                if (submit(v, 0, url, &r[0]) < 0)
                        goto out;
        }
        if (!judge_task(v, 0, &r[0]) || submit(v, 1, url[0] ? url : NULL, &r[1]) < 0 || !judge_task(v, 1, &r[1]))
                goto out;
        if (strcmp(r[0].deliverable->source, r[1].deliverable->source) == 0) {
                vfy_fail(v, "the two tasks' tools are the same source");
                goto out;
        }
        vfy_say("two distinct tools: %zu and %zu bytes of source", strlen(r[0].deliverable->source),
                strlen(r[1].deliverable->source));
        if (model)
                vfy_say("the scripted model was asked %u times", vfy_model_requests(model));
        ok = true;
out:
        for (int i = 0; i < 2; i++)
                proto_schema_free(proto_schemas[PROTO_TASK_RESULT], &r[i]);
        vfy_model_stop(model);
        return ok;
}

/* ---- check 2: the four canned escapes ---- */

/* examples/escapes/, as shipped (their comments left out). What each prints when it gets
 * through is its control: the same text run on the host says it got through. */
static const struct {
        const char *name, *source, *got_through;
} canned[] = {
        { "net_connect",
          "import socket\n"
          "try:\n"
          "    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
          "    s.settimeout(2.0)\n"
          "    s.connect((\"127.0.0.1\", 8080))\n"
          "    print(\"connected\")\n"
          "except OSError as e:\n"
          "    print(f\"connect failed: {type(e).__name__}: {e}\")\n",
          "connected" },
        { "fork",
          "import os\n"
          "try:\n"
          "    pid = os.fork()\n"
          "except OSError as e:\n"
          "    print(f\"fork failed: {type(e).__name__}: {e}\")\n"
          "else:\n"
          "    if pid == 0:\n"
          "        os._exit(0)\n"
          "    os.waitpid(pid, 0)\n"
          "    print(\"fork succeeded\")\n",
          "fork succeeded" },
        { "write_outside",
          "try:\n"
          "    with open(\"./artifacts/../outside.txt\", \"w\") as f:\n"
          "        f.write(\"written by write_outside.py\\n\")\n"
          "except OSError as e:\n"
          "    print(f\"write failed: {type(e).__name__}: {e}\")\n"
          "else:\n"
          "    print(\"write succeeded\")\n",
          "write succeeded" },
        { "read_passwd",
          "path = \"/\".join([\"\", \"etc\", \"pass\" + \"wd\"])\n"
          "try:\n"
          "    with open(path) as f:\n"
          "        lines = f.read().splitlines()\n"
          "except OSError as e:\n"
          "    print(f\"read {path} failed: {type(e).__name__}: {e}\")\n"
          "else:\n"
          "    print(f\"read {path}: {len(lines)} lines\")\n",
          "read /etc/passwd:" },
};

bool vfy_check_python_escapes(struct vfy *v)
{
        bool ok = true;
        for (size_t i = 0; i < ELEMENTSOF(canned); i++) {
                struct proto_run_result r;
                struct vfy_run rq = { .source = canned[i].source, .wall_s = 5, .cpu_s = 2, .memory_mb = 256 };
                if (vfy_run(v, &rq, &r) < 0)
                        return false;
                const struct proto_event *e = vfy_event(&r, PROTO_LAYER_PRECHECK, PROTO_KIND_BLOCKED);
                if (!e)
                        e = vfy_event(&r, PROTO_LAYER_AUDIT, PROTO_KIND_BLOCKED);
                vfy_say("%s: %s; %s: %s", canned[i].name, r.status, e ? e->layer : "no refusal by the Python layers",
                        e ? e->message : (vfy_event(&r, PROTO_LAYER_RUNNER, PROTO_KIND_LAYERS_DISABLED) ? "they are off (layers_disabled)" : "-"));
                if (!e)
                        ok = vfy_fail(v, "%s: not refused by the Python layers (status %s)", canned[i].name, r.status);
                else if (r.out_text && strstr(r.out_text, canned[i].got_through))
                        ok = vfy_fail(v, "%s: refused, and yet it printed '%s'", canned[i].name, canned[i].got_through);
                vfy_run_free(&r);
        }
        return ok;
}

/* The kernel layers alone: the runs that use this ask for their Python layers off
 * (run_request.python_layers_off, as the probe's do), and the calls go to libc through
 * ctypes (the module numpy has imported already), which the audit hook would refuse. The
 * run says its Python layers are off (event layers_disabled). docs/verify.md says why this
 * shows what holds: the Python layers are not the boundary. */
const char vfy_py_prelude[] =
        "import errno, hashlib\n"
        "import numpy.core._internal as _ni\n"
        "ct = _ni.ctypes\n"
        "def lib(f, *a):\n"
        "    return f(*a)\n"
        "libc = lib(ct.CDLL, None, 0, None, True)\n"
        "def call(name, *a):\n"
        "    r = lib(lib(getattr, libc, name), *a)\n"
        "    return r, errno.errorcode.get(lib(ct.get_errno), '0') if r < 0 else 'ok'\n";

static const char kernel_escapes[] =
        "print('socket %d %s' % call('socket', 2, 1, 0))\n"
        "print('fork %d %s' % call('fork'))\n"
        "print('write %d %s' % call('open', b'./artifacts/../outside.txt', 0o101, 0o644))\n"
        "print('read_hostname %d %s' % call('open', b'/etc/hostname', 0))\n"
        "fd, e = call('open', b'/etc/passwd', 0)\n"
        "buf = lib(ct.create_string_buffer, 65536)\n"
        "n, e = call('read', fd, buf, 65536) if fd >= 0 else (-1, e)\n"
        "print('read_passwd %d %s' % (n, hashlib.sha256(buf.raw[:n]).hexdigest() if n >= 0 else e))\n";

/* The value after "NAME " on the tool's line for NAME: its return value and errno name. */
static bool tool_line(const struct proto_run_result *r, const char *name, long *rv, char *what, size_t size)
{
        size_t n = strlen(name), len;
        struct lines it = lines_of_str(r->out_text);
        const char *p;
        while (lines_next(&it, &p, &len)) {
                char w[80];
                if (line_starts(p, len, name) && len > n && p[n] == ' ' && sscanf(p + n, " %ld %79s", rv, w) == 2) {
                        snprintf(what, size, "%s", w);
                        return true;
                }
        }
        return false;
}

/* The event of layer whose message holds needle. */
static const struct proto_event *event_with(const struct proto_run_result *r, const char *layer, const char *needle)
{
        const struct proto_event *e = r->events.items;
        for (size_t i = 0; i < r->events.n; i++)
                if (strcmp(e[i].layer, layer) == 0 && e[i].message && strstr(e[i].message, needle))
                        return &e[i];
        return NULL;
}

static bool explained_here(const struct proto_run_result *r)
{
        const char *k = vfy_mechanism(r, "kernel audit: ");
        return k && strncmp(k, "kernel audit: on, landlock denials explained", 44) == 0;
}

/* One escape of 2b: refused (rv < 0) and by the layer expected, said with its message. */
static bool kernel_refused(struct vfy *v, const struct proto_run_result *r, const char *name, const char *layer,
                           const char *needle, const char *errno_name)
{
        long rv;
        char what[80];
        if (!tool_line(r, name, &rv, what, sizeof(what)))
                return vfy_fail(v, "%s: the tool did not get that far (status %s)", name, r->status);
        if (rv >= 0) {
                vfy_say("%s: GOT THROUGH (returned %ld)", name, rv);
                return vfy_fail(v, "%s: got through in the jail (returned %ld)", name, rv);
        }
        const struct proto_event *e = layer ? event_with(r, layer, needle) : NULL;
        if (e) {
                vfy_say("%s: refused (%s): %s: %s", name, what, e->layer, e->message);
                return true;
        }
        if (strcmp(what, "EROFS") == 0) {
                /* The mount namespace's read-only root: refused before Landlock is asked, and
                 * no kernel layer writes a record of it. */
                vfy_say("%s: refused (EROFS): namespaces: the jail's root is a read-only mount", name);
                return true;
        }
        if (proto_layer_from_name(layer) == PROTO_LAYER_LANDLOCK && !explained_here(r) && strcmp(what, errno_name) == 0) {
                vfy_say("%s: refused (%s): landlock (not explained here: %s)", name, what,
                        vfy_mechanism(r, "kernel audit: ") ? vfy_mechanism(r, "kernel audit: ") : "no kernel audit line");
                return true;
        }
        vfy_say("%s: refused (%s), but no kernel layer says so", name, what);
        return vfy_fail(v, "%s: refused (%s) with no %s event to say by what", name, what, layer ? layer : "kernel");
}

bool vfy_check_kernel_escapes(struct vfy *v)
{
        char src[4096];
        snprintf(src, sizeof(src), "%s%s", vfy_py_prelude, kernel_escapes);
        struct vfy_run rq = { .source = src, .wall_s = 5, .cpu_s = 2, .memory_mb = 256, .python_layers_off = true };
        if (vfy_run(v, &rq, &v->kernel_run) < 0)
                return false;
        v->have_kernel_run = true;
        const struct proto_run_result *r = &v->kernel_run;
        vfy_say("run %s: %s; isolation: %s", r->run_id, r->status, r->isolation.tier);
        const struct proto_event *py = vfy_event(r, PROTO_LAYER_PRECHECK, PROTO_KIND_BLOCKED);
        if (!py)
                py = vfy_event(r, PROTO_LAYER_AUDIT, PROTO_KIND_BLOCKED);
        if (py)
                return vfy_fail(v, "the Python layers saw it (%s: %s): this check shows nothing of the kernel's", py->layer,
                                py->message);
        if (!vfy_event(r, PROTO_LAYER_RUNNER, PROTO_KIND_LAYERS_DISABLED))
                return vfy_fail(v, "the run does not say its Python layers were off (layers_disabled)");
        vfy_say("the run's Python layers: off, as it asked (layers_disabled)");
        bool ok = kernel_refused(v, r, "socket", "seccomp", "socket(AF_INET", "EPERM");
        ok = kernel_refused(v, r, "fork", "seccomp", "process creation", "EPERM") && ok;
        ok = kernel_refused(v, r, "write", "landlock", "outside.txt", "EACCES") && ok;
        ok = kernel_refused(v, r, "read_hostname", "landlock", "/etc/hostname", "EACCES") && ok;
        /* The host's /etc/passwd: the jail's is its own, unless this rung (no user namespace)
         * runs on the host's paths, where /etc/passwd is one of its read roots. */
        long n;
        char hash[80];
        struct anvil_err err = ANVIL_ERR_INIT;
        _cleanup_free_ uint8_t *host = NULL;
        size_t len;
        if (tool_line(r, "read_passwd", &n, hash, sizeof(hash)) && n >= 0 &&
            fd_read_file("/etc/passwd", 1u << 20, &host, &len, &err) == 0) {
                char hex[SHA256_DIGEST_STRING_LENGTH];
                SHA256Data(host, len, hex);
                vfy_say("read_passwd: %ld bytes: %s", n,
                        strcmp(hex, hash) ? "the jail's own /etc/passwd, not the host's (namespaces: mount)"
                                          : "the host's own /etc/passwd (one of this rung's read roots)");
        }
        if (r->artifacts_dir) {
                char out[4200];
                snprintf(out, sizeof(out), "%s/../outside.txt", r->artifacts_dir);
                struct stat st;
                if (stat(out, &st) == 0)
                        return vfy_fail(v, "%s exists on the host", out);
        }
        return ok;
}

/* ---- the driver ---- */

static const struct {
        const char *id, *title;
        bool (*fn)(struct vfy *);
} checks[] = {
        { "1", "two tasks, two distinct tools with real artifacts and stdout", vfy_check_tasks },
        { "2a", "the four canned escapes, refused by the Python layers", vfy_check_python_escapes },
        { "2b", "the same four written past the Python layers, refused by the kernel layers", vfy_check_kernel_escapes },
        { "3", "an infinite loop killed at the wall clock", vfy_check_wall },
        { "3b", "a busy loop killed by the CPU limit before the wall clock", vfy_check_cpu },
        { "4", "a memory hog killed by the memory limit, its peak observed", vfy_check_memory },
        { "5", "capabilities: requestable, never self-granted, denied at the operation", vfy_check_caps },
        { "6", "the isolation claim, true now", vfy_check_isolation },
        { "7", "a blast-radius card from a real run", vfy_check_blast },
        { "8", "a kernel refusal explained", vfy_check_explained },
        { "9", "no secret of either daemon reaches a jail", vfy_check_secrets },
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: anvilctl verify [--scripted-model]\n"
                   "Runs every check through the broker at $ANVIL_SOCKET (default /run/anvil.sock); see docs/verify.md.\n"
                   "  --scripted-model  check 1 asks anvilctl's bundled scripted model, even if the broker has one\n"
                   "  -h, --help        this text\n"
                   "Exit status: 0 when every check passed, 1 when one failed, 125 for a usage error, 126 when\n"
                   "the broker cannot be reached at all.\n");
}

/* The checks' runs have small time limits (a 1 s CPU limit, a 2 s wall clock) that an
 * interpreter starting on a slow machine (under emulation, say) uses up before the tool's
 * first line. One run first, with the server's default limits, imports what 2b imports; a
 * machine where it takes over 0.5 s of CPU gets every limit multiplied, and says so. */
static void calibrate(struct vfy *v)
{
        struct vfy_run rq = { .source = "import numpy.core._internal\nprint('ready')\n" };
        struct proto_run_result r;
        v->slow = 1;
        printf("\n[calibration] a run that imports numpy, with the server's default limits\n");
        if (vfy_run(v, &rq, &r) < 0) {
                printf("    %s: time limits as written\n", v->failed);
                v->failed[0] = '\0';
                return;
        }
        if (vfy_has_line(r.out_text, "ready") && r.cpu_ms > 500)
                v->slow = (unsigned)((r.cpu_ms + 499) / 500 < 20 ? (r.cpu_ms + 499) / 500 : 20);
        vfy_say("run %s: %s, cpu %" PRIu64 " ms, wall %" PRIu64 " ms: %s", r.run_id, r.status, r.cpu_ms, r.wall_ms,
                v->slow == 1 ? "time limits as written" : "a slow machine");
        if (v->slow > 1)
                vfy_say("every time limit below is multiplied by %u (the figures checked with them)", v->slow);
        vfy_run_free(&r);
}

int ctl_verify(int argc, char **argv)
{
        static const struct option opts[] = { { "scripted-model", no_argument, NULL, 's' },
                                              { "help", no_argument, NULL, 'h' },
                                              { 0 } };
        struct vfy v = { .root = geteuid() == 0 };
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if (c == 's') {
                        v.scripted_model = true;
                } else if (c == 'h') {
                        usage(stdout);
                        return 0;
                } else {
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc) {
                usage(stderr);
                return EXIT_USAGE;
        }
        /* Line by line: a check's lines come as it runs. */
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("anvilctl verify: the service at %s, as uid %u\n", ctl_socket_path(), (unsigned)geteuid());
        uint64_t t0 = now_ms();
        calibrate(&v);
        unsigned passed = 0, n = ELEMENTSOF(checks), skipped = 0;
        char failed[128] = "", unchecked[128] = "";
        for (unsigned i = 0; i < n; i++) {
                printf("\n[%s] %s\n", checks[i].id, checks[i].title);
                v.failed[0] = v.skipped[0] = '\0';
                uint64_t t = now_ms();
                bool ok = checks[i].fn(&v);
                if (ok && v.failed[0]) /* a check that says why it failed has failed */
                        ok = false;
                double s = (double)(now_ms() - t) / 1000.0;
                char *list = failed;
                if (!ok) {
                        printf("  FAIL [%s] (%.1f s): %s\n", checks[i].id, s, v.failed);
                } else if (v.skipped[0]) {
                        /* Neither passed nor failed: what could not be checked here, said. */
                        printf("  NOT CHECKED [%s] (%.1f s): %s\n", checks[i].id, s, v.skipped);
                        skipped++;
                        list = unchecked;
                } else {
                        printf("  PASS [%s] (%.1f s)\n", checks[i].id, s);
                        passed++;
                        continue;
                }
                snprintf(list + strlen(list), sizeof(failed) - strlen(list), "%s%s", list[0] ? ", " : "", checks[i].id);
                if (i == 0 && !ok && strstr(v.failed, "could not be sent to the broker"))
                        return EXIT_CONNECT; /* nothing else can be checked */
        }
        if (v.have_kernel_run)
                vfy_run_free(&v.kernel_run);
        if (v.have_probe)
                proto_schema_free(proto_schemas[PROTO_PROBE_RESULT], &v.probe);
        n -= skipped;
        printf("\n%u/%u checks passed in %.0f s%s%s", passed, n, (double)(now_ms() - t0) / 1000.0,
               passed == n ? "" : "; failed: ", passed == n ? "" : failed);
        if (skipped)
                printf("; %u not checked: %s", skipped, unchecked);
        putchar('\n');
        return passed == n ? 0 : 1;
}
