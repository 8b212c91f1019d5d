/* anvilctl: the command line. Talks to the broker at $ANVIL_SOCKET (default /run/anvil.sock).
 *
 * Exit status, as `docker run` and timeout(1) have it (docs/cli.md, "Exit status"; the
 * values are ctl/client.h's EXIT_*). 120..127 are Anvil's own outcomes, so no tool's exit can
 * be taken for one: a tool's own exit code in that range is reported as 1 (its summary says
 * the real code).
 *   0        run: the tool exited 0. submit: the task delivered (status ok). Every other
 *            command: it was carried out.
 *   1..119, 128..255 the tool's own exit code (120..127 reported as 1); 128+N: the tool died
 *            of signal N that Anvil did not send
 *   1        verify: a check failed
 *   120      blocked: a layer refused an operation and the tool ended (status blocked).
 *            submit: the task failed
 *   121      killed by Anvil for another reason than time: memory, cpu, cancelled, stopping.
 *            submit: cancelled or interrupted
 *   122      the sandbox failed (an error frame "sandbox_failed": never the tool's result)
 *   123      the server refused the request: any other error frame (bad_request, busy,
 *            unavailable, ...), also when the broker refuses the connection over a bound
 *   124      killed: timeout
 *   125      a usage error, which includes a request that cannot be made (a file that cannot
 *            be read, an unknown --cap, inputs too large for one frame: found before
 *            anything is sent)
 *   126      the broker cannot be reached, or the connection broke ("the broker closed the
 *            connection ...", when it closed without an error frame)
 * Help (-h, --help, help [COMMAND], COMMAND --help) and --version print on stdout and exit 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/utf8.h"
#include "policy/cap_scope.h"
#include "policy/limits.h"
#include "policy/rules.h"
#include "proto/json.h"
#include "proto/proto.h"

#include "ctl/client.h"
#include "ctl/store.h"
#include "ctl/ui.h"
#include "ctl/verify.h"
#include "proto/names.h"

#ifndef ANVIL_VERSION
#error "ANVIL_VERSION comes from the Makefile's VERSION"
#endif

/* On a usage error (stderr), and atop `anvilctl help`. */
static void usage(FILE *f)
{
        /* "or:" lines, as help2man reads a usage (the man page is made from --help). */
        fprintf(f, "Usage: anvilctl run TOOL.py|- [--input FILE]... [--timeout S] [--cpu S] [--memory MB] [OPTION]...\n"
                   "            [-- ARG...]\n"
                   "  or:  anvilctl submit TASK.json [--verbose] [--json | --events] [-o DIR]\n"
                   "  or:  anvilctl runs|tasks [-n N] [--json]\n"
                   "  or:  anvilctl show ID [--json] [-o DIR]\n"
                   "  or:  anvilctl trace TASK_ID|RUN_ID\n"
                   "  or:  anvilctl probe [--json]\n"
                   "  or:  anvilctl verify [--scripted-model]\n"
                   "  or:  anvilctl help [COMMAND] | -h | --help | --version\n");
}

/* The help's words on where the broker is, and on the exit status (the table atop this file,
 * which docs/cli.md has in full). */
void ctl_help_tail(void)
{
        printf("\nThe broker is reached at $ANVIL_SOCKET (default /run/anvil.sock).\n"
               "\nExit status:\n"
               "  0        the tool exited 0 (submit: the task delivered; other commands: done)\n"
               "  N        the tool's own exit code N; one in 120..127 is reported as 1\n"
               "  128+N    the tool died of signal N, not sent by Anvil\n"
               "  120      blocked: a layer refused an operation (submit: the task failed)\n"
               "  121      killed by Anvil: memory, cpu, cancelled, stopping (submit: cancelled)\n"
               "  122      the sandbox failed\n"
               "  123      the server refused the request (an error frame)\n"
               "  124      killed: timeout\n"
               "  125      a usage error\n"
               "  126      the broker cannot be reached, or the connection broke\n"
               "\nanvilctl " ANVIL_VERSION "; see docs/cli.md.\n");
}

static void help_main(void)
{
        usage(stdout);
        printf("\nRuns model-written Python tools in Anvil's sandbox, one jail per run, and agent tasks\n"
               "whose tools it runs so.\n"
               "\nCommands:\n"
               "  run TOOL.py       run one tool in a jail: its trace, output, artifacts, blast radius\n"
               "  submit TASK.json  give a task to the agent: a model writes tools, each run in a jail\n"
               "  runs              your stored runs, newest first (root: everyone's)\n"
               "  tasks             your stored tasks, newest first (root: everyone's)\n"
               "  show ID           a stored run or task, printed as run or submit printed it\n"
               "  trace ID          replay a stored task's trace, or a run's events\n"
               "  probe             the isolation in force here: each mechanism, with its evidence\n"
               "  verify            check the running service end to end\n"
               "  ui                a one-time link to the web UI, opened if there is a display\n"
               "  help [COMMAND]    this text, or a command's options (as COMMAND --help)\n"
               "\nOptions:\n"
               "  -h, --help        this text\n"
               "  --version         print anvilctl's version and exit\n");
        ctl_help_tail();
}

static void help_run(void)
{
        printf("Usage: anvilctl run TOOL.py [OPTION]... [-- ARG...]\n"
               "  or:  anvilctl run - [OPTION]... [-- ARG...] < TOOL.py\n"
               "Runs TOOL.py in a jail of its own and prints what it does as it does it: the trace (every\n"
               "event, each refusal with its layer) and its stdout and stderr line by line; then the\n"
               "summary: its status, its artifacts and the blast radius (what it could have read, written,\n"
               "reached and started). TOOL.py is UTF-8 text of at most %u bytes;\n"
               "\"-\" reads it from stdin, within the same bound (messages then name the tool \"-\").\n"
               "The words after \"--\" are the tool's sys.argv[1:] (at most %d, %d bytes in all).\n",
               PROTO_SOURCE_MAX, POL_ARGS_MAX, POL_ARGS_BYTES_MAX);
        printf("\nOptions (a default is the server's as built: its configuration's [limits] may move a\n"
               "default and lower a maximum, and the RunResult says the limits in force):\n"
               "  --input [NAME=]PATH a file or directory the tool reads as ./inputs/NAME (NAME: PATH's\n"
               "                      last component unless given; letters, digits, spaces, '.', '_',\n"
               "                      '-', not starting with '.', at most %d bytes); at most %d. Opened\n"
               "                      by anvilctl as you and passed as an open fd: any size up to the\n"
               "                      supervisor's max_input_bytes (default 8 GiB in all); a directory is\n"
               "                      a read-only tree (a root supervisor only)\n",
               PROTO_NAME_MAX, PROTO_INPUTS_MAX);
        printf("  --timeout S         wall-clock seconds, %d..%d (default %d); then killed: timeout\n"
               "  --cpu S             CPU seconds, %d..%d (default %d)\n"
               "  --memory MB         memory in MB, %d..%d (default %d)\n",
               POL_WALL_S_MIN, POL_WALL_S_MAX, POL_WALL_S_DEFAULT, POL_CPU_S_MIN, POL_CPU_S_MAX, POL_CPU_S_DEFAULT,
               POL_MEMORY_MB_MIN, POL_MEMORY_MB_MAX, POL_MEMORY_MB_DEFAULT);
        printf("  --cap NAME          request and approve a capability (at most %d); whether it is granted\n"
               "                      is the server's policy, which says why not:\n"
               "                        network: only with its hosts, --cap network=HOST,... (api.example.com,\n"
               "                          *.github.com, HOST:PORT; ADDRESS/PREFIX lets them resolve into a\n"
               "                          private range): those hosts through anvil-egress, no other, if the\n"
               "                          broker allows network; \"network\" with no host grants nothing\n",
               PROTO_CAPS_MAX);
        for (int c = 0; c < _POL_CAP_MAX; c++) {
                enum pol_why w = pol_cap_server_policy((enum pol_cap)c);
                if (c != POL_CAP_NETWORK)
                        printf("                        %s: %s\n", pol_cap_name((enum pol_cap)c),
                               w == POL_WHY_NONE ? "granted when approved" : pol_why_text(w));
        }
        printf("  --variables FILE.json  a JSON object of at most %u bytes: the tool's variables (an\n"
               "                      agent's state from the step before)\n"
               "  --json              print the RunResult as one JSON object at the end, nothing else\n"
               "                      (docs/results.md)\n"
               "  --events            print JSON lines as the run goes, each with its \"type\", the\n"
               "                      run_result last\n"
               "  --python-layers-off the run without its pre-check and audit hook, to see the kernel\n"
               "                      layers alone (docs/security.md); the run says so\n"
               "  -o, --output DIR    copy the run's artifacts into DIR, as you (nothing there is\n"
               "                      overwritten or followed; docs/cli.md)\n"
               "  -h, --help          this text\n",
               PROTO_VARIABLES_MAX);
        printf("Not set from here: stdout and stderr, %u bytes each kept (the rest counted); the\n"
               "artifacts, and /tmp, %llu bytes; %d processes and threads.\n",
               POL_OUTPUT_DEFAULT, (unsigned long long)POL_FILES_DEFAULT, POL_PIDS_DEFAULT);
        printf("\nThe tool's contract:\n"
               "  cwd          its work directory (/work in a jail with namespaces), holding:\n"
               "  ./inputs     the --input files, read-only\n"
               "  ./artifacts  read and write: what is kept. Each regular file left there is copied out\n"
               "               of the jail and listed with its size and SHA-256 under \"artifacts:\"\n"
               "  /tmp         private to the run, thrown away with it\n"
               "  /usr         the interpreter and its libraries, read-only\n"
               "  refused      reading or writing any other path; the network (no socket but AF_UNIX);\n"
               "               new processes (fork, exec, subprocess); signals to other processes;\n"
               "               native code (ctypes); imports and calls outside the policy. Each\n"
               "               refusal is an event of the trace, with the layer that refused it\n"
               "               (docs/security.md). A tool that ends on one is \"blocked\".\n");
        ctl_help_tail();
}

