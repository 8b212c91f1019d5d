/* anvil-mcp's tools (docs/mcp.md): run_python and probe, each carried out through the broker
 * on the request's own thread. A run's outcome is a tool result, whatever it was: isError
 * when it did not end well (blocked, an error, killed) or the broker refused it, with the
 * refusal's text, so that the host's model reads why. Anvil's own failures (the broker not
 * there, the connection broken) are a JSON-RPC error: the tool did not run. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/client.h"
#include "lib/utf8.h"
#include "mcp/mcp.h"
#include "policy/limits.h"
#include "policy/rules.h"
#include "proto/json.h"

/* ---- tools/list ---- */

static json_t *run_python_schema(void)
{
        json_t *limits = json_pack(
                "{s:s, s:{s:{s:s, s:i, s:i, s:s}, s:{s:s, s:i, s:i, s:s}, s:{s:s, s:i, s:i, s:s}}, s:b}", "type",
                "object", "properties", "timeout_s", "type", "integer", "minimum", POL_WALL_S_MIN, "maximum",
                POL_WALL_S_MAX, "description", "wall-clock seconds; then the run is killed: timeout", "cpu_s", "type",
                "integer", "minimum", POL_CPU_S_MIN, "maximum", POL_CPU_S_MAX, "description", "CPU seconds",
                "memory_mb", "type", "integer", "minimum", POL_MEMORY_MB_MIN, "maximum", POL_MEMORY_MB_MAX,
                "description", "memory in MB", "additionalProperties", 0);
        return json_pack(
                "{s:s, s:{s:{s:s, s:s}, s:{s:s, s:i, s:{s:s}, s:s}, s:{s:s, s:i, s:{s:s, s:[s,s]}, s:s}, s:o,"
                " s:{s:s, s:i, s:{s:s}, s:s}}, s:[s], s:b}",
                "type", "object", "properties", "code", "type", "string", "description",
                "The tool: Python 3.11 source (pandas, numpy, matplotlib available). It reads its inputs as "
                "./inputs/NAME and writes what it makes in ./artifacts/ (a .png there is shown as an image).",
                "inputs", "type", "array", "maxItems", PROTO_INPUTS_MAX, "items", "type", "string", "description",
                "Files or directories the tool reads, by path (absolute, or relative to anvil-mcp's working "
                "directory), opened by anvil-mcp as the user it runs as; seen in the jail as ./inputs/NAME, NAME "
                "the path's last component, or NAME given as NAME=PATH.",
                "capabilities", "type", "array", "maxItems", PROTO_CAPS_MAX, "items", "type", "string", "enum",
                "network", "process", "description",
                "Capabilities the tool asks for. Granted only if the user approved them (anvil-mcp --approve) "
                "and the server's policy allows them; the result says which were denied and why.",
                "limits", limits, "args", "type", "array", "maxItems", POL_ARGS_MAX, "items", "type", "string",
                "description", "The tool's sys.argv[1:].", "required", "code", "additionalProperties", 0);
}

