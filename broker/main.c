/* anvil-broker: the unprivileged daemon between clients and anvil-supervisor (DESIGN §1, §8).
 *
 * Theory of operation
 * -------------------
 * The broker relays clients' runs to the supervisor, talks to the model (model.c) and runs
 * the agent loop (agent.c: a task_submit becomes model requests and runs, each run on the
 * same path as a client's run_request below), and serves the web UI (http.c, off unless
 * --http is set; its requests become a client's frames, http_link.c). It runs as any user
 * ('anvil' under systemd) and never builds a jail: it links proto/, policy/ and lib/ objects
 * and libcurl, and holds no privilege beyond the right to connect to the supervisor's
 * socket. The model's key is in this process only: it goes to the broker's own --model-url
 * and nowhere else (agent.c).
 *
 * Processes: one, single-threaded on a libuv loop (libcurl's multi interface is driven by
 * the loop's poll and timer handles), plus libuv's thread pool for writing results, task
 * results and their sources to disk, and copying a task's runs' artifacts (store.c). Traces
 * are appended on the loop (small writes to a local file) and replayed from it, bounded
 * (agent.c); what clients read back of the store (listings, shows, artifacts in chunks, each
 * only to its owner or root) is read on the loop too (serve.c).
 *
 * Sockets:
 *   --listen      clients (anvilctl; the web UI's requests come as clients too, on socketpairs
 *                 with their session's uid: http_link.c); 0660; bounded per uid and in all (clients.c).
 *   --http        the web UI (http.c), off unless set: libmicrohttpd on this loop, no thread.
 *                 Every connection is a proto_stream: strict decoding, an error frame and a
 *                 close for a malformed frame, the daemon goes on serving everyone else.
 *   --supervisor  one NEW connection per run_request or probe_request (relay.c), connected
 *                 asynchronously. Requests of one client never share a supervisor connection,
 *                 so every frame that comes back on it belongs to that one request, and
 *                 closing it is how a run is abandoned: the supervisor kills the runs of a
 *                 client that has gone.
 *
 * A request's life (relay.c):
 *   B1  a run_request/probe_request arrives; at most BRO_MAX_INFLIGHT per connection and
 *       --max-inflight-per-uid per uid ("busy"); one that would not fit in a frame once
 *       re-encoded for the supervisor is refused ("bad_request")
 *   B2  uv_pipe_connect to the supervisor; failure -> error "unavailable" to the client
 *   B3  connected: the decoded request is re-encoded and sent (never raw client bytes)
 *   B4  run_event frames are relayed as they come (and run_output frames, to a client whose
 *       request asked for them: stream_output); the first names the run_id, which
 *       lets a later cancel by request_id be forwarded with the run_id the supervisor needs
 *   B5  run_result: the supervisor connection is closed, the result is rendered as JSON and
 *       written to DIR/results/<run_id>.json on the thread pool, then relayed to the client;
 *       probe_result or error: relayed, connection closed
 *   B6  the supervisor connection ends early -> error "supervisor_gone"; a malformed frame
 *       from it -> logged, error "internal" to the client
 *   B7  the client disconnects -> all its supervisor connections are closed, its tasks
 *       are cancelled (their results are still stored)
 *
 * Memory: a client is freed in its stream's close callback; a relay once its supervisor
 * connection's close callback has run and no result write is pending (libuv discipline). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/broker.h"
#include "lib/cleanup.h"
#include "lib/config.h"
#include "lib/ids.h"
#include "lib/log.h"
#include "lib/startup.h"
#include "policy/reasons.h"

/* --max-conns (1024) clients and their requests' supervisor connections: more than the usual
 * soft limit. */
#define NOFILE_WANTED 4096

