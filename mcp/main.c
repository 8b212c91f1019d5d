/* anvil-mcp: the Model Context Protocol over stdio (docs/mcp.md), for any user, with no
 * privilege. The host writes JSON-RPC 2.0 messages on stdin, one a line; the answers and
 * notifications go on stdout, one a line, and nothing else does (the log is stderr).
 *
 * Every message is checked before it is acted on, and every bad one answered as JSON-RPC
 * has it (a notification never is): a line that is not JSON -32700; not a message (an array:
 * batches, which MCP removed in 2025-06-18; an id neither string nor integer; a member
 * JSON-RPC does not have) -32600; a method this server does not have -32601; params not as
 * the method takes them -32602. A line over MCP_MESSAGE_MAX is refused, its bytes skipped to
 * the next newline, and reading goes on.
 *
 * The lifecycle: initialize (the version negotiated: the host's if this server speaks it,
 * else the latest it does), notifications/initialized, then the tools, resources and ping methods;
 * before initialize only ping is answered. notifications/cancelled ends the request it names
 * (a run is cancelled at the broker) and no answer is sent for it. End of stdin ends the
 * session: every request in flight is cancelled, and anvil-mcp exits once they ended. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctl/client.h"
#include "lib/err.h"
#include "lib/fd.h"
#include "mcp/mcp.h"
#include "policy/cap_scope.h"
#include "policy/rules.h"

#ifndef ANVIL_VERSION
#error "ANVIL_VERSION comes from the Makefile's VERSION"
#endif

/* The versions spoken, latest first. */
static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

char mcp_version[16] = "2025-11-25";
struct proto_strv mcp_approved;

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t calls_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t calls_cv = PTHREAD_COND_INITIALIZER;
static struct mcp_call *calls;
static unsigned n_calls;
static bool initialized, stdout_gone;

/* ---- out ---- */

void mcp_send(json_t *msg)
{
        char *s = msg ? json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
        json_decref(msg);
        if (!s) {
                fprintf(stderr, "anvil-mcp: out of memory: a message was not sent\n");
                return;
        }
        size_t n = strlen(s);
        s[n] = '\n'; /* json_dumps's terminator, given its place: one write of the whole line */
        struct anvil_err err = ANVIL_ERR_INIT;
        pthread_mutex_lock(&out_mu);
        if (!stdout_gone && fd_write_all(STDOUT_FILENO, s, n + 1, &err) < 0) {
                stdout_gone = true;
                fprintf(stderr, "anvil-mcp: stdout: %s: the host is gone\n", err.msg);
        }
        pthread_mutex_unlock(&out_mu);
        free(s);
}

static json_t *envelope(const json_t *id)
{
        json_t *m = json_object();
        json_object_set_new(m, "jsonrpc", json_string("2.0"));
        json_object_set_new(m, "id", id ? json_deep_copy(id) : json_null());
        return m;
}

void mcp_result(const json_t *id, json_t *result)
{
        json_t *m = envelope(id);
        json_object_set_new(m, "result", result ? result : json_object());
        mcp_send(m);
}

void mcp_error(const json_t *id, int code, const char *message)
{
        json_t *m = envelope(id);
        json_object_set_new(m, "error", json_pack("{s:i, s:s}", "code", code, "message", message));
        mcp_send(m);
}

int mcp_param_type(const json_t *id, const char *path, const char *must_be)
{
        char msg[512];
        mcp_error(id, RPC_INVALID_PARAMS, POL_MCP_TEXT(msg, sizeof(msg), PARAM_TYPE, path, must_be));
        return -1;
}

bool mcp_version_at_least(const char *v)
{
        return strcmp(mcp_version, v) >= 0;
}