json_t *mcp_tools_list(void)
{
        json_t *run = json_pack(
                "{s:s, s:s, s:s, s:o, s:{s:b, s:b, s:b, s:b}}", "name", "run_python", "title", "Run Python in Anvil",
                "description",
                "Runs a Python tool in a jail of its own (namespaces, seccomp, Landlock, cgroup) over the files "
                "named in inputs, and returns its status, stdout and stderr, every operation refused with the "
                "layer that refused it and why, its artifacts (as resources anvil://run/RUN_ID/PATH; images "
                "inline) and its blast radius: what it could have read, written, reached and started. No "
                "network and no new processes unless a capability is granted.",
                "inputSchema", run_python_schema(), "annotations", "readOnlyHint", 1, "destructiveHint", 0,
                "idempotentHint", 0, "openWorldHint", 0);
        json_t *probe = json_pack("{s:s, s:s, s:s, s:{s:s, s:{}, s:b}, s:{s:b, s:b, s:b}}", "name", "probe", "title",
                                  "Anvil's isolation here", "description",
                                  "Runs Anvil's probe tool in a real jail and says, for each isolation mechanism "
                                  "(namespaces, seccomp, Landlock, cgroup, kernel audit), whether it is available, "
                                  "probed and in force on this machine, with the evidence; and the tier runs get.",
                                  "inputSchema", "type", "object", "properties", "additionalProperties", 0,
                                  "annotations", "readOnlyHint", 1, "idempotentHint", 1, "openWorldHint", 0);
        json_t *task = json_pack(
                "{s:s, s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:i, s:{s:s}, s:s}, s:{s:s, s:i, s:i, s:s},"
                " s:{s:s, s:i, s:i, s:s}}, s:[s], s:b}, s:{s:b, s:b, s:b}}",
                "name", "submit_task", "title", "Give Anvil's agent a task", "description",
                "Gives a task to Anvil's own agent: the model configured in Anvil writes Python for it, step by "
                "step, each step run in a jail over the inputs as run_python runs one, until it delivers its "
                "artifacts or a limit is reached. Returns the task's status, each action's run, and the "
                "deliverable (images inline, each artifact a resource).",
                "inputSchema", "type", "object", "properties", "task", "type", "string", "description",
                "The task, in a sentence or a few.", "inputs", "type", "array", "maxItems", PROTO_INPUTS_MAX, "items",
                "type", "string", "description",
                "Files the task is over, by path, read by anvil-mcp as the user it runs as; seen in the jail as "
                "./inputs/NAME, NAME the path's last component.",
                "max_steps", "type", "integer", "minimum", 1, "maximum", POL_TASK_STEPS_MAX, "description",
                "the most code actions", "time_budget_s", "type", "integer", "minimum", 1, "maximum",
                POL_TASK_BUDGET_S_MAX, "description", "the task's whole time, in seconds", "required", "task",
                "additionalProperties", 0, "annotations", "readOnlyHint", 1, "destructiveHint", 0, "openWorldHint", 0);
        return json_pack("[o, o, o]", run, task, probe);
}

/* ---- text ---- */

void mcp_text_open(struct mcp_text *t)
{
        t->buf = NULL;
        t->len = 0;
        t->f = open_memstream(&t->buf, &t->len);
}

char *mcp_text_close(struct mcp_text *t)
{
        if (t->f)
                fclose(t->f);
        t->f = NULL;
        return t->buf ? t->buf : strdup("");
}

static void text_block(FILE *f, const char *title, const char *s, bool truncated, uint64_t total)
{
        if (!*s && !truncated)
                return;
        fprintf(f, "%s:\n", title);
        for (const char *l = s; *l;) {
                size_t n = strcspn(l, "\n");
                fprintf(f, "  %.*s\n", (int)n, l);
                l += n + (l[n] == '\n');
        }
        if (truncated)
                fprintf(f, "  [... truncated: %" PRIu64 " bytes written, %zu kept]\n", total, strlen(s));
}

/* An event that says something was refused (or killed, or dropped), by which layer. */
static bool is_refusal(const struct proto_event *e)
{
        static const char *const kinds[] = { "blocked", "refused", "killed", "dropped", "capability_denied" };
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if (e->kind && strcmp(e->kind, kinds[i]) == 0)
                        return true;
        return false;
}