static void help_submit(void)
{
        printf("Usage: anvilctl submit TASK.json [--verbose] [--json | --events] [-o DIR]\n"
               "Gives a task to the broker's agent: a model writes tools, each run in a jail, until one\n"
               "delivers (its artifacts) or the task fails. The task's events are printed as they come,\n"
               "then its result. Ctrl-C cancels the task (a second one ends anvilctl at once).\n"
               "\nOptions:\n"
               "  --verbose         the model's replies, the prompt and the observations in full\n"
               "  --json            print the TaskResult as one JSON object (docs/results.md)\n"
               "  --events          print JSON lines as the task goes, each with its \"type\"\n"
               "  -o, --output DIR  copy the deliverable's artifacts into DIR, as you\n"
               "  -h, --help        this text\n");
        printf("\nTASK.json (docs/agent.md), every key known:\n"
               "  task                   the task's sentence (required)\n"
               "  inputs                 file paths, relative to TASK.json's directory (at most %d)\n"
               "  capabilities_approved  capabilities the tools may be granted (at most %d): names, or\n"
               "                         {\"network\": [HOST, ...]} (or \"network=HOST,...\") for its hosts\n"
               "  max_steps              1..%d (default %d)\n"
               "  time_budget_s          1..%d (default %d)\n"
               "  model                  {\"url\", \"name\"}: another model than the broker's own\n",
               PROTO_INPUTS_MAX, PROTO_CAPS_MAX, POL_TASK_STEPS_MAX, POL_TASK_STEPS_DEFAULT, POL_TASK_BUDGET_S_MAX,
               POL_TASK_BUDGET_S_DEFAULT);
        ctl_help_tail();
}

static void help_trace(void)
{
        printf("Usage: anvilctl trace TASK_ID|RUN_ID\n"
               "Replays a stored task's trace, as submit --verbose printed it, or a stored run's events\n"
               "(an id starting with a digit is a run's; your own; root: all).\n"
               "\nOptions:\n"
               "  -h, --help  this text\n");
        ctl_help_tail();
}

static void help_probe(void)
{
        printf("Usage: anvilctl probe [--json]\n"
               "Probes the isolation the supervisor can give: each mechanism, whether it is available,\n"
               "probed and in force, with its evidence, and the tier they make.\n"
               "\nOptions:\n"
               "  --json      print the ProbeResult as one JSON object\n"
               "  -h, --help  this text\n");
        ctl_help_tail();
}

/* `anvilctl help COMMAND`, `anvilctl COMMAND --help`: 0, or -1 for no such command. */
static int help_for(const char *cmd)
{
        if (strcmp(cmd, "run") == 0)
                help_run();
        else if (strcmp(cmd, "submit") == 0)
                help_submit();
        else if (strcmp(cmd, "trace") == 0)
                help_trace();
        else if (strcmp(cmd, "probe") == 0)
                help_probe();
        else if (strcmp(cmd, "verify") == 0)
                return ctl_verify(2, (char *[]){ "verify", "--help", NULL });
        else if (strcmp(cmd, "runs") == 0 || strcmp(cmd, "tasks") == 0 || strcmp(cmd, "show") == 0)
                return ctl_store_help(cmd);
        else if (strcmp(cmd, "ui") == 0)
                ctl_ui_help();
        else if (strcmp(cmd, "help") == 0)
                help_main();
        else
                return -1;
        return 0;
}

static int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die_usage(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "anvilctl: ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        return EXIT_USAGE;
}

static int parse_seconds(const char *s, uint64_t max, uint64_t *out)
{
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || !*s || *end || *s == '-' || v == 0 || v > max)
                return -1;
        *out = v;
        return 0;
}

/* ---- human output ---- */

static void print_event(const struct proto_event *e)
{
        printf("  %7" PRIu64 " ms  %-10s %-14s", e->t_ms, e->layer, e->kind);
        if (e->message)
                printf(" %s", e->message);
        else if (e->op)
                printf(" %s", e->op);
        if (e->line.set && e->col.set)
                printf(" (line %" PRId64 ", column %" PRId64 ")", e->line.v, e->col.v);
        else if (e->line.set)
                printf(" (line %" PRId64 ")", e->line.v);
        putchar('\n');
        if (e->traceback) {
                /* Indented, so that it reads as part of the event. */
                for (const char *l = e->traceback; *l;) {
                        size_t n = strcspn(l, "\n");
                        printf("            %.*s\n", (int)n, l);
                        l += n + (l[n] == '\n');
                }
        }
}

static void print_block(const char *title, const char *text, bool truncated, uint64_t total)
{
        if (!*text && !truncated)
                return;
        printf("%s:%s\n", title, truncated ? "" : "");
        for (const char *l = text; *l;) {
                size_t n = strcspn(l, "\n");
                printf("  %.*s\n", (int)n, l);
                l += n + (l[n] == '\n');
        }
        if (truncated)
                printf("  [... truncated: %" PRIu64 " bytes written, %zu kept]\n", total, strlen(text));
}

/* The variables the tool left for a next step, by name, and those it will not have. The text
 * is the tool's word: a name list is shown only if it parses as a JSON object. */