void mcp_progress(struct mcp_call *c, const char *message)
{
        if (!c->progress)
                return;
        pthread_mutex_lock(&calls_mu);
        bool cancelled = c->cancelled;
        uint64_t n = ++c->progress_n;
        pthread_mutex_unlock(&calls_mu);
        if (cancelled)
                return;
        json_t *p = json_pack("{s:O, s:I}", "progressToken", c->progress, "progress", (json_int_t)n);
        if (message)
                json_object_set_new(p, "message", json_string(message));
        mcp_send(json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", "notifications/progress", "params", p));
}

/* ---- requests in flight ---- */

void mcp_lock(void)
{
        pthread_mutex_lock(&calls_mu);
}

void mcp_unlock(void)
{
        pthread_mutex_unlock(&calls_mu);
}

/* With the lock held: a run in flight is cancelled at the broker (its result still comes, and
 * says "killed: cancelled"); any other request's connection is shut, which ends it. */
static void cancel_locked(struct mcp_call *c)
{
        c->cancelled = true;
        if (c->fd < 0)
                return;
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m = { .type = PROTO_CANCEL };
        m.u.cancel.request_id = c->rid;
        if (c->task_id[0])
                m.u.cancel.task_id = c->task_id;
        if (!(c->run_sent || c->task_id[0]) || proto_write_msg(c->fd, &m, &err) < 0)
                (void)shutdown(c->fd, SHUT_RDWR);
}

void mcp_call_set_task(struct mcp_call *c, const char *task_id)
{
        pthread_mutex_lock(&calls_mu);
        bool first = !c->task_id[0];
        snprintf(c->task_id, sizeof(c->task_id), "%s", task_id);
        if (first && c->cancelled && c->fd >= 0)
                cancel_locked(c);
        pthread_mutex_unlock(&calls_mu);
}

void mcp_call_set_fd(struct mcp_call *c, int fd, bool run_sent)
{
        pthread_mutex_lock(&calls_mu);
        c->fd = fd;
        c->run_sent = run_sent;
        if (fd >= 0 && c->cancelled)
                cancel_locked(c);
        pthread_mutex_unlock(&calls_mu);
}

bool mcp_call_cancelled(struct mcp_call *c)
{
        pthread_mutex_lock(&calls_mu);
        bool r = c->cancelled;
        pthread_mutex_unlock(&calls_mu);
        return r;
}

static void *worker(void *arg)
{
        struct mcp_call *c = arg;
        if (strcmp(c->method, "tools/call") == 0)
                mcp_tools_call(c);
        else if (strcmp(c->method, "resources/read") == 0)
                mcp_resources_read(c);
        else
                mcp_resources_list(c);
        pthread_mutex_lock(&calls_mu);
        for (struct mcp_call **p = &calls; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        n_calls--;
        pthread_cond_broadcast(&calls_cv);
        pthread_mutex_unlock(&calls_mu);
        json_decref(c->id);
        json_decref(c->params);
        free(c);
        return NULL;
}

/* A request carried out on a thread of its own. */
static void start_call(const json_t *id, const char *method, json_t *params)
{
        char msg[256];
        pthread_mutex_lock(&calls_mu);
        struct mcp_call *dup = calls;
        while (dup && !json_equal(dup->id, id))
                dup = dup->next;
        unsigned n = n_calls;
        pthread_mutex_unlock(&calls_mu);
        /* Answered with a null id: the one in flight keeps its own for its answer. */
        if (dup) {
                mcp_error(NULL, RPC_INVALID_REQUEST, POL_MCP_TEXT(msg, sizeof(msg), DUPLICATE_ID));
                return;
        }
        if (n >= MCP_CALLS_MAX) {
                mcp_error(id, RPC_SERVER_BUSY, POL_MCP_TEXT(msg, sizeof(msg), TOO_MANY, (unsigned)MCP_CALLS_MAX));
                return;
        }
        struct mcp_call *c = calloc(1, sizeof(*c));
        if (!c) {
                mcp_error(id, RPC_INTERNAL_ERROR, "out of memory");
                return;
        }
        static unsigned long seq;
        c->id = json_deep_copy(id);
        c->params = params ? json_deep_copy(params) : json_object(); /* its own: nothing shared across threads */
        json_t *meta = json_object_get(c->params, "_meta");
        c->progress = json_object_get(meta, "progressToken");
        if (c->progress && !json_is_string(c->progress) && !json_is_integer(c->progress))
                c->progress = NULL;
        snprintf(c->method, sizeof(c->method), "%s", method);
        snprintf(c->rid, sizeof(c->rid), "mcp-%d-%lu", (int)getpid(), ++seq);
        c->fd = -1;
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_mutex_lock(&calls_mu);
        c->next = calls;
        calls = c;
        n_calls++;
        int e = pthread_create(&t, &attr, worker, c);
        if (e) {
                calls = c->next;
                n_calls--;
        }
        pthread_mutex_unlock(&calls_mu);
        pthread_attr_destroy(&attr);
        if (e) {
                mcp_error(id, RPC_INTERNAL_ERROR, strerror(e));
                json_decref(c->id);
                json_decref(c->params);
                free(c);
        }
}

static void cancel_request(const json_t *params)
{
        const json_t *rid = json_object_get(params, "requestId");
        if (!json_is_string(rid) && !json_is_integer(rid))
                return; /* a notification is never answered: a bad one is ignored */
        pthread_mutex_lock(&calls_mu);
        for (struct mcp_call *c = calls; c; c = c->next)
                if (json_equal(c->id, rid)) {
                        const char *why = json_string_value(json_object_get(params, "reason"));
                        fprintf(stderr, "anvil-mcp: request %s cancelled by the host%s%.200s\n", c->rid,
                                why ? ": " : "", why ? why : "");
                        cancel_locked(c);
                }
        pthread_mutex_unlock(&calls_mu);
}

/* End of stdin: what is in flight is cancelled, and waited for (at most 30 s). */
static void end_session(void)
{
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 30;
        pthread_mutex_lock(&calls_mu);
        for (struct mcp_call *c = calls; c; c = c->next)
                cancel_locked(c);
        while (n_calls && pthread_cond_timedwait(&calls_cv, &calls_mu, &until) == 0)
                ;
        pthread_mutex_unlock(&calls_mu);
}

/* ---- the methods answered at once ---- */

static json_t *server_capabilities(void)
{
        return json_pack("{s:{s:b}, s:{s:b, s:b}}", "tools", "listChanged", 0, "resources", "subscribe", 0,
                         "listChanged", 0);
}

static int check_initialize(const json_t *id, const json_t *params)
{
        const json_t *ci = json_object_get(params, "clientInfo");
        if (!json_is_string(json_object_get(params, "protocolVersion")))
                return mcp_param_type(id, "params.protocolVersion", "a string");
        if (!json_is_object(json_object_get(params, "capabilities")))
                return mcp_param_type(id, "params.capabilities", "an object");
        if (!json_is_object(ci))
                return mcp_param_type(id, "params.clientInfo", "an object");
        if (!json_is_string(json_object_get(ci, "name")))
                return mcp_param_type(id, "params.clientInfo.name", "a string");
        if (!json_is_string(json_object_get(ci, "version")))
                return mcp_param_type(id, "params.clientInfo.version", "a string");
        return 0;
}

static void initialize(const json_t *id, const json_t *params)
{
        char msg[256];
        if (initialized) {
                mcp_error(id, RPC_INVALID_REQUEST, POL_MCP_TEXT(msg, sizeof(msg), ALREADY_INITIALIZED));
                return;
        }
        if (check_initialize(id, params) < 0)
                return;
        const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
        snprintf(mcp_version, sizeof(mcp_version), "%s", versions[0]);
        for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
                if (strcmp(asked, versions[i]) == 0)
                        snprintf(mcp_version, sizeof(mcp_version), "%s", versions[i]);
        const json_t *ci = json_object_get(params, "clientInfo");
        fprintf(stderr, "anvil-mcp: session with %.100s %.50s, protocol %s (asked %.40s)\n",
                json_string_value(json_object_get(ci, "name")), json_string_value(json_object_get(ci, "version")),
                mcp_version, asked);
        initialized = true;
        json_t *info = json_pack("{s:s, s:s, s:s}", "name", "anvil-mcp", "title", "Anvil", "version", ANVIL_VERSION);
        const char *instr = "Anvil runs Python 3.11 tools (pandas, numpy, matplotlib) in a jail: run_python runs one "
                            "over the files named in its inputs (read as ./inputs/NAME) and returns what it "
                            "printed, what it wrote in ./artifacts (images shown, each a resource), every refusal "
                            "with its layer, and the blast radius. No network, no processes, unless a capability "
                            "is granted. probe says what isolation holds on this machine.";
        mcp_result(id, json_pack("{s:s, s:o, s:o, s:s}", "protocolVersion", mcp_version, "capabilities",
                                 server_capabilities(), "serverInfo", info, "instructions", instr));
}

/* A request's method, answered at once or started on a thread. */
static void request(const json_t *id, const char *method, json_t *params)
{
        char msg[512];
        if (strcmp(method, "initialize") == 0) {
                initialize(id, params);
        } else if (strcmp(method, "ping") == 0) {
                mcp_result(id, json_object());
        } else if (!initialized) {
                mcp_error(id, RPC_INVALID_REQUEST, POL_MCP_TEXT(msg, sizeof(msg), NOT_INITIALIZED, method));
        } else if (strcmp(method, "tools/list") == 0) {
                mcp_result(id, json_pack("{s:o}", "tools", mcp_tools_list()));
        } else if (strcmp(method, "resources/templates/list") == 0) {
                mcp_result(id, json_pack("{s:o}", "resourceTemplates", mcp_resource_templates()));
        } else if (strcmp(method, "tools/call") == 0 || strcmp(method, "resources/list") == 0 ||
                   strcmp(method, "resources/read") == 0) {
                start_call(id, method, params);
        } else {
                mcp_error(id, RPC_METHOD_NOT_FOUND, POL_MCP_TEXT(msg, sizeof(msg), UNKNOWN_METHOD, method));
        }
}

static void notification(const char *method, const json_t *params)
{
        if (strcmp(method, "notifications/initialized") == 0)
                return;
        if (strcmp(method, "notifications/cancelled") == 0)
                cancel_request(params);
        else
                fprintf(stderr, "anvil-mcp: notification %.100s ignored\n", method);
}

/* ---- in ---- */

static bool known_member(const char *k)
{
        static const char *const members[] = { "jsonrpc", "id", "method", "params", "result", "error" };
        for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++)
                if (strcmp(k, members[i]) == 0)
                        return true;
        return false;
}

/* One message, decoded: what JSON-RPC says of it, then its method. */
static void message(json_t *msg)
{
        char text[512];
        if (json_is_array(msg)) {
                mcp_error(NULL, RPC_INVALID_REQUEST, POL_MCP_TEXT(text, sizeof(text), BATCH));
                return;
        }
        if (!json_is_object(msg)) {
                mcp_error(NULL, RPC_INVALID_REQUEST, POL_MCP_TEXT(text, sizeof(text), NOT_OBJECT));
                return;
        }
        json_t *id = json_object_get(msg, "id");
        if (id && !json_is_string(id) && !json_is_integer(id)) {
                mcp_error(NULL, RPC_INVALID_REQUEST, POL_MCP_TEXT(text, sizeof(text), BAD_ID));
                return;
        }
        if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
            strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0) {
                mcp_error(id, RPC_INVALID_REQUEST, POL_MCP_TEXT(text, sizeof(text), BAD_VERSION));
                return;
        }
        const char *k;
        json_t *v;
        json_object_foreach(msg, k, v) if (!known_member(k))
        {
                mcp_error(id, RPC_INVALID_REQUEST, POL_MCP_TEXT(text, sizeof(text), UNKNOWN_MEMBER, k));
                return;
        }
        json_t *method = json_object_get(msg, "method");
        if (!method) {
                /* A response: this server sends no request, so none is awaited. */
                if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
                        fprintf(stderr, "anvil-mcp: a response to no request of ours ignored\n");
                else
                        mcp_error(id, RPC_INVALID_REQUEST, POL_MCP_TEXT(text, sizeof(text), NO_METHOD));
                return;
        }
        if (!json_is_string(method)) {
                mcp_error(id, RPC_INVALID_REQUEST, POL_MCP_TEXT(text, sizeof(text), BAD_METHOD));
                return;
        }
        const char *name = json_string_value(method);
        char cut[128];
        snprintf(cut, sizeof(cut), "%s", name);
        json_t *params = json_object_get(msg, "params");
        if (!id) {
                if (!params || json_is_object(params))
                        notification(name, params);
                return;
        }
        if (strncmp(name, "notifications/", 14) == 0) {
                mcp_error(id, RPC_INVALID_REQUEST, POL_MCP_TEXT(text, sizeof(text), NOTIFICATION_WITH_ID, cut));
                return;
        }
        if (params && !json_is_object(params)) {
                mcp_error(id, RPC_INVALID_PARAMS, POL_MCP_TEXT(text, sizeof(text), BAD_PARAMS));
                return;
        }
        request(id, cut, params);
}