static void text_run(FILE *f, const struct proto_run_result *r)
{
        fprintf(f, "run %s: %s", r->run_id, r->killed ? r->killed : r->status);
        if (r->exit_code.set)
                fprintf(f, " (exit code %" PRId64 ")", r->exit_code.v);
        if (r->signal)
                fprintf(f, " (%s)", r->signal);
        fprintf(f, " in %" PRIu64 " ms, cpu %" PRIu64 " ms, peak %.1f MB; isolation: %s\n", r->wall_ms, r->cpu_ms,
                r->peak_rss_mb, r->isolation.tier);
        const struct proto_event *ev = r->events.items;
        bool header = false;
        for (size_t i = 0; i < r->events.n; i++) {
                if (!is_refusal(&ev[i]))
                        continue;
                if (!header)
                        fprintf(f, "refusals (layer: message):\n");
                header = true;
                fprintf(f, "  %s: %s", ev[i].layer, ev[i].message ? ev[i].message : ev[i].op ? ev[i].op : ev[i].kind);
                if (ev[i].line.set)
                        fprintf(f, " (line %" PRId64 ")", ev[i].line.v);
                fputc('\n', f);
        }
        for (size_t i = 0; i < r->events.n; i++)
                if (ev[i].traceback)
                        text_block(f, "traceback", ev[i].traceback, false, 0);
        text_block(f, "stdout", r->out_text, r->stdout_truncated, r->stdout_bytes);
        text_block(f, "stderr", r->err_text, r->stderr_truncated, r->stderr_bytes);
        if (r->final_answer)
                fprintf(f, "final answer: %s\n", r->final_answer);
        const struct proto_artifact *a = r->artifacts.items;
        if (r->artifacts.n)
                fprintf(f, "artifacts:\n");
        for (size_t i = 0; i < r->artifacts.n; i++) {
                char *uri = mcp_artifact_uri(r->run_id, a[i].path);
                fprintf(f, "  %s  (%" PRIu64 " bytes, %s)  %s\n", a[i].path, a[i].bytes, mcp_mime_type(a[i].path),
                        uri ? uri : "");
                free(uri);
        }
        const struct proto_blast_radius *b = &r->blast_radius;
        fprintf(f, "blast radius (%s):\n", r->isolation.tier);
        for (size_t i = 0; i < b->read.n; i++)
                fprintf(f, "  %s %s\n", i ? "         " : "read:    ", b->read.items[i]);
        for (size_t i = 0; i < b->write.n; i++)
                fprintf(f, "  %s %s\n", i ? "         " : "write:   ", b->write.items[i]);
        if (b->network)
                fprintf(f, "  network:  %s\n", b->network);
        if (b->processes)
                fprintf(f, "  processes: %s\n", b->processes);
        const struct proto_limits *l = &b->limits;
        fprintf(f,
                "  limits:   wall %" PRIu64 " s (used %.1f s), cpu %" PRIu64 " s (used %.1f s), memory %" PRIu64
                " MB (peak %.1f MB), output %" PRIu64 " bytes per stream, files %" PRIu64 " bytes, %" PRIu64
                " processes and threads\n",
                l->wall_s, (double)r->wall_ms / 1000.0, l->cpu_s, (double)r->cpu_ms / 1000.0, l->memory_mb,
                r->peak_rss_mb, l->output_bytes, l->files_bytes, l->pids);
        if (r->capabilities.denied.n) {
                fprintf(f, "capabilities denied:");
                for (size_t i = 0; i < r->capabilities.denied.n; i++)
                        fprintf(f, " %s", r->capabilities.denied.items[i]);
                fputc('\n', f);
        }
}

/* ---- results ---- */

json_t *mcp_text_content(const char *s)
{
        return json_pack("{s:s, s:s}", "type", "text", "text", s);
}

/* A tool result of one text, isError set or not. */
void mcp_result_text(struct mcp_call *c, const char *s, bool is_error)
{
        mcp_result(c->id, json_pack("{s:[o], s:b}", "content", mcp_text_content(s), "isError", is_error));
}

/* What ctl_follow or ctl_send_request_why kept of how a request ended (failed: "code: message"
 * for an error frame), as the host is told: a refusal is the tool's result (isError), anything
 * else Anvil's own failure, a JSON-RPC error. */
void mcp_request_failed(struct mcp_call *c, int rc, const char *failed, enum mcp_what what)
{
        char msg[2048];
        const char *why = failed ? failed : "?";
        if (rc == EXIT_REFUSED || rc == EXIT_SANDBOX) {
                const char *sep = strstr(why, ": ");
                char code[64] = "refused";
                if (sep && (size_t)(sep - why) < sizeof(code)) {
                        snprintf(code, sizeof(code), "%.*s", (int)(sep - why), why);
                        why = sep + 2;
                }
                if (what == MCP_PROBE)
                        POL_MCP_TEXT(msg, sizeof(msg), PROBE_REFUSED, code, why);
                else if (what == MCP_TASK)
                        POL_MCP_TEXT(msg, sizeof(msg), TASK_REFUSED, code, why);
                else
                        POL_MCP_TEXT(msg, sizeof(msg), RUN_REFUSED, code, why);
                mcp_result_text(c, msg, true);
                return;
        }
        mcp_error(c->id, RPC_INTERNAL_ERROR, POL_MCP_TEXT(msg, sizeof(msg), ANVIL_UNREACHABLE, why));
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *mcp_base64(const uint8_t *d, size_t n);
char *mcp_base64(const uint8_t *d, size_t n)
{
        char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i += 3) {
                uint32_t v =
                        (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
                *o++ = b64[v >> 18 & 63];
                *o++ = b64[v >> 12 & 63];
                *o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
                *o++ = i + 2 < n ? b64[v & 63] : '=';
        }
        *o = 0;
        return out;
}

/* Whether data begins as an image of type mime does: an artifact is shown as one only if its
 * bytes say so, not its name alone. */
static bool image_magic(const char *mime, const uint8_t *d, size_t n)
{
        if (strcmp(mime, "image/png") == 0)
                return n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0;
        if (strcmp(mime, "image/jpeg") == 0)
                return n >= 3 && memcmp(d, "\xff\xd8\xff", 3) == 0;
        if (strcmp(mime, "image/gif") == 0)
                return n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0);
        if (strcmp(mime, "image/webp") == 0)
                return n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0;
        return false;
}