static void usage(FILE *f)
{
        fprintf(f,
                "usage: anvil-broker --supervisor PATH --listen PATH --state-dir DIR\n"
                "  --config FILE       settings read first ([broker], [model]), the options below over\n"
                "                      them (default " ANVIL_CONFIG_DEFAULT ", if it exists; /dev/null: none)\n"
                "  --supervisor PATH   the supervisor's Unix socket\n"
                "  --listen PATH       Unix socket for clients (created 0660)\n"
                "  --state-dir DIR     stored results in DIR/results (created 0750)\n"
                "  --socket-group GRP  the group that may use the --listen socket (0660)\n"
                "  --keep-results N    stored results kept, the newest (1..1000000, 1000)\n"
                "  --keep-tasks N      ended tasks kept (result, source, trace), the newest (1..1000000, 1000)\n"
                "  --egress PATH       anvil-egress's control socket: runs granted network go through it\n"
                "                      (none: network is never granted; docs/egress.md)\n"
                "  --network on|off    off: network is never granted, whatever is approved (on)\n"
                "The web UI (docs/web-api.md; off unless --http is given):\n"
                "  --http ADDR:PORT    serve it there, e.g. 127.0.0.1:8700 (loopback unless --http-allow-remote)\n"
                "  --web-dir DIR       its files (default: ../share/anvil/web beside this program)\n"
                "  --http-allow-remote an address other than loopback (http_allow_remote = yes)\n"
                "The model (OpenAI-compatible chat completions; the key from ANVIL_MODEL_KEY or a file):\n"
                "  --model-url URL          the API base, e.g. https://api.openai.com/v1\n"
                "  --model NAME             the model's name, e.g. gpt-4o-mini\n"
                "  --model-key-file PATH    the key, in a file of the broker's user, mode 0600\n"
                "  --model-timeout S        per request, 1..3600 (120)\n"
                "  --model-max-tokens N     0..1000000 (0: not sent)\n"
                "  --model-temperature T    0..2 (not sent unless given)\n"
                "  --model-retries N        on 429, 5xx, a refused or reset connection, 0..10 (3)\n"
                "Bounds on clients (each met is an error frame that names it; per uid: over all the\n"
                "connections of one user together):\n"
                "  --max-conns N             connections at once, all users (%u)\n"
                "  --max-conns-per-uid N     connections at once, per uid (%u)\n"
                "  --max-inflight-per-uid N  runs, probes and tasks in flight, per uid (%u; %u per connection)\n"
                "  --idle-timeout S          a connection with nothing in flight that sends nothing (%u)\n"
                "  --frame-timeout S         a frame begun and not completed; an error frame left unread (%u)\n"
                "  --max-partial-bytes N     bytes of frames begun and not completed, per uid (%zu)\n"
                "  --max-unread-bytes N      bytes sent and not yet read, per uid (%zu)\n"
                "  --help              this text\n"
                "  --version           print the version (" ANVIL_VERSION ") and exit\n",
                BRO_MAX_CONNS_DEFAULT, BRO_MAX_CONNS_PER_UID_DEFAULT, BRO_MAX_INFLIGHT_PER_UID_DEFAULT,
                BRO_MAX_INFLIGHT, BRO_IDLE_S_DEFAULT, BRO_FRAME_S_DEFAULT, BRO_MAX_PARTIAL_DEFAULT,
                BRO_MAX_UNREAD_DEFAULT);
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        fprintf(stderr, "anvil-broker: %s (see --help)\n", line);
        return -1;
}

static int check_socket_path(const char *opt, const char *path)
{
        struct sockaddr_un sa;
        if (!*path)
                return bad_usage("%s: the path is empty", opt);
        /* libuv 1.44 silently truncates a longer path to fit sun_path. */
        if (strlen(path) >= sizeof(sa.sun_path))
                return bad_usage("%s: the path is longer than a Unix socket allows (%zu bytes)", opt,
                                 sizeof(sa.sun_path) - 1);
        return 0;
}