static void line(char *buf, size_t len)
{
        if (len && buf[len - 1] == '\r')
                len--;
        size_t i = 0;
        while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r'))
                i++;
        if (i == len)
                return; /* a blank line: nothing */
        json_error_t jerr;
        json_t *msg = json_loadb(buf, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
        if (!msg) {
                char text[512];
                mcp_error(NULL, RPC_PARSE_ERROR,
                          POL_MCP_TEXT(text, sizeof(text), PARSE_ERROR, jerr.text, jerr.line, jerr.column));
                return;
        }
        message(msg);
        json_decref(msg);
}

/* stdin's lines, each at most MCP_MESSAGE_MAX bytes: a longer one is refused once and its
 * bytes dropped up to its newline. */
static void serve(void)
{
        static char chunk[64 * 1024];
        char *buf = NULL;
        size_t len = 0, cap = 0;
        bool skipping = false;
        for (;;) {
                ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                const char *p = chunk;
                size_t left = (size_t)n;
                while (left) {
                        const char *nl = memchr(p, '\n', left);
                        size_t take = nl ? (size_t)(nl - p) : left;
                        if (!skipping && len + take > MCP_MESSAGE_MAX) {
                                char text[256];
                                mcp_error(NULL, RPC_INVALID_REQUEST,
                                          POL_MCP_TEXT(text, sizeof(text), TOO_LARGE,
                                                       (unsigned long long)MCP_MESSAGE_MAX));
                                skipping = true;
                                len = 0;
                        }
                        if (!skipping) {
                                if (len + take > cap) {
                                        size_t ncap = cap ? cap : 64 * 1024;
                                        while (ncap < len + take)
                                                ncap *= 2;
                                        char *nb = realloc(buf, ncap);
                                        if (!nb) {
                                                fprintf(stderr, "anvil-mcp: out of memory\n");
                                                exit(1);
                                        }
                                        buf = nb;
                                        cap = ncap;
                                }
                                memcpy(buf + len, p, take);
                                len += take;
                        }
                        p += take;
                        left -= take;
                        if (nl) {
                                if (!skipping)
                                        line(buf, len);
                                skipping = false;
                                len = 0;
                                p++;
                                left--;
                                /* What a long line grew is given back once it is done. */
                                if (cap > 1024 * 1024) {
                                        free(buf);
                                        buf = NULL;
                                        cap = 0;
                                }
                        }
                }
        }
        if (len && !skipping)
                line(buf, len); /* a last message without its newline */
        free(buf);
}

static void usage(FILE *f)
{
        fprintf(f, "Usage: anvil-mcp [--approve CAPABILITY]...\n"
                   "  or:  anvil-mcp -h | --help | --version\n");
}

static void help(void)
{
        usage(stdout);
        printf("\nServes Anvil to an MCP host (a desktop assistant, a coding agent, an IDE) over stdio: the\n"
               "host starts it and writes JSON-RPC on its stdin. Its tools are run_python (a tool run in a\n"
               "jail over files you name) and probe; its resources are the artifacts of the session's runs\n"
               "(anvil://run/RUN_ID/PATH). It is a client of the broker, as anvilctl is.\n"
               "\nOptions:\n"
               "  --approve CAP  approve capability CAP for the runs of this session: a run_python that\n"
               "                 requests it is then granted it if the server's policy allows it\n"
               "                 (network=HOST,..., the hosts it may reach; process); one requested and not\n"
               "                 approved is denied, and the\n"
               "                 result says so. Repeat for each. Default: none approved.\n"
               "  -h, --help     this text\n"
               "  --version      print the version and exit\n"
               "\nThe broker is reached at $ANVIL_SOCKET (default /run/anvil.sock). The host's configuration:\n"
               "  {\"mcpServers\": {\"anvil\": {\"command\": \"anvil-mcp\", \"args\": []}}}\n"
               "\nanvil-mcp " ANVIL_VERSION "; see docs/mcp.md.\n");
}

int main(int argc, char **argv)
{
        static const struct option opts[] = { { "approve", required_argument, NULL, 'a' },
                                              { "help", no_argument, NULL, 'h' },
                                              { "version", no_argument, NULL, 'V' },
                                              { 0 } };
        ctl_prog = "anvil-mcp";
        int c;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if (c == 'h') {
                        help();
                        return 0;
                } else if (c == 'V') {
                        printf("anvil-mcp " ANVIL_VERSION "\n");
                        return 0;
                } else if (c == 'a') {
                        char msg[512];
                        if (pol_cap_check("--approve", optarg, msg, sizeof(msg)) < 0) { /* network=HOST,... too */
                                fprintf(stderr, "anvil-mcp: %s\n", msg);
                                return 2;
                        }
                        if (mcp_approved.n >= PROTO_CAPS_MAX || proto_strv_push(&mcp_approved, optarg) < 0)
                                return 2;
                } else {
                        usage(stderr);
                        return 2;
                }
        }
        if (optind != argc) {
                usage(stderr);
                return 2;
        }
        signal(SIGPIPE, SIG_IGN); /* a broker or a host that closes first is an EPIPE */
        serve();
        end_session();
        return 0;
}