static bool inline_image_type(const char *mime)
{
        return strcmp(mime, "image/png") == 0 || strcmp(mime, "image/jpeg") == 0 || strcmp(mime, "image/gif") == 0 ||
               strcmp(mime, "image/webp") == 0;
}

/* The run's images as image content, read back through the broker; what is not shown is
 * said in notes. */
void mcp_add_images(struct mcp_call *c, const struct proto_run_result *r, json_t *content, FILE *notes)
{
        const struct proto_artifact *a = r->artifacts.items;
        for (size_t i = 0; i < r->artifacts.n; i++) {
                const char *mime = mcp_mime_type(a[i].path);
                if (!inline_image_type(mime))
                        continue;
                char *uri = mcp_artifact_uri(r->run_id, a[i].path);
                char msg[PROTO_PATH_MAX * 2 + 256];
                if (a[i].bytes > MCP_IMAGE_MAX) {
                        fprintf(notes, "%s\n",
                                POL_MCP_TEXT(msg, sizeof(msg), IMAGE_NOT_INLINED, a[i].path,
                                             (unsigned long long)a[i].bytes, (unsigned long long)MCP_IMAGE_MAX,
                                             uri ? uri : ""));
                        free(uri);
                        continue;
                }
                free(uri);
                uint8_t *data = NULL;
                size_t len = 0;
                char *why = NULL;
                if (mcp_artifact_fetch(c, r->run_id, a[i].path, MCP_IMAGE_MAX, &data, &len, &why) != 0) {
                        fprintf(notes, "%s\n",
                                POL_MCP_TEXT(msg, sizeof(msg), IMAGE_NOT_READ, a[i].path, why ? why : "?"));
                        free(why);
                        continue;
                }
                if (image_magic(mime, data, len)) {
                        char *b = mcp_base64(data, len);
                        if (b)
                                json_array_append_new(content, json_pack("{s:s, s:s, s:s}", "type", "image", "data", b,
                                                                         "mimeType", mime));
                        free(b);
                }
                free(data);
        }
}

json_t *mcp_resource_links(const struct proto_run_result *r)
{
        json_t *links = json_array();
        const struct proto_artifact *a = r->artifacts.items;
        for (size_t i = 0; i < r->artifacts.n; i++) {
                char *uri = mcp_artifact_uri(r->run_id, a[i].path);
                if (uri)
                        json_array_append_new(links,
                                              json_pack("{s:s, s:s, s:s, s:s, s:I}", "type", "resource_link", "uri",
                                                        uri, "name", a[i].path, "mimeType", mcp_mime_type(a[i].path),
                                                        "size", (json_int_t)a[i].bytes));
                free(uri);
        }
        return links;
}

static void run_answer(struct mcp_call *c, const struct proto_run_result *r)
{
        struct mcp_text t;
        mcp_text_open(&t);
        if (!t.f) {
                mcp_error(c->id, RPC_INTERNAL_ERROR, "out of memory");
                return;
        }
        text_run(t.f, r);
        json_t *content = json_array();
        struct mcp_text notes;
        mcp_text_open(&notes);
        if (notes.f)
                mcp_add_images(c, r, content, notes.f);
        char *n = mcp_text_close(&notes);
        if (n && *n)
                fprintf(t.f, "%s", n);
        free(n);
        char *s = mcp_text_close(&t);
        json_array_insert_new(content, 0, mcp_text_content(s ? s : ""));
        free(s);
        if (mcp_version_at_least("2025-06-18")) {
                json_t *links = mcp_resource_links(r);
                json_array_extend(content, links);
                json_decref(links);
        }
        bool ok = r->status && strcmp(r->status, "ok") == 0;
        json_t *res = json_pack("{s:o, s:b}", "content", content, "isError", !ok);
        if (mcp_version_at_least("2025-06-18")) {
                json_t *sc = proto_to_json(proto_schemas[PROTO_RUN_RESULT], r);
                if (sc)
                        json_object_set_new(res, "structuredContent", sc);
        }
        mcp_result(c->id, res);
}