/* A whole number within min..max: digits only, no sign, no blanks. */
static int parse_uint(const struct cfg_src *w, unsigned min, unsigned max, const char *unit, unsigned *out,
                      struct anvil_err *err)
{
        const char *s = w->value;
        char *end;
        errno = 0;
        unsigned long v = *s >= '0' && *s <= '9' ? strtoul(s, &end, 10) : 0;
        if (!(*s >= '0' && *s <= '9') || *end || errno || v < min || v > max)
                return cfg_bad(w, err, "'%.40s' is not a whole number%s within %u..%u", s, unit, min, max);
        *out = (unsigned)v;
        return 0;
}

static int set_string(const struct cfg_src *w, char *dst, size_t size, struct anvil_err *err)
{
        if (!*w->value)
                return cfg_bad(w, err, "the value is empty");
        if (strlen(w->value) >= size)
                return cfg_bad(w, err, "longer than %zu bytes", size - 1);
        memcpy(dst, w->value, strlen(w->value) + 1);
        return 0;
}

enum {
        O_SUPERVISOR,
        O_LISTEN,
        O_STATE_DIR,
        O_SOCKET_GROUP,
        O_KEEP_RESULTS,
        O_KEEP_TASKS,
        O_MAX_CONNS,
        O_MAX_CONNS_PER_UID,
        O_MAX_INFLIGHT_PER_UID,
        O_IDLE_TIMEOUT,
        O_FRAME_TIMEOUT,
        O_MAX_PARTIAL_BYTES,
        O_MAX_UNREAD_BYTES,
        O_MODEL_URL,
        O_MODEL,
        O_MODEL_KEY_FILE,
        O_MODEL_TIMEOUT,
        O_MODEL_MAX_TOKENS,
        O_MODEL_TEMPERATURE,
        O_MODEL_RETRIES,
        O_HTTP,
        O_WEB_DIR,
        O_HTTP_ALLOW_REMOTE,
        O_EGRESS,
        O_NETWORK,
        O_TEST_HTTP_TOKEN_S,
        O_TEST_HTTP_SESSION_S,
        O_HELP,
        O_VERSION,
};

/* Each option, and its key in the file: [broker] the option's name with '_', [model] the
 * --model-* option's name without "model-" (--model itself is "name"). */
#define B(opt, key, id)                         \
        {                                       \
                opt, "broker", key, id, CFG_ARG \
        }
#define M(opt, key, id)                        \
        {                                      \
                opt, "model", key, id, CFG_ARG \
        }
static const struct cfg_opt opts[] = {
        B("supervisor", "supervisor", O_SUPERVISOR),
        B("listen", "listen", O_LISTEN),
        B("state-dir", "state_dir", O_STATE_DIR),
        B("socket-group", "socket_group", O_SOCKET_GROUP),
        B("keep-results", "keep_results", O_KEEP_RESULTS),
        B("keep-tasks", "keep_tasks", O_KEEP_TASKS),
        B("max-conns", "max_conns", O_MAX_CONNS),
        B("max-conns-per-uid", "max_conns_per_uid", O_MAX_CONNS_PER_UID),
        B("max-inflight-per-uid", "max_inflight_per_uid", O_MAX_INFLIGHT_PER_UID),
        B("idle-timeout", "idle_timeout", O_IDLE_TIMEOUT),
        B("frame-timeout", "frame_timeout", O_FRAME_TIMEOUT),
        B("max-partial-bytes", "max_partial_bytes", O_MAX_PARTIAL_BYTES),
        B("max-unread-bytes", "max_unread_bytes", O_MAX_UNREAD_BYTES),
        B("http", "http", O_HTTP),
        B("web-dir", "web_dir", O_WEB_DIR),
        { "http-allow-remote", "broker", "http_allow_remote", O_HTTP_ALLOW_REMOTE, 0 },
        B("egress", "egress", O_EGRESS),
        B("network", "network", O_NETWORK),
#ifdef ANVIL_TEST_BUILD
        /* A login link's life, shortened, for its expiry's test (t_http_login): never in a
         * build users run. */
        { "test-http-token-s", NULL, NULL, O_TEST_HTTP_TOKEN_S, CFG_ARG },
        /* A session's idle life (and twice that its whole life), for their test. */
        { "test-http-session-s", NULL, NULL, O_TEST_HTTP_SESSION_S, CFG_ARG },
#endif
        M("model-url", "url", O_MODEL_URL),
        M("model", "name", O_MODEL),
        M("model-key-file", "key_file", O_MODEL_KEY_FILE),
        M("model-timeout", "timeout", O_MODEL_TIMEOUT),
        M("model-max-tokens", "max_tokens", O_MODEL_MAX_TOKENS),
        M("model-temperature", "temperature", O_MODEL_TEMPERATURE),
        M("model-retries", "retries", O_MODEL_RETRIES),
        { "help", NULL, NULL, O_HELP, 0 },
        { "version", NULL, NULL, O_VERSION, 0 },
};
#undef B
#undef M