static void print_variables(const struct proto_run_result *r)
{
        if (r->variables) {
                json_error_t jerr;
                json_t *o = json_loads(r->variables, JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, &jerr);
                printf("variables kept (%zu bytes of JSON):", strlen(r->variables));
                const char *k;
                json_t *v;
                if (json_is_object(o)) {
                        if (json_object_size(o) == 0)
                                printf(" none");
                        json_object_foreach(o, k, v) printf(" %s", k);
                }
                putchar('\n');
                json_decref(o);
        }
        const struct proto_variable_dropped *d = r->variables_dropped.items;
        if (r->variables_dropped.n)
                printf("variables not kept:\n");
        for (size_t i = 0; i < r->variables_dropped.n; i++)
                printf("  %s (%s) %s\n", d[i].name, d[i].type, d[i].reason);
}

/* What a run showed as it went (run_request.stream_output): its events and the tool's output,
 * line by line, then its summary without them. */
struct live_view {
        bool json, events; /* --json: one RunResult at the end; --events: JSON lines */
        bool header;       /* "trace:" printed */
        size_t n_events;   /* run_event frames shown: the first of the result's events */
        bool out_shown, err_shown;
        char *line[2]; /* an unfinished line of stdout, of stderr */
        size_t line_len[2];
};

static void print_human(const struct proto_run_result *r, const struct live_view *live)
{
        printf("run %s: %s", r->run_id, r->killed ? r->killed : r->status);
        if (r->exit_code.set)
                printf(" (exit code %" PRId64 ")", r->exit_code.v);
        if (r->signal)
                printf(" (%s)", r->signal);
        printf(" in %" PRIu64 " ms, cpu %" PRIu64 " ms, peak %.1f MB; isolation: %s\n", r->wall_ms, r->cpu_ms,
               r->peak_rss_mb, r->isolation.tier);
        if (r->not_stored) /* the broker's: the result is here, and nowhere else */
                printf("note: %s\n", r->not_stored);
        if (!live) {
                printf("trace:\n");
                const struct proto_event *ev = r->events.items;
                for (size_t i = 0; i < r->events.n; i++)
                        print_event(&ev[i]);
        }
        /* Shown as it came: only what was cut is said again. */
        if (!live || !live->out_shown)
                print_block("stdout", r->out_text, r->stdout_truncated, r->stdout_bytes);
        else if (r->stdout_truncated)
                printf("stdout: truncated: %" PRIu64 " bytes written, %zu kept\n", r->stdout_bytes,
                       strlen(r->out_text));
        if (!live || !live->err_shown)
                print_block("stderr", r->err_text, r->stderr_truncated, r->stderr_bytes);
        else if (r->stderr_truncated)
                printf("stderr: truncated: %" PRIu64 " bytes written, %zu kept\n", r->stderr_bytes,
                       strlen(r->err_text));
        if (r->final_answer)
                printf("final answer: %s\n", r->final_answer);
        print_variables(r);
        const struct proto_artifact *a = r->artifacts.items;
        if (r->artifacts.n)
                printf("artifacts:\n");
        for (size_t i = 0; i < r->artifacts.n; i++)
                printf("  %s/%s  (%" PRIu64 " bytes, sha256 %s)\n", r->artifacts_dir ? r->artifacts_dir : ".",
                       a[i].path, a[i].bytes, a[i].sha256);
        /* What the tool could have done, beside what it did. */
        const struct proto_blast_radius *b = &r->blast_radius;
        printf("blast radius (%s):\n", r->isolation.tier);
        for (size_t i = 0; i < b->read.n; i++)
                printf("  %s %s\n", i ? "         " : "read:    ", b->read.items[i]);
        for (size_t i = 0; i < b->write.n; i++)
                printf("  %s %s\n", i ? "         " : "write:   ", b->write.items[i]);
        if (b->network)
                printf("  network:  %s\n", b->network);
        if (b->processes)
                printf("  processes: %s\n", b->processes);
        const struct proto_limits *l = &b->limits;
        printf("  limits:   wall %" PRIu64 " s (used %.1f s), cpu %" PRIu64 " s (used %.1f s), memory %" PRIu64
               " MB (peak %.1f MB), output %" PRIu64 " bytes per stream, files %" PRIu64 " bytes, %" PRIu64
               " processes and threads\n",
               l->wall_s, (double)r->wall_ms / 1000.0, l->cpu_s, (double)r->cpu_ms / 1000.0, l->memory_mb,
               r->peak_rss_mb, l->output_bytes, l->files_bytes, l->pids);
        if (r->capabilities.denied.n) {
                printf("capabilities denied:");
                for (size_t i = 0; i < r->capabilities.denied.n; i++)
                        printf(" %s", r->capabilities.denied.items[i]);
                putchar('\n');
        }
}

/* A message as JSON on stdout: 0, or EXIT_REFUSED if it cannot be rendered. */
static int print_json(enum proto_type type, const void *msg)
{
        json_t *j = proto_to_json(proto_schemas[type], msg);
        char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
        if (s)
                printf("%s\n", s);
        free(s);
        json_decref(j);
        return s ? 0 : EXIT_REFUSED;
}

/* ---- run ---- */

static int read_input(const char *what, const char *path, struct proto_input *in)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *data;
        size_t len;
        if (fd_read_file(path, PROTO_FRAME_MAX, &data, &len, &err) < 0) {
                fprintf(stderr, "anvilctl: %s %s: %s\n", what, path, err.msg);
                return -1;
        }
        _cleanup_free_ char *copy = strdup(path);
        in->name = strdup(basename(copy));
        in->data.data = data;
        in->data.len = len;
        return 0;
}

/* --input [NAME=]PATH for a run (ctl_open_input): no server ever opens a path for a client. */
static int open_input(const char *arg, struct proto_input *in, int *fds, size_t *n_fds)
{
        char why[PROTO_PATH_MAX + 128];
        return ctl_open_input("--input", arg, in, fds, n_fds, why, sizeof(why)) < 0 ? die_usage("%s", why) : 0;
}

/* A request must fit in one frame (PROTO_FRAME_MAX): found here, before connecting, it is the
 * user's to fix (EXIT_USAGE, 125), not a server that cannot be reached. The encoding is the one that
 * will be sent. what: "the run", "the task". */
static int check_frame(const struct proto_msg *m, const char *what, const struct proto_array *inputs)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *buf;
        size_t len;
        if (proto_encode(m, &buf, &len, &err) == 0) {
                free(buf);
                return 0;
        }
        if (err.code != EMSGSIZE)
                return die_usage("cannot encode %s: %s", what, err.msg);
        uint64_t bytes = 0;
        const struct proto_input *in = inputs->items;
        for (size_t i = 0; i < inputs->n; i++)
                bytes += in[i].data.len;
        return die_usage("%s does not fit in one frame of %u bytes: its %zu input file%s hold %" PRIu64 " bytes (%s)",
                         what, PROTO_FRAME_MAX, inputs->n, inputs->n == 1 ? "" : "s", bytes, err.msg);
}

/* --variables FILE.json: a JSON object of at most PROTO_VARIABLES_MAX bytes, sent as it is
 * written. Checked here to say early what is wrong with it; the runner decodes it again, in
 * the jail, with Python's json and the name rules (an identifier, not private, no builtin's). */
static int read_variables(const char *path, char **out)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *data;
        size_t len;
        if (fd_read_file(path, PROTO_VARIABLES_MAX, &data, &len, &err) < 0) {
                fprintf(stderr, "anvilctl: --variables: %s%s\n", err.msg,
                        err.code == EFBIG ? " (the limit for variables)" : "");
                return -1;
        }
        if (memchr(data, 0, len) || !utf8_valid(data, len)) {
                fprintf(stderr, "anvilctl: --variables %s: not UTF-8 text\n", path);
                free(data);
                return -1;
        }
        json_error_t jerr;
        json_t *o = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &jerr);
        if (!o || !json_is_object(o)) {
                if (o)
                        fprintf(stderr, "anvilctl: --variables %s: expected a JSON object\n", path);
                else
                        fprintf(stderr, "anvilctl: --variables %s: not valid JSON (line %d, column %d: %s)\n", path,
                                jerr.line, jerr.column, jerr.text);
                json_decref(o);
                free(data);
                return -1;
        }
        json_decref(o);
        *out = (char *)data;
        return 0;
}