/* ---- run_python's arguments ---- */

struct run_args {
        struct proto_msg m;
        int fds[PROTO_INPUTS_MAX];
        size_t n_fds;
};

int mcp_unknown_member(const json_t *id, const char *path, const json_t *o, const char *const *known, size_t n)
{
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)o, k, v)
        {
                size_t i = 0;
                while (i < n && strcmp(k, known[i]) != 0)
                        i++;
                if (i == n) {
                        char msg[512];
                        mcp_error(id, RPC_INVALID_PARAMS, POL_MCP_TEXT(msg, sizeof(msg), PARAM_UNKNOWN, path, k));
                        return -1;
                }
        }
        return 0;
}

static int bad_param(const json_t *id, const char *path, const char *what)
{
        char msg[1024];
        mcp_error(id, RPC_INVALID_PARAMS, POL_MCP_TEXT(msg, sizeof(msg), PARAM_BAD, path, what));
        return -1;
}

/* A JSON string without NUL, of at most max bytes. */
bool mcp_text_string(const json_t *s, size_t max)
{
        return json_is_string(s) && json_string_length(s) <= max &&
               strlen(json_string_value(s)) == json_string_length(s);
}

static int string_list(const json_t *id, const char *path, const json_t *a, size_t max_n, struct proto_strv *out)
{
        char what[128];
        snprintf(what, sizeof(what), "an array of at most %zu strings", max_n);
        if (!json_is_array(a) || json_array_size(a) > max_n)
                return mcp_param_type(id, path, what);
        size_t i;
        const json_t *v;
        json_array_foreach(a, i, v)
        {
                if (!mcp_text_string(v, PROTO_PATH_MAX)) {
                        char p[128];
                        snprintf(p, sizeof(p), "%s[%zu]", path, i);
                        return mcp_param_type(id, p, "a string of at most 4096 bytes, without NUL");
                }
                if (proto_strv_push(out, json_string_value(v)) < 0)
                        return bad_param(id, path, "out of memory");
        }
        return 0;
}

static int limit_arg(const json_t *id, const json_t *limits, const char *key, uint64_t *out)
{
        const json_t *v = json_object_get(limits, key);
        if (!v)
                return 0;
        char path[64];
        snprintf(path, sizeof(path), "arguments.limits.%s", key);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > UINT32_MAX)
                return mcp_param_type(id, path, "a positive integer");
        *out = (uint64_t)json_integer_value(v);
        return 0;
}

static int caps_arg(const json_t *id, const json_t *caps, struct proto_run_request *req)
{
        if (!caps)
                return 0;
        if (string_list(id, "arguments.capabilities", caps, PROTO_CAPS_MAX, &req->capabilities_requested) < 0)
                return -1;
        for (size_t i = 0; i < req->capabilities_requested.n; i++) {
                const char *name = req->capabilities_requested.items[i];
                char msg[256];
                if (pol_cap_from_name(name) < 0) {
                        mcp_error(id, RPC_INVALID_PARAMS,
                                  pol_cap_unknown("arguments.capabilities", name, msg, sizeof(msg)));
                        return -1;
                }
                /* Approved by the user on anvil-mcp's command line, or not at all. */
                for (size_t k = 0; k < mcp_approved.n; k++)
                        if (strcmp(mcp_approved.items[k], name) == 0 &&
                            proto_strv_push(&req->capabilities_approved, name) < 0)
                                return bad_param(id, "arguments.capabilities", "out of memory");
        }
        return 0;
}

/* The arguments, checked (-32602 for what the schema does not allow: sent here, -1), into a
 * run_request. The inputs are opened later (run_inputs): a path that cannot be is the tool's
 * result, which the model can act on. */