static const char *const own_sections[] = { "broker", "model", NULL };

struct ctx {
        struct bro_config *cfg;
        struct cfg_src key_file; /* where the key file was named; .value NULL if nowhere */
        bool model_given;        /* any model setting: then the whole is checked */
};

/* The bounds on clients (broker.h): a whole number each, within its range. */
static int apply_bound(const struct cfg_src *w, struct bro_bounds *b, struct anvil_err *err)
{
        unsigned v;
        switch (w->opt->id) {
        case O_MAX_CONNS: return parse_uint(w, 1, 65536, "", &b->max_conns, err);
        case O_MAX_CONNS_PER_UID: return parse_uint(w, 1, 65536, "", &b->max_conns_per_uid, err);
        case O_MAX_INFLIGHT_PER_UID: return parse_uint(w, 1, 65536, "", &b->max_inflight_per_uid, err);
        case O_IDLE_TIMEOUT: return parse_uint(w, 1, 86400, " of seconds", &b->stream.idle_s, err);
        case O_FRAME_TIMEOUT: return parse_uint(w, 1, 86400, " of seconds", &b->stream.frame_s, err);
        }
        /* At least one read's worth (64 KiB); below 16 MiB + 4 a frame of the largest size
         * cannot be taken in (partial) or waits alone (unread). */
        if (parse_uint(w, 65536, UINT_MAX, " of bytes", &v, err) < 0)
                return -1;
        *(w->opt->id == O_MAX_PARTIAL_BYTES ? &b->max_partial : &b->max_unread) = v;
        return 0;
}

/* --model-*: each value checked as it comes, then the whole (bro_model_cfg_check) if any
 * was given. */
static int apply_model(struct ctx *x, const struct cfg_src *w, struct anvil_err *err)
{
        struct bro_model_cfg *mc = &x->cfg->model;
        x->model_given = true;
        switch (w->opt->id) {
        case O_MODEL_URL: {
                /* From the file, checked now, so that the message names its line; an option's
                 * is checked with the rest (bro_model_cfg_check), as before. */
                struct anvil_err e = ANVIL_ERR_INIT;
                if (set_string(w, mc->url, sizeof(mc->url), err) < 0)
                        return -1;
                if (w->file && bro_model_url_parts(mc->url, NULL, 0, NULL, 0, &e) < 0)
                        return cfg_bad(w, err, "%s", e.msg);
                return 0;
        }
        case O_MODEL: return set_string(w, mc->model, sizeof(mc->model), err);
        case O_MODEL_KEY_FILE:
                x->key_file = *w; /* read once everything is known (model_key) */
                return 0;
        case O_MODEL_TIMEOUT: return parse_uint(w, 1, BRO_MODEL_TIMEOUT_MAX, " of seconds", &mc->timeout_s, err);
        case O_MODEL_MAX_TOKENS: return parse_uint(w, 0, BRO_MODEL_MAX_TOKENS_MAX, "", &mc->max_tokens, err);
        case O_MODEL_RETRIES: return parse_uint(w, 0, BRO_MODEL_RETRIES_MAX, "", &mc->retries, err);
        case O_MODEL_TEMPERATURE: {
                const char *arg = w->value;
                char *end;
                double t = strspn(arg, "0123456789.") == strlen(arg) && *arg ? strtod(arg, &end) : NAN;
                if (isnan(t) || *end || t < 0 || t > BRO_MODEL_TEMPERATURE_MAX)
                        return cfg_bad(w, err, "'%.40s' is not a number within 0..%g", arg, BRO_MODEL_TEMPERATURE_MAX);
                mc->temperature = t;
                return 0;
        }
        }
        return -1;
}