/* A signal's number from the RunResult's name of it (supervisor/result.c: "SIGSEGV", or
 * "signal 40" for one with no name); 0 if it names none. */
static int signal_number(const char *name)
{
        if (!name)
                return 0;
        if (strncmp(name, "SIG", 3) == 0) {
                for (int sig = 1; sig < 65; sig++) {
                        const char *abbrev = sigabbrev_np(sig);
                        if (abbrev && strcmp(abbrev, name + 3) == 0)
                                return sig;
                }
                return 0;
        }
        int sig = 0, n = 0;
        if (sscanf(name, "signal %d%n", &sig, &n) == 1 && name[n] == '\0' && sig > 0 && sig < 65)
                return sig;
        return 0;
}

/* The exit status for a run's result (the table atop this file): what the tool did, or what
 * Anvil did to it. A tool's own code in 120..127 is 1: those are Anvil's. */
static int run_exit(const struct proto_run_result *r)
{
        const char *st = r->status ? r->status : "";
        if (strcmp(st, "ok") == 0)
                return 0;
        if (strcmp(st, "blocked") == 0)
                return EXIT_BLOCKED;
        if (strcmp(st, "killed") == 0 || r->killed)
                return r->killed && strcmp(r->killed, pol_reason_format(POL_KILLED_TIMEOUT)) == 0 ? EXIT_TIMEOUT
                                                                                                  : EXIT_KILLED;
        if (r->exit_code.set) {
                int64_t v = r->exit_code.v;
                return v >= 1 && v <= 255 && !(v >= EXIT_ANVIL_MIN && v <= EXIT_ANVIL_MAX) ? (int)v : 1;
        }
        int sig = signal_number(r->signal);
        /* Neither an exit nor a signal: the sandbox did not say what the tool did. */
        return sig ? 128 + sig : EXIT_SANDBOX;
}

/* ---- live output (run_request.stream_output) ---- */

/* A line longer than this is shown in pieces of it. */
#define LIVE_LINE_MAX (64 * 1024)

static void live_header(struct live_view *v)
{
        if (!v->header)
                printf("trace:\n");
        v->header = true;
}

/* The unfinished line of stream i, ended here (an event comes between, or the run ended). */
static void live_flush_line(struct live_view *v, int i)
{
        if (!v->line_len[i])
                return;
        printf("  %s| %.*s\n", i ? "stderr" : "stdout", (int)v->line_len[i], v->line[i]);
        v->line_len[i] = 0;
}

static void live_output(struct live_view *v, const struct proto_run_output *o)
{
        int i = strcmp(o->stream, "stderr") == 0;
        *(i ? &v->err_shown : &v->out_shown) = true;
        live_header(v);
        for (const char *p = o->text; *p;) {
                size_t n = strcspn(p, "\n");
                if (!v->line[i] && !(v->line[i] = malloc(LIVE_LINE_MAX)))
                        return;
                while (n) { /* into the line, which is shown whenever it is full */
                        size_t take = n < LIVE_LINE_MAX - v->line_len[i] ? n : LIVE_LINE_MAX - v->line_len[i];
                        memcpy(v->line[i] + v->line_len[i], p, take);
                        v->line_len[i] += take;
                        p += take;
                        n -= take;
                        if (v->line_len[i] == LIVE_LINE_MAX)
                                live_flush_line(v, i);
                }
                if (*p == '\n') {
                        printf("  %s| %.*s\n", i ? "stderr" : "stdout", (int)v->line_len[i], v->line[i]);
                        v->line_len[i] = 0;
                        p++;
                }
        }
}

/* One JSON line of --events: {"type": ..., the message's fields}. */
static int print_json_line(enum proto_type type, const void *msg)
{
        json_t *j = proto_to_json(proto_schemas[type], msg);
        json_t *o = json_object();
        int r = -1;
        if (j && o && json_object_set_new(o, "type", json_string(proto_type_name(type))) == 0 &&
            json_object_update(o, j) == 0) {
                char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
                if (s) {
                        printf("%s\n", s);
                        r = 0;
                }
                free(s);
        }
        json_decref(j);
        json_decref(o);
        return r < 0 ? EXIT_REFUSED : 0;
}

/* A run's frames: its events and the tool's output as they come (shown at once, unless
 * --json), then its result. */
static int on_run_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        struct live_view *v = ctx;
        int r = 1;
        if (in->type == PROTO_RUN_EVENT || in->type == PROTO_RUN_OUTPUT) {
                if (v->json)
                        return 1;
                if (v->events) {
                        (void)print_json_line(in->type, &in->u);
                } else if (in->type == PROTO_RUN_OUTPUT) {
                        live_output(v, &in->u.run_output);
                } else {
                        live_header(v);
                        live_flush_line(v, 0);
                        live_flush_line(v, 1);
                        print_event(&in->u.run_event.event);
                }
                v->n_events += in->type == PROTO_RUN_EVENT;
        } else if (in->type == PROTO_RUN_RESULT) {
                const struct proto_run_result *res = &in->u.run_result;
                if (v->json) {
                        *rc = print_json(PROTO_RUN_RESULT, res);
                } else if (v->events) {
                        *rc = print_json_line(PROTO_RUN_RESULT, res);
                } else {
                        live_flush_line(v, 0);
                        live_flush_line(v, 1);
                        /* The events not streamed (the summary of those not recorded): after
                         * those shown, in their place. */
                        const struct proto_event *ev = res->events.items;
                        if (v->n_events < res->events.n)
                                live_header(v);
                        for (size_t i = v->n_events; i < res->events.n; i++)
                                print_event(&ev[i]);
                        print_human(res, v->header ? v : NULL);
                        *rc = 0;
                }
                if (*rc == 0)
                        *rc = run_exit(res);
                if (!v->json && !v->events && res->exit_code.set && res->exit_code.v >= EXIT_ANVIL_MIN &&
                    res->exit_code.v <= EXIT_ANVIL_MAX && strcmp(res->status ? res->status : "", "error") == 0)
                        printf("note: the tool exited %" PRId64 ", in %d..%d, which anvilctl keeps for Anvil's own "
                               "outcomes: it exits 1\n",
                               res->exit_code.v, EXIT_ANVIL_MIN, EXIT_ANVIL_MAX);
                fflush(stdout);
                int out = ctl_out_run(res); /* -o DIR */
                if (out)
                        *rc = out;
                r = 0;
        } else {
                return -1;
        }
        fflush(stdout);
        return r;
}

/* The words after "--": the tool's sys.argv[1:] (run_request.args), held here to the bounds
 * the supervisor holds them to (pol_args_check), so that a command line too long is the
 * user's to fix before anything is sent. */
static int set_tool_args(int n, char **words, struct proto_strv *args)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        for (int i = 0; i < n; i++) {
                size_t len = strlen(words[i]);
                if (len > PROTO_PATH_MAX || !utf8_valid((const uint8_t *)words[i], len))
                        return -!!die_usage("the tool's argument %d is not UTF-8 text of at most %u bytes", i + 1,
                                            PROTO_PATH_MAX);
        }
        struct proto_strv given = { words, (size_t)n };
        if (pol_args_check(&given, "the tool's arguments", &err) < 0)
                return -!!die_usage("%s", err.msg);
        for (int i = 0; i < n; i++)
                if (proto_strv_push(args, words[i]) < 0)
                        return -!!die_usage("out of memory");
        return 0;
}