static int run_args(struct mcp_call *c, const json_t *a, struct run_args *ra)
{
        static const char *const known[] = { "code", "inputs", "capabilities", "limits", "args" };
        struct proto_run_request *req = &ra->m.u.run_request;
        if (!json_is_object(a))
                return mcp_param_type(c->id, "arguments", "an object");
        if (mcp_unknown_member(c->id, "arguments", a, known, sizeof(known) / sizeof(known[0])) < 0)
                return -1;
        const json_t *code = json_object_get(a, "code");
        if (!code) {
                char msg[128];
                mcp_error(c->id, RPC_INVALID_PARAMS, POL_MCP_TEXT(msg, sizeof(msg), PARAM_MISSING, "arguments.code"));
                return -1;
        }
        if (!mcp_text_string(code, PROTO_SOURCE_MAX))
                return mcp_param_type(c->id, "arguments.code", "a string of at most 1048576 bytes, without NUL");
        req->source = strdup(json_string_value(code));
        req->tool_name = strdup("mcp:run_python");
        const json_t *limits = json_object_get(a, "limits");
        if (limits) {
                static const char *const lk[] = { "timeout_s", "cpu_s", "memory_mb" };
                if (!json_is_object(limits))
                        return mcp_param_type(c->id, "arguments.limits", "an object");
                if (mcp_unknown_member(c->id, "arguments.limits", limits, lk, 3) < 0 ||
                    limit_arg(c->id, limits, "timeout_s", &req->limits.wall_s) < 0 ||
                    limit_arg(c->id, limits, "cpu_s", &req->limits.cpu_s) < 0 ||
                    limit_arg(c->id, limits, "memory_mb", &req->limits.memory_mb) < 0)
                        return -1;
        }
        if (caps_arg(c->id, json_object_get(a, "capabilities"), req) < 0)
                return -1;
        const json_t *args = json_object_get(a, "args");
        struct anvil_err err = ANVIL_ERR_INIT;
        if (args && (string_list(c->id, "arguments.args", args, POL_ARGS_MAX, &req->args) < 0))
                return -1;
        if (pol_args_check(&req->args, "arguments.args", &err) < 0)
                return bad_param(c->id, "arguments.args", err.msg);
        const json_t *inputs = json_object_get(a, "inputs");
        if (inputs && (!json_is_array(inputs) || json_array_size(inputs) > PROTO_INPUTS_MAX))
                return mcp_param_type(c->id, "arguments.inputs", "an array of at most 32 strings");
        size_t i;
        const json_t *v;
        json_array_foreach(inputs, i, v) if (!mcp_text_string(v, PROTO_PATH_MAX))
        {
                char p[64];
                snprintf(p, sizeof(p), "arguments.inputs[%zu]", i);
                return mcp_param_type(c->id, p, "a path: a string of at most 4096 bytes, without NUL");
        }
        return req->source && req->tool_name ? 0 : bad_param(c->id, "arguments", "out of memory");
}

/* The inputs opened as this user, their fds to go with the request: 0, or -1 with why. */
static int run_inputs(const json_t *inputs, struct run_args *ra, char *why, size_t size)
{
        struct proto_run_request *req = &ra->m.u.run_request;
        size_t i;
        const json_t *v;
        json_array_foreach(inputs, i, v)
        {
                char what[48];
                snprintf(what, sizeof(what), "inputs[%zu]", i);
                struct proto_input *in = proto_array_push(&req->inputs, sizeof(*in));
                if (!in) {
                        snprintf(why, size, "out of memory");
                        return -1;
                }
                if (ctl_open_input(what, json_string_value(v), in, ra->fds, &ra->n_fds, why, size) < 0)
                        return -1;
        }
        unsigned modes[PROTO_INPUTS_MAX];
        for (size_t k = 0; k < ra->n_fds; k++) {
                struct stat st;
                modes[k] = fstat(ra->fds[k], &st) == 0 ? st.st_mode : 0;
        }
        struct anvil_err err = ANVIL_ERR_INIT;
        if (pol_inputs_check(&req->inputs, "inputs", modes, ra->n_fds, &err) < 0) {
                snprintf(why, size, "%s", err.msg);
                return -1;
        }
        return 0;
}

/* ---- following a run ---- */