static int apply(void *data, const struct cfg_src *w, struct anvil_err *err)
{
        struct ctx *x = data;
        struct bro_config *cfg = x->cfg;
        switch (w->opt->id) {
        case O_SUPERVISOR: cfg->supervisor_path = w->value; return 0;
        case O_LISTEN: cfg->listen_path = w->value; return 0;
        case O_STATE_DIR: cfg->state_dir = w->value; return 0;
        case O_SOCKET_GROUP: {
                struct anvil_err e = ANVIL_ERR_INIT;
                if (parse_group(w->value, &cfg->socket_group, &e) < 0)
                        return cfg_bad(w, err, "%s", e.msg);
                return 0;
        }
        case O_HTTP:
                if (!*w->value)
                        return cfg_bad(w, err, "the value is empty");
                cfg->http.addr = w->value; /* checked at start (http.c) */
                return 0;
        case O_WEB_DIR:
                if (!*w->value)
                        return cfg_bad(w, err, "the value is empty");
                cfg->http.web_dir = w->value;
                return 0;
        case O_HTTP_ALLOW_REMOTE:
                /* --http-allow-remote alone, or "yes"/"no" in the file */
                if (w->value && strcmp(w->value, "yes") != 0 && strcmp(w->value, "no") != 0)
                        return cfg_bad(w, err, "'%.40s' is not yes or no", w->value);
                cfg->http.allow_remote = !w->value || strcmp(w->value, "yes") == 0;
                return 0;
        case O_EGRESS:
                if (!*w->value)
                        return cfg_bad(w, err, "the value is empty");
                cfg->egress_path = w->value; /* connected per run granted network (egress.c) */
                return 0;
        case O_NETWORK:
                if (strcmp(w->value, "on") != 0 && strcmp(w->value, "off") != 0)
                        return cfg_bad(w, err, "'%.40s' is not on or off", w->value);
                cfg->network_off = strcmp(w->value, "off") == 0;
                return 0;
        case O_TEST_HTTP_TOKEN_S: return parse_uint(w, 1, 3600, " of seconds", &cfg->http.token_s, err);
        case O_TEST_HTTP_SESSION_S: return parse_uint(w, 1, 3600, " of seconds", &cfg->http.session_s, err);
        case O_KEEP_RESULTS: return parse_uint(w, 1, BRO_KEEP_MAX, "", &cfg->keep_results, err);
        case O_KEEP_TASKS: return parse_uint(w, 1, BRO_KEEP_MAX, "", &cfg->keep_tasks, err);
        case O_MAX_CONNS:
        case O_MAX_CONNS_PER_UID:
        case O_MAX_INFLIGHT_PER_UID:
        case O_IDLE_TIMEOUT:
        case O_FRAME_TIMEOUT:
        case O_MAX_PARTIAL_BYTES:
        case O_MAX_UNREAD_BYTES: return apply_bound(w, &cfg->bounds, err);
        }
        return apply_model(x, w, err);
}

/* The key: from ANVIL_MODEL_KEY or the key file, never both. The variable's value is wiped
 * where it lies (so /proc/PID/environ no longer shows it) and the variable removed: nothing
 * the broker might start later inherits it. */