static int cmd_run(int argc, char **argv)
{
        static const struct option opts[] = {
                { "input", required_argument, NULL, 'i' },
                { "timeout", required_argument, NULL, 't' },
                { "cpu", required_argument, NULL, 'c' },
                { "memory", required_argument, NULL, 'm' },
                { "cap", required_argument, NULL, 'p' },
                { "json", no_argument, NULL, 'j' },
                { "variables", required_argument, NULL, 'v' },
                { "output", required_argument, NULL, 'o' },
                { "events", no_argument, NULL, 'e' },
                { "python-layers-off", no_argument, NULL, 'L' },
                { "help", no_argument, NULL, 'h' },        { 0 },
        };
        struct proto_msg m = { .type = PROTO_RUN_REQUEST };
        struct proto_run_request *req = &m.u.run_request;
        _cleanup_close_ int fd = -EBADF;
        struct live_view view = { 0 };
        int in_fds[PROTO_INPUTS_MAX];
        size_t n_in_fds = 0;
        int c, rc = EXIT_USAGE;
        /* What follows the first "--" is the tool's (its sys.argv[1:]), never anvilctl's. */
        int tool_args = argc;
        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--") == 0) {
                        tool_args = i;
                        break;
                }
        optind = 1;
        while ((c = getopt_long(tool_args, argv, "o:h", opts, NULL)) != -1) {
                switch (c) {
                case 'o': ctl_out_dir = optarg; break;
                case 'i': {
                        if (req->inputs.n >= PROTO_INPUTS_MAX) {
                                rc = die_usage("at most %d --input files", PROTO_INPUTS_MAX);
                                goto out;
                        }
                        struct proto_input *in = proto_array_push(&req->inputs, sizeof(*in));
                        if (!in || (rc = open_input(optarg, in, in_fds, &n_in_fds)) != 0) {
                                rc = rc ? rc : EXIT_USAGE;
                                goto out;
                        }
                        rc = EXIT_USAGE;
                        break;
                }
                case 't':
                        if (parse_seconds(optarg, POL_WALL_S_MAX, &req->limits.wall_s) < 0) {
                                rc = die_usage("--timeout: expected whole seconds, %d..%d, not '%s'", POL_WALL_S_MIN,
                                               POL_WALL_S_MAX, optarg);
                                goto out;
                        }
                        break;
                case 'c':
                        if (parse_seconds(optarg, POL_CPU_S_MAX, &req->limits.cpu_s) < 0) {
                                rc = die_usage("--cpu: expected whole seconds, %d..%d, not '%s'", POL_CPU_S_MIN,
                                               POL_CPU_S_MAX, optarg);
                                goto out;
                        }
                        break;
                case 'm':
                        if (parse_seconds(optarg, POL_MEMORY_MB_MAX, &req->limits.memory_mb) < 0 ||
                            req->limits.memory_mb < POL_MEMORY_MB_MIN) {
                                rc = die_usage("--memory: expected megabytes, %d..%d, not '%s'", POL_MEMORY_MB_MIN,
                                               POL_MEMORY_MB_MAX, optarg);
                                goto out;
                        }
                        break;
                case 'p':
                        /* The user at the command line asks for it and approves it: whether it
                         * is granted is then the server's policy, which says why not. A name
                         * that is no capability is a typo, refused as task.json's is. */
                        char msg[512];
                        if (pol_cap_check("--cap", optarg, msg, sizeof(msg)) < 0) {
                                rc = die_usage("%s", msg);
                                goto out;
                        }
                        if (req->capabilities_requested.n >= PROTO_CAPS_MAX ||
                            proto_strv_push(&req->capabilities_requested, optarg) < 0 ||
                            proto_strv_push(&req->capabilities_approved, optarg) < 0) {
                                rc = die_usage("at most %d --cap", PROTO_CAPS_MAX);
                                goto out;
                        }
                        break;
                case 'j': view.json = true; break;
                case 'e': view.events = true; break;
                case 'L': req->python_layers_off = true; break;
                case 'v':
                        free(req->variables);
                        req->variables = NULL;
                        if (read_variables(optarg, &req->variables) < 0)
                                goto out;
                        break;
                case 'h':
                        help_run();
                        rc = 0;
                        goto out;
                default: usage(stderr); goto out;
                }
        }
        if (optind != tool_args - 1) {
                rc = die_usage("run: expected one TOOL.py (or -, the source on stdin)");
                goto out;
        }
        if (view.json && view.events) {
                rc = die_usage("run: --json and --events are two ways of printing the run: give one");
                goto out;
        }
        if (set_tool_args(argc - tool_args - (tool_args < argc), argv + tool_args + 1, &req->args) < 0)
                goto out;
        req->stream_output = !view.json; /* --json waits for the one RunResult */
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *src;
        size_t len;
        /* "-": the source on stdin (a pipe, a file, a terminal), within the same bound. */
        if ((strcmp(argv[optind], "-") == 0 ? fd_read_all(STDIN_FILENO, "-", PROTO_SOURCE_MAX, &src, &len, &err)
                                            : fd_read_file(argv[optind], PROTO_SOURCE_MAX, &src, &len, &err)) < 0) {
                fprintf(stderr, "anvilctl: %s\n", err.msg);
                goto out;
        }
        req->source = (char *)src;
        char *tool_path = strdup(argv[optind]); /* its name, for `anvilctl runs` */
        req->tool_name = tool_path ? strndup(basename(tool_path), PROTO_NAME_MAX) : NULL;
        free(tool_path);
        if (memchr(src, 0, len) || !utf8_valid(src, len)) {
                rc = die_usage("%s: the tool's source must be UTF-8 text", argv[optind]);
                goto out;
        }
        unsigned modes[PROTO_INPUTS_MAX];
        for (size_t i = 0; i < n_in_fds; i++) {
                struct stat st;
                modes[i] = fstat(in_fds[i], &st) == 0 ? st.st_mode : 0;
        }
        if (pol_inputs_check(&req->inputs, "run_request.inputs", modes, n_in_fds, &err) < 0) {
                rc = die_usage("--input: %s", err.msg);
                goto out;
        }
        char rid[32];
        snprintf(rid, sizeof(rid), "ctl-%d", (int)getpid());
        req->request_id = strdup(rid);
        if (check_frame(&m, "the run", &req->inputs) != 0)
                goto out;

        fd = ctl_send_request_fds(&m, "the run", in_fds, n_in_fds);
        rc = fd < 0 ? -fd : ctl_follow(fd, "the run", on_run_frame, &view, NULL);
        live_flush_line(&view, 0); /* what a run that ended without its result left unfinished */
        live_flush_line(&view, 1);
out:
        free(view.line[0]);
        free(view.line[1]);
        for (size_t i = 0; i < n_in_fds; i++)
                (void)close(in_fds[i]);
        proto_msg_free(&m);
        return rc;
}

/* The probe's one frame: its result. */
static int on_probe_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        if (in->type != PROTO_PROBE_RESULT)
                return -1;
        if (*(bool *)ctx) {
                *rc = print_json(PROTO_PROBE_RESULT, &in->u.probe_result);
                return 0;
        }
        const struct proto_probe_result *r = &in->u.probe_result;
        printf("isolation tier: %s\n", r->tier);
        printf("  %-22s %-9s %-6s %-8s %s\n", "mechanism", "available", "probed", "in force", "evidence");
        const struct proto_mechanism *mm = r->mechanisms.items;
        for (size_t i = 0; i < r->mechanisms.n; i++)
                printf("  %-22s %-9s %-6s %-8s %s\n", mm[i].name, mm[i].available ? "yes" : "no",
                       mm[i].probed ? "yes" : "no", mm[i].in_force ? "yes" : "no", mm[i].evidence);
        /* Said again below the table, where it is not lost: Landlock refuses, and the
         * refusals reach runs without their explanation (the evidence says what would). */
        for (size_t i = 0; i < r->mechanisms.n; i++)
                if (strcmp(mm[i].name, "kernel audit") == 0 && mm[i].probed && !mm[i].in_force)
                        printf("note: %s\n", mm[i].evidence);
        *rc = 0;
        return 0;
}