struct follow {
        struct mcp_call *c;
        struct proto_msg result; /* the run_result or probe_result, taken */
        bool have;
        char run_id[80];
};

static void progress_event(struct follow *fw, const struct proto_run_event *e)
{
        if (!fw->run_id[0] && e->run_id)
                snprintf(fw->run_id, sizeof(fw->run_id), "%s", e->run_id);
        char msg[512];
        const struct proto_event *ev = &e->event;
        snprintf(msg, sizeof(msg), "run %s: %s %s: %.300s", fw->run_id, ev->layer, ev->kind,
                 ev->message ? ev->message
                 : ev->op    ? ev->op
                             : "");
        mcp_progress(fw->c, msg);
}

/* The last line of what the tool wrote, as progress. */
static void progress_output(struct follow *fw, const struct proto_run_output *o)
{
        if (!fw->run_id[0] && o->run_id)
                snprintf(fw->run_id, sizeof(fw->run_id), "%s", o->run_id);
        const char *t = o->text;
        size_t n = strlen(t);
        while (n && t[n - 1] == '\n')
                n--;
        const char *l = t + n;
        while (l > t && l[-1] != '\n')
                l--;
        size_t len = (size_t)(t + n - l);
        if (len > 200)
                len = utf8_complete_len((const uint8_t *)l, 200);
        char msg[320];
        snprintf(msg, sizeof(msg), "run %s: %s| %.*s", fw->run_id, o->stream, (int)len, l);
        mcp_progress(fw->c, msg);
}

static int on_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        struct follow *fw = ctx;
        if (in->type == PROTO_RUN_EVENT) {
                progress_event(fw, &in->u.run_event);
                return 1;
        }
        if (in->type == PROTO_RUN_OUTPUT) {
                progress_output(fw, &in->u.run_output);
                return 1;
        }
        if (in->type != PROTO_RUN_RESULT && in->type != PROTO_PROBE_RESULT)
                return -1;
        fw->result = *in;
        memset(&in->u, 0, sizeof(in->u)); /* taken */
        fw->have = true;
        *rc = 0;
        return 0;
}

/* Sends m (with fds) and follows it to its end: 0 with fw->result, or the exit status with
 * *failed saying why. */
int mcp_follow(struct mcp_call *c, const struct proto_msg *m, const int *fds, size_t n, bool is_run,
               ctl_frame_fn frame_fn, void *ctx, char **failed)
{
        const char *what = m->type == PROTO_RUN_REQUEST   ? "the run"
                           : m->type == PROTO_TASK_SUBMIT ? "the task"
                                                          : "the probe";
        int fd = ctl_send_request_why(m, what, fds, n, failed);
        if (fd < 0)
                return -fd;
        mcp_call_set_fd(c, fd, is_run);
        int rc = ctl_follow(fd, what, frame_fn, ctx, failed);
        mcp_call_set_fd(c, -1, false);
        (void)close(fd);
        return rc;
}

static int follow(struct mcp_call *c, const struct proto_msg *m, const int *fds, size_t n, bool is_run,
                  struct follow *fw, char **failed)
{
        int rc = mcp_follow(c, m, fds, n, is_run, on_frame, fw, failed);
        return rc == 0 && !fw->have ? EXIT_CONNECT : rc;
}

static void run_python(struct mcp_call *c, const json_t *arguments)
{
        struct run_args ra = { .m = { .type = PROTO_RUN_REQUEST } };
        struct proto_run_request *req = &ra.m.u.run_request;
        char why[PROTO_PATH_MAX + 256];
        char *failed = NULL;
        struct follow fw = { .c = c };
        if (!arguments) {
                mcp_error(c->id, RPC_INVALID_PARAMS, POL_MCP_TEXT(why, sizeof(why), PARAM_MISSING, "arguments.code"));
                goto out;
        }
        if (run_args(c, arguments, &ra) < 0)
                goto out;
        if (run_inputs(json_object_get(arguments, "inputs"), &ra, why, sizeof(why)) < 0) {
                mcp_result_text(c, why, true);
                goto out;
        }
        req->request_id = strdup(c->rid);
        req->stream_output = c->progress != NULL;
        int rc = follow(c, &ra.m, ra.fds, ra.n_fds, true, &fw, &failed);
        if (fw.have)
                mcp_runs_add(&fw.result.u.run_result);
        if (mcp_call_cancelled(c)) {
                fprintf(stderr, "anvil-mcp: %s: cancelled: no answer sent; the run %s%s\n", c->rid,
                        fw.have ? "ended " : "",
                        fw.have ? (fw.result.u.run_result.killed ? fw.result.u.run_result.killed
                                                                 : fw.result.u.run_result.status)
                                : "was not started or did not end");
        } else if (rc != 0 || !fw.have) {
                mcp_request_failed(c, rc, failed, MCP_RUN);
        } else {
                run_answer(c, &fw.result.u.run_result);
        }
out:
        free(failed);
        if (fw.have)
                proto_msg_free(&fw.result);
        for (size_t i = 0; i < ra.n_fds; i++)
                (void)close(ra.fds[i]);
        proto_msg_free(&ra.m);
}