static int model_key(struct bro_config *cfg, const struct cfg_src *kf)
{
        char *env = getenv("ANVIL_MODEL_KEY");
        struct anvil_err err = ANVIL_ERR_INIT;
        char name[sizeof(err.msg)];
        const char *key_file = kf->value;
        int r = 0;
        if (key_file)
                cfg_name(kf, name, sizeof(name));
        if (env && key_file)
                r = bad_usage("the key is given twice, by ANVIL_MODEL_KEY and %s: give one",
                              kf->file ? name : "--model-key-file");
        else if (key_file) {
                if (bro_model_read_key_file(key_file, cfg->model.key, sizeof(cfg->model.key), &err) < 0) {
                        if (kf->file) /* it names the file and line: --help would not help */
                                r = -1, fprintf(stderr, "anvil-broker: %s: %s\n", name, err.msg);
                        else
                                r = bad_usage("%s: %s", name, err.msg);
                }
                cfg->model_key_source = key_file;
        } else if (env) {
                if (strlen(env) >= sizeof(cfg->model.key))
                        r = bad_usage("ANVIL_MODEL_KEY: longer than %zu bytes", sizeof(cfg->model.key) - 1);
                else if (bro_model_key_check(env, &err) < 0)
                        r = bad_usage("ANVIL_MODEL_KEY: %s", err.msg);
                else
                        memcpy(cfg->model.key, env, strlen(env) + 1);
                cfg->model_key_source = "ANVIL_MODEL_KEY";
        }
        if (env) {
                explicit_bzero(env, strlen(env));
                (void)unsetenv("ANVIL_MODEL_KEY");
        }
        return r;
}

static int parse_args(int argc, char **argv, struct bro_config *cfg)
{
        cfg->socket_group = (gid_t)-1;
        cfg->keep_results = cfg->keep_tasks = BRO_KEEP_DEFAULT;
        bro_model_cfg_default(&cfg->model);
        cfg->bounds = (struct bro_bounds){
                .max_conns = BRO_MAX_CONNS_DEFAULT,
                .max_conns_per_uid = BRO_MAX_CONNS_PER_UID_DEFAULT,
                .max_inflight_per_uid = BRO_MAX_INFLIGHT_PER_UID_DEFAULT,
                .max_partial = BRO_MAX_PARTIAL_DEFAULT,
                .max_unread = BRO_MAX_UNREAD_DEFAULT,
                .stream = { .daemon = "broker", .idle_s = BRO_IDLE_S_DEFAULT, .frame_s = BRO_FRAME_S_DEFAULT },
        };
        struct ctx x = { .cfg = cfg };
        struct cfg_daemon d = { .sections = own_sections,
                                .opts = opts,
                                .n_opts = ELEMENTSOF(opts),
                                .apply = apply,
                                .ctx = &x,
                                .getopt_messages = false };
        struct cfg_result res;
        struct anvil_err err = ANVIL_ERR_INIT;
        int r = cfg_args(&d, argc, argv, &res, &err);
        if (res.help) {
                usage(stdout);
                exit(0);
        }
        if (res.version) {
                printf("anvil-broker " ANVIL_VERSION "\n");
                exit(0);
        }
        if (r < 0 && res.in_file) { /* it names the file and line: --help would not help */
                fprintf(stderr, "anvil-broker: %s\n", err.msg);
                return -1;
        }
        if (r < 0)
                return bad_usage("%s", err.msg);
        cfg->config_path = res.path;
        if (!cfg->supervisor_path)
                return bad_usage("%s is required", "--supervisor");
        if (!cfg->listen_path)
                return bad_usage("%s is required", "--listen");
        if (!cfg->state_dir)
                return bad_usage("%s is required", "--state-dir");
        if (!*cfg->state_dir)
                return bad_usage("%s: the path is empty", "--state-dir");
        if (check_socket_path("--supervisor", cfg->supervisor_path) < 0 ||
            check_socket_path("--listen", cfg->listen_path) < 0)
                return -1;
        if (cfg->bounds.max_conns_per_uid > cfg->bounds.max_conns)
                return bad_usage("--max-conns-per-uid %u is over --max-conns %u", cfg->bounds.max_conns_per_uid,
                                 cfg->bounds.max_conns);
        if (cfg->egress_path && check_socket_path("--egress", cfg->egress_path) < 0)
                return -1;
        if (strcmp(cfg->supervisor_path, cfg->listen_path) == 0)
                return bad_usage("--listen and --supervisor are the same path, %s", cfg->listen_path);
        if (model_key(cfg, &x.key_file) < 0)
                return -1;
        if (x.model_given && bro_model_cfg_check(&cfg->model, &err) < 0)
                return bad_usage("%s", err.msg);
        return 0;
}