/* The isolation probe: each mechanism, available / probed / in force, with its evidence. */
static int cmd_probe(int argc, char **argv)
{
        static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                              { "help", no_argument, NULL, 'h' },
                                              { 0 } };
        bool json = false;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if (c == 'j')
                        json = true;
                else if (c == 'h') {
                        help_probe();
                        return 0;
                } else {
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc)
                return die_usage("probe: takes no arguments");
        struct proto_msg m = { .type = PROTO_PROBE_REQUEST };
        char rid[32];
        snprintf(rid, sizeof(rid), "ctl-%d", (int)getpid());
        m.u.probe_request.request_id = rid;
        _cleanup_close_ int fd = ctl_send_request(&m, "the probe request");
        if (fd < 0)
                return -fd;
        return ctl_follow(fd, "the probe", on_probe_frame, &json, NULL);
}

/* ---- submit, trace ---- */

static void print_indented(const char *prefix, const char *text)
{
        for (const char *l = text; *l;) {
                size_t n = strcspn(l, "\n");
                printf("%s%.*s\n", prefix, (int)n, l);
                l += n + (l[n] == '\n');
        }
}

/* One task_event as a line (or a few). verbose: the model's replies, the prompt and the
 * observations in full (anvilctl trace; submit --verbose). */
/* A streamed reply as it grows (submit --verbose): its text as it comes, indented as the
 * whole reply would be; the whole is then not printed again. */
static bool delta_shown, delta_at_line_start;

static void print_delta(const char *msg)
{
        if (!delta_shown) {
                printf("the model is replying:\n");
                delta_shown = delta_at_line_start = true;
        }
        for (const char *p = msg; *p; p++) {
                if (delta_at_line_start)
                        fputs("  | ", stdout);
                putchar(*p);
                delta_at_line_start = *p == '\n';
        }
        fflush(stdout);
}

static void print_task_event(const struct proto_task_event *e, bool verbose)
{
        enum proto_task_kind k = proto_task_kind_from_name(e->kind);
        const char *msg = e->message ? e->message : "";
        if (k == PROTO_TASK_MODEL_DELTA) {
                if (verbose)
                        print_delta(msg);
                return;
        }
        if (k == PROTO_TASK_MODEL_REPLY && delta_shown) {
                printf("%sthe model replied (%zu bytes, shown above as it came)\n", delta_at_line_start ? "" : "\n",
                       strlen(msg));
                delta_shown = false;
                return;
        }
        if (delta_shown) { /* the stream ended without its reply (an error, a cancel) */
                printf("%s", delta_at_line_start ? "" : "\n");
                delta_shown = false;
        }
        if (k == PROTO_TASK_STARTED) {
                printf("task %s\n", e->task_id);
                print_indented("  | ", msg);
        } else if (k == PROTO_TASK_DESCRIBE) {
                printf("%s\n", msg);
        } else if (k == PROTO_TASK_PROMPT || k == PROTO_TASK_OBSERVATION || k == PROTO_TASK_MODEL_REPLY) {
                const char *title = k == PROTO_TASK_PROMPT        ? "system prompt"
                                    : k == PROTO_TASK_OBSERVATION ? "observation"
                                                                  : "the model replied";
                if (verbose) {
                        printf("%s:\n", title);
                        print_indented("  | ", msg);
                } else {
                        printf("%s (%zu bytes)\n", title, strlen(msg));
                }
        } else if (k == PROTO_TASK_MODEL_REQUEST) {
                printf("\n%s\n", msg);
        } else if (k == PROTO_TASK_NO_CODE) {
                printf("no code in the reply: nothing run; the model is told:\n");
                print_indented("  | ", msg);
        } else if (k == PROTO_TASK_CODE) {
                printf("code action:\n");
                print_indented("  > ", e->code ? e->code : "");
        } else if (k == PROTO_TASK_RUN_EVENT) {
                if (e->event)
                        print_event(e->event);
        } else if (k == PROTO_TASK_FINAL_ANSWER) {
                printf("final_answer: %s\n", msg);
        } else {
                printf("%s: %s\n", e->kind, msg); /* as it came: a kind this anvilctl does not know too */
        }
}

static void print_task_result(const struct proto_task_result *r)
{
        printf("\ntask %s: %s%s%s\n", r->task_id, r->status, r->error ? ": " : "", r->error ? r->error : "");
        if (r->not_stored)
                printf("note: %s\n", r->not_stored);
        if (r->trace_incomplete)
                printf("note: %s\n", r->trace_incomplete);
        const struct proto_task_step *s = r->steps.items;
        for (size_t i = 0; i < r->steps.n; i++)
                printf("  action %zu: run %s: %s\n", i + 1, s[i].run.run_id,
                       s[i].run.killed ? s[i].run.killed : s[i].run.status);
        if (!r->deliverable)
                return;
        const char *dir = NULL;
        for (size_t i = 0; i < r->steps.n; i++)
                if (strcmp(s[i].run.run_id, r->deliverable->run_id) == 0)
                        dir = s[i].run.artifacts_dir;
        printf("deliverable: the action of run %s\n", r->deliverable->run_id);
        const struct proto_artifact *a = r->deliverable->artifacts.items;
        for (size_t i = 0; i < r->deliverable->artifacts.n; i++)
                printf("  %s/%s  (%" PRIu64 " bytes, sha256 %s)\n", dir ? dir : ".", a[i].path, a[i].bytes,
                       a[i].sha256);
}

/* task.json (docs/agent.md): strictly, every key known and typed; inputs relative to its directory. */
/* A capability of task.json: its name, or {"network": [HOST, ...]} written as network=HOST,...
 * (policy/cap_scope.h), then checked as --cap is. */
static int task_cap(json_t *v, char **out)
{
        if (json_is_string(v)) {
                if (!*json_string_value(v) || strlen(json_string_value(v)) >= PROTO_PATH_MAX)
                        return -EINVAL;
                return (*out = strdup(json_string_value(v))) ? 0 : -ENOMEM;
        }
        json_t *hosts = json_object_get(v, "network");
        if (!json_is_object(v) || json_object_size(v) != 1 || !json_is_array(hosts) ||
            json_array_size(hosts) > POL_SCOPE_HOSTS_MAX + POL_SCOPE_RANGES_MAX)
                return -EINVAL;
        const char *items[POL_SCOPE_HOSTS_MAX + POL_SCOPE_RANGES_MAX];
        size_t i;
        json_t *h;
        json_array_foreach(hosts, i, h)
        {
                if (!json_is_string(h))
                        return -EINVAL;
                items[i] = json_string_value(h);
        }
        char buf[PROTO_PATH_MAX];
        if (pol_cap_join(items, json_array_size(hosts), buf, sizeof(buf)) < 0)
                return -EINVAL;
        return (*out = strdup(buf)) ? 0 : -ENOMEM;
}