static void probe_answer(struct mcp_call *c, const struct proto_probe_result *r)
{
        struct mcp_text t;
        mcp_text_open(&t);
        if (!t.f) {
                mcp_error(c->id, RPC_INTERNAL_ERROR, "out of memory");
                return;
        }
        fprintf(t.f, "isolation tier: %s\n", r->tier);
        const struct proto_mechanism *mm = r->mechanisms.items;
        for (size_t i = 0; i < r->mechanisms.n; i++)
                fprintf(t.f, "  %s: available %s, probed %s, in force %s: %s\n", mm[i].name,
                        mm[i].available ? "yes" : "no", mm[i].probed ? "yes" : "no", mm[i].in_force ? "yes" : "no",
                        mm[i].evidence);
        char *s = mcp_text_close(&t);
        json_t *res = json_pack("{s:[o], s:b}", "content", mcp_text_content(s), "isError", 0);
        free(s);
        if (mcp_version_at_least("2025-06-18")) {
                json_t *sc = proto_to_json(proto_schemas[PROTO_PROBE_RESULT], r);
                if (sc)
                        json_object_set_new(res, "structuredContent", sc);
        }
        mcp_result(c->id, res);
}

static void probe(struct mcp_call *c, const json_t *arguments)
{
        if (arguments && (!json_is_object(arguments) || json_object_size(arguments))) {
                if (!json_is_object(arguments))
                        (void)mcp_param_type(c->id, "arguments", "an object");
                else
                        (void)mcp_unknown_member(c->id, "arguments", arguments, NULL, 0);
                return;
        }
        struct proto_msg m = { .type = PROTO_PROBE_REQUEST };
        m.u.probe_request.request_id = c->rid;
        struct follow fw = { .c = c };
        char *failed = NULL;
        int rc = follow(c, &m, NULL, 0, false, &fw, &failed);
        if (mcp_call_cancelled(c))
                fprintf(stderr, "anvil-mcp: %s: cancelled: no answer sent\n", c->rid);
        else if (rc != 0 || !fw.have)
                mcp_request_failed(c, rc, failed, MCP_PROBE);
        else
                probe_answer(c, &fw.result.u.probe_result);
        free(failed);
        if (fw.have)
                proto_msg_free(&fw.result);
}

void mcp_tools_call(struct mcp_call *c)
{
        const json_t *name = json_object_get(c->params, "name");
        const json_t *arguments = json_object_get(c->params, "arguments");
        char msg[256];
        if (!name) {
                mcp_error(c->id, RPC_INVALID_PARAMS, POL_MCP_TEXT(msg, sizeof(msg), PARAM_MISSING, "params.name"));
        } else if (!json_is_string(name)) {
                (void)mcp_param_type(c->id, "params.name", "a string");
        } else if (arguments && !json_is_object(arguments)) {
                (void)mcp_param_type(c->id, "params.arguments", "an object");
        } else if (strcmp(json_string_value(name), "run_python") == 0) {
                run_python(c, arguments);
        } else if (strcmp(json_string_value(name), "probe") == 0) {
                probe(c, arguments);
        } else if (strcmp(json_string_value(name), "submit_task") == 0) {
                mcp_submit_task(c, arguments);
        } else {
                char cut[100];
                snprintf(cut, sizeof(cut), "%s", json_string_value(name));
                mcp_error(c->id, RPC_INVALID_PARAMS, POL_MCP_TEXT(msg, sizeof(msg), UNKNOWN_TOOL, cut));
        }
}