static void raise_nofile(void)
{
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= NOFILE_WANTED)
                return;
        rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > NOFILE_WANTED ? NOFILE_WANTED : rl.rlim_max;
        if (want <= rl.rlim_cur)
                return;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_warn("Failed to raise the open file limit to %lu: %s, ignoring", (unsigned long)want,
                         strerror(errno));
}

/* Before anything is made (lib/startup.c; each failure one line of POL_STARTUP, naming the
 * path and the fix): the client socket's directory and what is at its path, then the state
 * directory, probed for what the broker needs of it: writable, with room (results, tasks and
 * traces are files it writes; it never chowns, nor executes anything there). */
static int check_startup(struct bro_server *srv)
{
        char msg[STARTUP_MSG_MAX];
        /* A socket systemd passed (sdlisten.c) is made already, and in use by systemd. */
        int r = srv->listen_fd > 0 ? 0 : startup_socket_check("--listen", srv->cfg.listen_path, msg, sizeof(msg));
        if (r < 0) {
                log_error("%s", msg);
                return -1;
        }
        if (r > 0)
                log_info("%s", msg);
        /* Room for its directories and the probe's 64 KiB write: a disk that fills later is met
         * result by result (not_stored, t_broker_full), so start-up asks for little more. */
        if (startup_state_check(srv->cfg.state_dir, 0750, (uid_t)-1, false, 256ull << 10, msg, sizeof(msg)) < 0) {
                log_error("%s", msg);
                return -1;
        }
        return 0;
}

/* The broker connects to the supervisor for each request (relay.c, B2), so one that is not
 * there yet is no reason not to start (systemd may start the broker first): it is said once
 * here, and each request's error frame says it again. */
static void check_supervisor(struct bro_server *srv)
{
        char why[STARTUP_MSG_MAX], msg[STARTUP_MSG_MAX + 160];
        if (startup_supervisor_check(srv->cfg.supervisor_path, why, sizeof(why)) < 0)
                log_warn("%s", POL_STARTUP_MSG(msg, sizeof(msg), BROKER_NO_SUPERVISOR, why));
}

/* The first SIGTERM or SIGINT stops the broker as relay.c's bro_stop_begin says: runs in
 * flight cancelled at the supervisor, their results stored and sent, tasks cancelled and
 * their results stored and sent, within BRO_STOP_GRACE_S. A second one stops it at once. The
 * signal handles stay, unreferenced: the loop ends once every connection is closed and every
 * write has finished, not when a signal could still come. */
static void on_signal(uv_signal_t *s, int signum)
{
        struct bro_server *srv = s->data;
        if (srv->stopping) {
                char why[48];
                snprintf(why, sizeof(why), "signal %d again", signum);
                bro_stop_now(srv, why);
                return;
        }
        log_info("signal %d: stopping: each run in flight is cancelled at the supervisor, its result stored and sent "
                 "to its client; tasks are cancelled, their results stored and sent; then the connections are "
                 "closed (at most %d s; a second signal stops at once)",
                 signum, BRO_STOP_GRACE_S);
        unsigned n = bro_stop_begin(srv);
        log_info("stopping: %u requests in flight", n);
        bro_model_close(srv->model);
        bro_http_stop(srv);
        uv_unref((uv_handle_t *)&srv->sigterm);
        uv_unref((uv_handle_t *)&srv->sigint);
}