static int read_task_file(const char *path, struct proto_task_submit *sub)
{
        json_error_t je;
        _cleanup_free_ uint8_t *text = NULL;
        size_t len;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (fd_read_file(path, 1024 * 1024, &text, &len, &err) < 0) {
                fprintf(stderr, "anvilctl: %s\n", err.msg);
                return -1;
        }
        json_t *j = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, &je);
        if (!j) {
                fprintf(stderr, "anvilctl: %s: line %d, column %d: %s\n", path, je.line, je.column, je.text);
                return -1;
        }
        int rc = -1;
        _cleanup_free_ char *copy = strdup(path);
        const char *base = copy ? dirname(copy) : ".";
        if (!json_is_object(j)) {
                fprintf(stderr, "anvilctl: %s: expected a JSON object\n", path);
                goto out;
        }
        const char *key;
        json_t *v;
        json_object_foreach(j, key, v)
        {
                if (strcmp(key, "task") == 0) {
                        if (!json_is_string(v) || !*json_string_value(v)) {
                                fprintf(stderr, "anvilctl: %s: \"task\" must be a non-empty string\n", path);
                                goto out;
                        }
                        sub->task = strdup(json_string_value(v));
                } else if (strcmp(key, "inputs") == 0) {
                        if (!json_is_array(v) || json_array_size(v) > PROTO_INPUTS_MAX) {
                                fprintf(stderr, "anvilctl: %s: \"inputs\" must be a list of at most %d file paths\n",
                                        path, PROTO_INPUTS_MAX);
                                goto out;
                        }
                        size_t i;
                        json_t *p;
                        json_array_foreach(v, i, p)
                        {
                                if (!json_is_string(p) || !*json_string_value(p)) {
                                        fprintf(stderr, "anvilctl: %s: inputs[%zu] must be a file path\n", path, i);
                                        goto out;
                                }
                                const char *ip = json_string_value(p);
                                char full[PATH_MAX];
                                if (snprintf(full, sizeof(full), "%s/%s", ip[0] == '/' ? "" : base, ip) >=
                                    (int)sizeof(full)) {
                                        fprintf(stderr, "anvilctl: %s: inputs[%zu]: the path is too long\n", path, i);
                                        goto out;
                                }
                                struct proto_input *in = proto_array_push(&sub->inputs, sizeof(*in));
                                if (!in || read_input("input", ip[0] == '/' ? ip : full, in) < 0)
                                        goto out;
                        }
                } else if (strcmp(key, "capabilities_approved") == 0) {
                        size_t i;
                        json_t *p;
                        if (!json_is_array(v) || json_array_size(v) > PROTO_CAPS_MAX) {
                                fprintf(stderr,
                                        "anvilctl: %s: \"capabilities_approved\" must be a list of at most %d names\n",
                                        path, PROTO_CAPS_MAX);
                                goto out;
                        }
                        json_array_foreach(v, i, p)
                        {
                                char field[64], msg[512];
                                _cleanup_free_ char *cap = NULL;
                                snprintf(field, sizeof(field), "capabilities_approved[%zu]", i);
                                if (task_cap(p, &cap) < 0) {
                                        fprintf(stderr,
                                                "anvilctl: %s: %s must be a capability name or "
                                                "{\"network\": [HOST, ...]}\n",
                                                path, field);
                                        goto out;
                                }
                                /* hosts are read here; a plain name is the broker's to refuse, as it was */
                                if (strchr(cap, '=') && pol_cap_check(field, cap, msg, sizeof(msg)) < 0) {
                                        fprintf(stderr, "anvilctl: %s: %s\n", path, msg);
                                        goto out;
                                }
                                (void)proto_strv_push(&sub->capabilities_approved, cap);
                        }
                } else if (strcmp(key, "max_steps") == 0 || strcmp(key, "time_budget_s") == 0) {
                        bool steps = key[0] == 'm';
                        json_int_t max = steps ? POL_TASK_STEPS_MAX : POL_TASK_BUDGET_S_MAX;
                        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max) {
                                fprintf(stderr, "anvilctl: %s: \"%s\" must be a whole number, 1..%lld\n", path, key,
                                        (long long)max);
                                goto out;
                        }
                        *(steps ? &sub->max_steps : &sub->time_budget_s) = (uint64_t)json_integer_value(v);
                } else if (strcmp(key, "model") == 0) {
                        if (!json_is_object(v)) {
                                fprintf(stderr, "anvilctl: %s: \"model\" must be an object {\"url\", \"name\"}\n",
                                        path);
                                goto out;
                        }
                        sub->model = calloc(1, sizeof(*sub->model));
                        const char *mk;
                        json_t *mv;
                        json_object_foreach(v, mk, mv)
                        {
                                bool url = strcmp(mk, "url") == 0;
                                if (strcmp(mk, "key") == 0) {
                                        fprintf(stderr,
                                                "anvilctl: %s: model.key: a task never carries a key: the broker's own "
                                                "(ANVIL_MODEL_KEY or --model-key-file) goes to the broker's "
                                                "--model-url only\n",
                                                path);
                                        goto out;
                                }
                                if (!url && strcmp(mk, "name") != 0) {
                                        fprintf(stderr, "anvilctl: %s: model.%s: unknown key (url, name)\n", path, mk);
                                        goto out;
                                }
                                if (!json_is_string(mv) || !*json_string_value(mv)) {
                                        fprintf(stderr, "anvilctl: %s: model.%s must be a non-empty string\n", path,
                                                mk);
                                        goto out;
                                }
                                *(url ? &sub->model->url : &sub->model->name) = strdup(json_string_value(mv));
                        }
                } else {
                        fprintf(stderr,
                                "anvilctl: %s: unknown key \"%s\" (task, inputs, capabilities_approved, max_steps, "
                                "time_budget_s, model)\n",
                                path, key);
                        goto out;
                }
        }
        if (!sub->task) {
                fprintf(stderr, "anvilctl: %s: \"task\" is required\n", path);
                goto out;
        }
        if (pol_inputs_check(&sub->inputs, "inputs", NULL, 0, &err) < 0) {
                fprintf(stderr, "anvilctl: %s: %s\n", path, err.msg);
                goto out;
        }
        rc = 0;
out:
        json_decref(j);
        return rc;
}

/* Ctrl-C (or SIGTERM) during submit: the task is cancelled, not abandoned. Once the task id
 * is known, its cancel frame is encoded ahead (cancel_frame), so the handler only write()s
 * (async-signal-safe); the broker then ends the task and its result, "cancelled", is printed
 * as any other. A second signal, or one before the id is known, ends anvilctl at once (the
 * broker cancels a task whose client has gone). */
static uint8_t *cancel_frame;
static size_t cancel_len;
static int cancel_fd = -1;
static volatile sig_atomic_t cancel_sent;

static void on_cancel_signal(int sig)
{
        if (cancel_sent || !cancel_frame) {
                signal(sig, SIG_DFL);
                raise(sig);
                return;
        }
        cancel_sent = 1;
        int saved = errno;
        size_t off = 0;
        while (off < cancel_len) {
                ssize_t n = write(cancel_fd, cancel_frame + off, cancel_len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                off += (size_t)n;
        }
        errno = saved;
}

static void arm_cancel(int fd, const char *task_id)
{
        if (cancel_frame)
                return;
        struct proto_msg m = { .type = PROTO_CANCEL };
        m.u.cancel.task_id = (char *)task_id;
        struct anvil_err err = ANVIL_ERR_INIT;
        uint8_t *buf;
        size_t n;
        if (proto_encode(&m, &buf, &n, &err) < 0)
                return; /* the signal then ends anvilctl, which cancels the task too */
        cancel_len = n;
        cancel_fd = fd;
        cancel_frame = buf; /* last: the handler reads it only once it is set */
}

/* A task's frames (submit) or its trace's (trace): task events as they come, then the
 * TaskResult (submit) or the trace's end (trace). */
struct task_view {
        bool json, verbose, replay;
        bool events;           /* --events: each frame as a JSON line, as it comes */
        struct live_view live; /* an action's output, line by line (run_stdout, run_stderr) */
};

/* The exit status for a task's result (the table atop this file): 0 only for one that
 * delivered. */
static int task_exit(const struct proto_task_result *r)
{
        const char *st = r->status ? r->status : "";
        if (strcmp(st, "ok") == 0)
                return 0;
        if (strcmp(st, "failed") == 0)
                return EXIT_BLOCKED;
        if (strcmp(st, "cancelled") == 0 || strcmp(st, "interrupted") == 0)
                return EXIT_KILLED;
        return EXIT_REFUSED; /* a status this anvilctl does not know: not a delivery */
}

static int on_task_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        struct task_view *v = ctx;
        if (in->type == PROTO_TASK_EVENT) {
                const struct proto_task_event *e = &in->u.task_event;
                enum proto_task_kind k = proto_task_kind_from_name(e->kind);
                if (!v->replay && k == PROTO_TASK_STARTED)
                        arm_cancel(fd, e->task_id);
                v->live.header = true; /* a task's output lines have no "trace:" of their own */
                if (v->events) {
                        (void)print_json_line(PROTO_TASK_EVENT, e);
                } else if (v->json) {
                        /* the TaskResult alone, at the end */
                } else if (k == PROTO_TASK_RUN_STDOUT || k == PROTO_TASK_RUN_STDERR) {
                        struct proto_run_output o = { .stream = k == PROTO_TASK_RUN_STDERR ? "stderr" : "stdout",
                                                      .text = e->message ? e->message : "" };
                        live_output(&v->live, &o);
                } else {
                        live_flush_line(&v->live, 0);
                        live_flush_line(&v->live, 1);
                        print_task_event(e, v->verbose);
                }
                fflush(stdout);
                if (v->replay && proto_task_kind_from_name(e->kind) == PROTO_TASK_TRACE_END) {
                        *rc = 0;
                        return 0;
                }
                return 1;
        }
        if (in->type != PROTO_TASK_RESULT || v->replay)
                return -1;
        live_flush_line(&v->live, 0);
        live_flush_line(&v->live, 1);
        if (v->events) {
                *rc = print_json_line(PROTO_TASK_RESULT, &in->u.task_result);
        } else if (v->json) {
                *rc = print_json(PROTO_TASK_RESULT, &in->u.task_result);
        } else {
                print_task_result(&in->u.task_result);
                *rc = 0;
        }
        if (*rc == 0)
                *rc = task_exit(&in->u.task_result);
        fflush(stdout);
        int out = ctl_out_task(&in->u.task_result); /* -o DIR */
        if (out)
                *rc = out;
        return 0;
}

static int cmd_submit(int argc, char **argv)
{
        static const struct option opts[] = {
                { "json", no_argument, NULL, 'j' },    { "events", no_argument, NULL, 'e' },
                { "verbose", no_argument, NULL, 'v' }, { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },    { 0 }
        };
        bool json = false, verbose = false, events = false;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
                if (c == 'o')
                        ctl_out_dir = optarg;
                else if (c == 'j')
                        json = true;
                else if (c == 'e')
                        events = true;
                else if (c == 'v')
                        verbose = true;
                else if (c == 'h') {
                        help_submit();
                        return 0;
                } else {
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc - 1)
                return die_usage("submit: expected one TASK.json");
        if (json && events)
                return die_usage("submit: --json and --events are two ways of printing the task: give one");
        struct proto_msg m = { .type = PROTO_TASK_SUBMIT };
        if (read_task_file(argv[optind], &m.u.task_submit) < 0) {
                proto_msg_free(&m);
                return EXIT_USAGE;
        }
        char rid[32];
        snprintf(rid, sizeof(rid), "ctl-%d", (int)getpid());
        m.u.task_submit.request_id = strdup(rid);
        if (check_frame(&m, "the task", &m.u.task_submit.inputs) != 0) {
                proto_msg_free(&m);
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd = ctl_send_request(&m, "the task");
        proto_msg_free(&m);
        if (fd < 0)
                return -fd;
        struct sigaction sa = { .sa_handler = on_cancel_signal }; /* no SA_RESTART: reads go on (EINTR) */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        struct task_view v = { json, verbose, false, events, { 0 } };
        int rc = ctl_follow(fd, "the task", on_task_frame, &v, NULL);
        free(v.live.line[0]);
        free(v.live.line[1]);
        return rc;
}

static int cmd_trace(int argc, char **argv)
{
        if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
                help_trace();
                return 0;
        }
        if (argc != 2 || argv[1][0] == '-')
                return die_usage("trace: expected one TASK_ID or RUN_ID");
        if (argv[1][0] >= '0' && argv[1][0] <= '9') /* run ids begin with their time */
                return ctl_trace_run(argv[1]);      /* a run's events, from its stored result */
        struct proto_msg m = { .type = PROTO_TRACE_REQUEST };
        char rid[32];
        snprintf(rid, sizeof(rid), "ctl-%d", (int)getpid());
        m.u.trace_request.request_id = rid;
        m.u.trace_request.task_id = argv[1];
        if (strlen(argv[1]) > PROTO_ID_MAX)
                return die_usage("trace: '%s' is not a task id", argv[1]);
        _cleanup_close_ int fd = ctl_send_request(&m, "the request");
        if (fd < 0)
                return -fd;
        struct task_view v = { false, true, true, false, { 0 } };
        return ctl_follow(fd, "the task", on_task_frame, &v, NULL);
}

int main(int argc, char **argv)
{
        /* A broker that closes the connection (a bound met) while a request is written is an
         * EPIPE to report with its error frame, not a signal that ends anvilctl in silence. */
        (void)signal(SIGPIPE, SIG_IGN);
        if (argc < 2) {
                usage(stderr);
                return EXIT_USAGE;
        }
        if (strcmp(argv[1], "run") == 0)
                return cmd_run(argc - 1, argv + 1);
        if (strcmp(argv[1], "probe") == 0)
                return cmd_probe(argc - 1, argv + 1);
        if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                if (argc == 2 || argv[1][0] == '-') {
                        help_main();
                        return 0;
                }
                if (argc > 3)
                        return die_usage("help: expected one command (run, submit, trace, probe, verify)");
                int r = help_for(argv[2]);
                if (r < 0)
                        return die_usage("help: expected one command (run, submit, trace, probe, verify), not '%s'",
                                         argv[2]);
                return r;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("anvilctl " ANVIL_VERSION "\n");
                return 0;
        }
        if (strcmp(argv[1], "submit") == 0)
                return cmd_submit(argc - 1, argv + 1);
        if (strcmp(argv[1], "trace") == 0)
                return cmd_trace(argc - 1, argv + 1);
        if (strcmp(argv[1], "verify") == 0)
                return ctl_verify(argc - 1, argv + 1);
        if (strcmp(argv[1], "runs") == 0 || strcmp(argv[1], "tasks") == 0)
                return ctl_cmd_runs(argc - 1, argv + 1);
        if (strcmp(argv[1], "show") == 0)
                return ctl_cmd_show(argc - 1, argv + 1);
        if (strcmp(argv[1], "ui") == 0)
                return ctl_cmd_ui(argc - 1, argv + 1);
        fprintf(stderr, "anvilctl: unknown command '%s' (anvilctl --help lists them)\n", argv[1]);
        usage(stderr);
        return EXIT_USAGE;
}

/* For ctl/store.c (show): a stored result printed as run and submit print theirs. */
void ctl_print_run(const struct proto_run_result *r, bool json)
{
        if (json) {
                (void)print_json(PROTO_RUN_RESULT, r);
                return;
        }
        /* As run shows it: the trace, then the summary; the tool's output as a block, its lines'
         * places among the events not being stored. */
        struct live_view v = { 0 };
        if (r->events.n) {
                printf("trace:\n");
                v.header = true;
        }
        const struct proto_event *ev = r->events.items;
        for (size_t i = 0; i < r->events.n; i++)
                print_event(&ev[i]);
        print_human(r, &v);
}

void ctl_print_task(const struct proto_task_result *r, bool json)
{
        if (json)
                (void)print_json(PROTO_TASK_RESULT, r);
        else
                print_task_result(r);
}

void ctl_print_event(const struct proto_event *e)
{
        print_event(e);
}