int main(int argc, char **argv)
{
        log_set_program("anvil-broker");
        static struct bro_server srv;
        if (parse_args(argc, argv, &srv.cfg) < 0)
                return 2;
        if (srv.cfg.config_path)
                log_info("configuration: %s", srv.cfg.config_path);
        else
                log_info("configuration: none (%s does not exist)", ANVIL_CONFIG_DEFAULT);
        struct anvil_err err = ANVIL_ERR_INIT;
        (void)signal(SIGPIPE, SIG_IGN);
        raise_nofile();
        srv.results_dirfd = srv.tasks_dirfd = srv.traces_dirfd = -1;
        if ((srv.listen_fd = bro_sd_listen_fd(srv.cfg.listen_path, &err)) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        if (check_startup(&srv) < 0)
                return 1;
        if (bro_store_init(&srv, &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        bro_recover_tasks(&srv); /* before any client: tasks a killed broker left */
        srv.loop = uv_default_loop();
        if (bro_model_init(&srv.model, srv.loop, &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        if (bro_server_listen(&srv, &err) < 0) {
                log_error("%s", err.msg);
                return 1;
        }
        if (bro_http_start(&srv, &err) < 0) {
                log_error("%s", err.msg);
                bro_server_unlink(&srv);
                return 1;
        }
        int r;
        if ((r = uv_signal_init(srv.loop, &srv.sigterm)) < 0 || (r = uv_signal_init(srv.loop, &srv.sigint)) < 0) {
                log_error("Failed to watch signals: %s", uv_strerror(r));
                bro_server_unlink(&srv);
                return 1;
        }
        srv.sigterm.data = srv.sigint.data = &srv;
        (void)uv_signal_start(&srv.sigterm, on_signal, SIGTERM);
        (void)uv_signal_start(&srv.sigint, on_signal, SIGINT);
        log_info("listening on %s (supervisor %s, results in %s; keeping %u results, %u tasks)", srv.cfg.listen_path,
                 srv.cfg.supervisor_path, srv.results_dir, srv.cfg.keep_results, srv.cfg.keep_tasks);
        check_supervisor(&srv);
        bro_store_prune(&srv, BRO_PRUNE_RESULTS); /* a lowered --keep-* applies now */
        bro_store_prune(&srv, BRO_PRUNE_TASKS);
        const struct bro_model_cfg *mc = &srv.cfg.model;
        if (mc->url[0])
                log_info("model: %s at %s, key %s%s, timeout %u s, %u retries", mc->model, mc->url,
                         srv.cfg.model_key_source ? "from " : "none",
                         srv.cfg.model_key_source ? srv.cfg.model_key_source : "", mc->timeout_s, mc->retries);
        else
                log_info("model: none set (--model-url)");
        uv_run(srv.loop, UV_RUN_DEFAULT);
        bro_stop_close(&srv);
        uv_close((uv_handle_t *)&srv.sigterm, NULL);
        uv_close((uv_handle_t *)&srv.sigint, NULL);
        bro_http_free(&srv);
        uv_run(srv.loop, UV_RUN_DEFAULT); /* their close callbacks */
        bro_server_unlink(&srv);
        int dirfds[] = { srv.results_dirfd, srv.tasks_dirfd, srv.traces_dirfd };
        for (size_t i = 0; i < sizeof(dirfds) / sizeof(dirfds[0]); i++)
                if (dirfds[i] >= 0)
                        (void)close(dirfds[i]);
        (void)uv_loop_close(srv.loop);
        log_info("stopped");
        return 0;
}
