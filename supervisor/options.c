/* anvil-supervisor's settings: its options, the same from the configuration file's
 * [supervisor] and [limits] and from the command line (lib/config.h, docs/configuration.md).
 * Each value is checked once, in apply(), wherever it comes from; then the checks between
 * settings (bounds_resolve, the limits' defaults under their maxima). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/config.h"
#include "lib/ids.h"
#include "policy/limits.h"
#include "supervisor/supervisor.h"

#define UID_BASE_DEFAULT 2000000000u

static void usage(FILE *f)
{
        fprintf(f,
                "usage: anvil-supervisor --listen PATH --state-dir DIR [options]\n"
                "  --config FILE       settings read first, the options below over them (default\n"
                "                      " ANVIL_CONFIG_DEFAULT ", if it exists; /dev/null: none)\n"
                "  --listen PATH       Unix socket for the broker (created 0660)\n"
                "  --state-dir DIR     run directories, font cache (created 0711)\n"
                "  --allow-uid UID     a uid or user name besides root that may connect (repeatable)\n"
                "  --socket-group GRP  the group the socket is opened to (0660), e.g. the broker's\n"
                "  --cgroup auto|delegated|none\n"
                "                      use cgroups where available (default); 'delegated': this\n"
                "                      process's own v2 cgroup is its to use (as systemd's Delegate=yes\n"
                "                      marks it); 'none': never, memory is then bounded by RLIMIT_AS\n"
                "                      and the sampler alone\n"
                "  --cpu-quota PCT     each run's CPU quota in percent of one CPU (default 100), or none\n"
                "  --max-runs N        concurrent runs (default 32, at most %d)\n"
                "  --keep-runs N       run directories kept (default 200)\n"
                "  --max-input-bytes N the input files of one run passed as fds, in all (default 8 GiB)\n"
                "  --spares N          jail children cloned ahead of time (default 2, at most %d)\n"
                "  --warm N            warm jails: built with the default shape, the data stack\n"
                "                      imported, each waiting for one run (default 0, at most %d)\n"
                "  --warm-min-available-mb N  below this MemAvailable the warm pool shrinks\n"
                "                      (default 1024)\n"
                "  --uid-base UID      host uids for jails: UID builds the font cache, runs get\n"
                "                      UID+1 .. UID+max-runs (default %u)\n"
                "  --runner PATH       anvil-py (default: beside this binary, else ../lib/anvil from it)\n"
                "  --enable-kernel-audit  switch the kernel's audit on at start-up (it stays on), so\n"
                "                      that Landlock's denials are explained in each run's trace\n"
                "  --kernel-audit on|off  the same, on; off: leave it as it is (default)\n"
                "Bounds on clients (each met is an error frame that names it; per uid: over all the\n"
                "connections of one uid together):\n"
                "  --max-conns N       connections at once, all uids (default twice the per-uid cap,\n"
                "                      at least %d)\n"
                "  --max-conns-per-uid N  connections at once, per uid: at least max-runs + 1, as the\n"
                "                      broker carries each run on a connection of its own (default\n"
                "                      max-runs + %d)\n"
                "  --max-inflight-per-uid N  runs at once, per uid (default max-runs)\n"
                "  --idle-timeout S    a connection with nothing in flight that sends nothing (default %d)\n"
                "  --frame-timeout S   a frame begun and not completed; an error frame left unread\n"
                "                      (default %d)\n"
                "  --max-partial-bytes N  bytes of frames begun and not completed, per uid (default\n"
                "                      (max-runs + 1) x 16 MiB: a request for every slot at once)\n"
                "  --max-unread-bytes N   bytes sent and not yet read, per uid (default as above)\n"
                "  --help              this text\n"
                "  --version           print the version (" ANVIL_VERSION ") and exit\n"
                "Each run's limits (their defaults and maxima) are set in the file's [limits].\n",
                SUP_MAX_RUNS, SUP_MAX_SPARES, SUP_MAX_WARM, UID_BASE_DEFAULT, SUP_MAX_CONNS_MIN, SUP_CONNS_HEADROOM,
                SUP_IDLE_S_DEFAULT, SUP_FRAME_S_DEFAULT);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || *s == 0 || *end || *s == '-' || v > max)
                return -1;
        *out = v;
        return 0;
}

enum {
        O_LISTEN,
        O_STATE_DIR,
        O_ALLOW_UID,
        O_MAX_RUNS,
        O_KEEP_RUNS,
        O_MAX_INPUT_BYTES,
        O_UID_BASE,
        O_RUNNER,
        O_SPARES,
        O_WARM,
        O_WARM_MIN_AVAILABLE_MB,
        O_SOCKET_GROUP,
        O_CGROUP,
        O_CPU_QUOTA,
        O_KERNEL_AUDIT,
        O_ENABLE_KERNEL_AUDIT,
        O_MAX_CONNS, /* the seven bounds, in the order of bound[] below */
        O_MAX_CONNS_PER_UID,
        O_MAX_INFLIGHT_PER_UID,
        O_IDLE_TIMEOUT,
        O_FRAME_TIMEOUT,
        O_MAX_PARTIAL_BYTES,
        O_MAX_UNREAD_BYTES,
        O_LIMIT, /* [limits]: the key says which */
        O_TEST_NO_PYTHON_LAYERS,
        O_TEST_PROBE_BREAK,
        O_TEST_SKIP_SECCOMP,
        O_TEST_NO_EXIT_FLUSH,
        O_TEST_MACHINE_IDLE,
        O_TEST_NO_USERNS,
        O_TEST_SKIP_LANDLOCK,
        O_TEST_NO_PDEATHSIG,
        O_TEST_NO_SYNC_WATCH,
        O_TEST_NO_SIGNAL_RESET,
        O_TEST_CHILD_ALLOC,
        O_TEST_KAUDIT_GET_FAILS,
        O_TEST_CHILD_FAIL_BEFORE_GO,
        O_TEST_COPY_STEP_MS,
        O_TEST_NO_CAP_DROP,
        O_TEST_CAP_WITHHOLD,
        O_HELP,
        O_VERSION,
};

#define S(opt, key, id, flags) { opt, "supervisor", key, id, flags }
#define LIM(key) { NULL, "limits", key, O_LIMIT, CFG_ARG }, { NULL, "limits", key "_max", O_LIMIT, CFG_ARG }
#define CMD(opt, id, flags) { opt, NULL, NULL, id, flags }
static const struct cfg_opt opts[] = {
        S("listen", "listen", O_LISTEN, CFG_ARG),
        S("state-dir", "state_dir", O_STATE_DIR, CFG_ARG),
        S("allow-uid", "allow_uid", O_ALLOW_UID, CFG_ARG | CFG_REPEATABLE),
        S("max-runs", "max_runs", O_MAX_RUNS, CFG_ARG),
        S("keep-runs", "keep_runs", O_KEEP_RUNS, CFG_ARG),
        S("max-input-bytes", "max_input_bytes", O_MAX_INPUT_BYTES, CFG_ARG),
        S("uid-base", "uid_base", O_UID_BASE, CFG_ARG),
        S("runner", "runner", O_RUNNER, CFG_ARG),
        S("spares", "spares", O_SPARES, CFG_ARG),
        S("warm", "warm", O_WARM, CFG_ARG),
        S("warm-min-available-mb", "warm_min_available_mb", O_WARM_MIN_AVAILABLE_MB, CFG_ARG),
        S("socket-group", "socket_group", O_SOCKET_GROUP, CFG_ARG),
        S("cgroup", "cgroup", O_CGROUP, CFG_ARG),
        S("cpu-quota", "cpu_quota", O_CPU_QUOTA, CFG_ARG),
        S("kernel-audit", "kernel_audit", O_KERNEL_AUDIT, CFG_ARG),
        S("max-conns", "max_conns", O_MAX_CONNS, CFG_ARG),
        S("max-conns-per-uid", "max_conns_per_uid", O_MAX_CONNS_PER_UID, CFG_ARG),
        S("max-inflight-per-uid", "max_inflight_per_uid", O_MAX_INFLIGHT_PER_UID, CFG_ARG),
        S("idle-timeout", "idle_timeout", O_IDLE_TIMEOUT, CFG_ARG),
        S("frame-timeout", "frame_timeout", O_FRAME_TIMEOUT, CFG_ARG),
        S("max-partial-bytes", "max_partial_bytes", O_MAX_PARTIAL_BYTES, CFG_ARG),
        S("max-unread-bytes", "max_unread_bytes", O_MAX_UNREAD_BYTES, CFG_ARG),
        LIM("wall_s"),
        LIM("cpu_s"),
        LIM("memory_mb"),
        LIM("output_bytes"),
        LIM("files_bytes"),
        LIM("pids"),
        CMD("enable-kernel-audit", O_ENABLE_KERNEL_AUDIT, 0),
        CMD("test-no-python-layers", O_TEST_NO_PYTHON_LAYERS, 0),
        CMD("test-probe-break", O_TEST_PROBE_BREAK, CFG_ARG),
        CMD("test-skip-seccomp", O_TEST_SKIP_SECCOMP, 0),
        CMD("test-no-exit-flush", O_TEST_NO_EXIT_FLUSH, 0),
        CMD("test-machine-idle", O_TEST_MACHINE_IDLE, 0),
        CMD("test-no-userns", O_TEST_NO_USERNS, 0),
        CMD("test-skip-landlock", O_TEST_SKIP_LANDLOCK, 0),
        CMD("test-no-pdeathsig", O_TEST_NO_PDEATHSIG, 0),
        CMD("test-no-sync-watch", O_TEST_NO_SYNC_WATCH, 0),
        CMD("test-no-signal-reset", O_TEST_NO_SIGNAL_RESET, 0),
        CMD("test-child-alloc", O_TEST_CHILD_ALLOC, 0),
        CMD("test-kaudit-get-fails", O_TEST_KAUDIT_GET_FAILS, 0),
        CMD("test-child-fail-before-go", O_TEST_CHILD_FAIL_BEFORE_GO, 0),
        CMD("test-copy-step-ms", O_TEST_COPY_STEP_MS, CFG_ARG),
        CMD("test-no-cap-drop", O_TEST_NO_CAP_DROP, 0),
        CMD("test-cap-withhold", O_TEST_CAP_WITHHOLD, CFG_ARG | CFG_REPEATABLE),
        CMD("help", O_HELP, 0),
        CMD("version", O_VERSION, 0),
};
#undef S
#undef LIM
#undef CMD

static const char *const own_sections[] = { "supervisor", "limits", NULL };

struct ctx {
        struct sup_config *cfg;
        unsigned long max_pct; /* --cpu-quota's maximum: all the CPUs there are */
        long ncpu;
        unsigned limit_line[POL_LIMITS_N][2]; /* [limits]: the line of each default and maximum */
};

/* The bounds on clients (supervisor.h): 0 until given, each within its range. */
static int apply_bound(const struct cfg_src *w, struct sup_bounds *b, struct anvil_err *err)
{
        static const struct {
                unsigned long min, max;
                const char *unit;
        } bound[] = {
                [O_MAX_CONNS - O_MAX_CONNS] = { 1, 65536, "" },
                [O_MAX_CONNS_PER_UID - O_MAX_CONNS] = { 1, 65536, "" },
                [O_MAX_INFLIGHT_PER_UID - O_MAX_CONNS] = { 1, SUP_MAX_RUNS, "" },
                [O_IDLE_TIMEOUT - O_MAX_CONNS] = { 1, 86400, " seconds" },
                [O_FRAME_TIMEOUT - O_MAX_CONNS] = { 1, 86400, " seconds" },
                [O_MAX_PARTIAL_BYTES - O_MAX_CONNS] = { 65536, 0xFFFFFFFFul, " bytes" },
                [O_MAX_UNREAD_BYTES - O_MAX_CONNS] = { 65536, 0xFFFFFFFFul, " bytes" },
        };
        int c = w->opt->id - O_MAX_CONNS;
        unsigned long v;
        if (parse_uint(w->value, bound[c].max, &v) < 0 || v < bound[c].min)
                return cfg_bad(w, err, "expected %lu..%lu%s", bound[c].min, bound[c].max, bound[c].unit);
        switch (w->opt->id) {
        case O_MAX_CONNS:
                b->max_conns = (unsigned)v;
                break;
        case O_MAX_CONNS_PER_UID:
                b->max_conns_per_uid = (unsigned)v;
                break;
        case O_MAX_INFLIGHT_PER_UID:
                b->max_inflight_per_uid = (unsigned)v;
                break;
        case O_IDLE_TIMEOUT:
                b->stream.idle_s = (unsigned)v;
                break;
        case O_FRAME_TIMEOUT:
                b->stream.frame_s = (unsigned)v;
                break;
        case O_MAX_PARTIAL_BYTES:
                b->max_partial = v;
                break;
        case O_MAX_UNREAD_BYTES:
                b->max_unread = v;
                break;
        }
        return 0;
}

/* [limits]: a limit's default or maximum, within the compiled range (policy/limits.h). */
static int apply_limit(struct ctx *x, const struct cfg_src *w, struct anvil_err *err)
{
        unsigned f;
        bool is_max;
        if (pol_limit_key(w->opt->key, &f, &is_max) < 0)
                return cfg_bad(w, err, "unknown key in [limits]");
        char *end;
        errno = 0;
        unsigned long long v = strtoull(w->value, &end, 10);
        if (*w->value < '0' || *w->value > '9' || *end || errno)
                v = ULLONG_MAX; /* not a number: refused as out of range, with the range */
        struct anvil_err e = ANVIL_ERR_INIT;
        if (pol_limits_table_set(&x->cfg->limits, f, is_max, v, &e) < 0)
                return cfg_bad(w, err, "%s", e.msg);
        x->limit_line[f][is_max] = w->line;
        return 0;
}

/* Test builds' own options (make check builds build/test): never in a build users run. */
static int apply_test(struct sup_config *cfg, const struct cfg_src *w, struct anvil_err *err)
{
#ifdef ANVIL_TEST_BUILD
        switch (w->opt->id) {
        case O_TEST_NO_PYTHON_LAYERS:
                /* Only to show the kernel layers hold alone (issue 4). */
                cfg->test_no_python_layers = true;
                break;
        case O_TEST_PROBE_BREAK:
                /* The probe's own test: its jail leaves this layer out, and the probe must see
                 * it missing and lower the tier. */
                if (strcmp(w->value, "seccomp") != 0 && strcmp(w->value, "landlock") != 0)
                        return cfg_bad(w, err, "expected seccomp or landlock");
                cfg->test_probe_break = w->value;
                break;
        case O_TEST_NO_USERNS:
                /* As if no user namespace could be made here: jails go down the ladder to
                 * landlock+seccomp, to test that rung on this machine. */
                cfg->test_no_userns = true;
                break;
        case O_TEST_SKIP_SECCOMP:
                /* Only to show Landlock holds alone where seccomp would refuse first (a TCP
                 * socket): runners load no filter, and none is expected. */
                cfg->test_skip_seccomp = true;
                break;
        case O_TEST_NO_EXIT_FLUSH:
                /* Only the control of the tests that a tool's files are complete at its end
                 * (t_exit_flush): runners _exit without joining, atexit or flushing. */
                cfg->test_no_exit_flush = true;
                break;
        case O_TEST_MACHINE_IDLE:
                /* Only for t_warm's refill policy on a shared machine: the warm pool counts
                 * no task runnable but its own runs (warm.c runnable_others). */
                cfg->test_machine_idle = true;
                break;
        case O_TEST_SKIP_LANDLOCK:
                /* Only to show the runner's own check refuses a run whose Landlock is missing
                 * (R6): jails apply none, and runners are told to expect it. */
                cfg->test_skip_landlock = true;
                break;
        case O_TEST_NO_PDEATHSIG:
        case O_TEST_NO_SYNC_WATCH:
                /* Each switches off one of the two means by which no jail outlives the
                 * supervisor (the theory of operation in main.c, below S12), so that a test
                 * shows the other holds alone, and, both off, that a jail would. */
                if (w->opt->id == O_TEST_NO_PDEATHSIG)
                        cfg->test_no_pdeathsig = true;
                else
                        cfg->test_no_sync_watch = true;
                break;
        case O_TEST_CHILD_ALLOC:
                /* Only to show the guard of a test build (jail/contain.c) catches an
                 * allocation in the jail's child before exec (t_child_no_alloc). */
                cfg->test_child_alloc = true;
                break;
        case O_TEST_KAUDIT_GET_FAILS:
                /* Only to show a failed AUDIT_GET at a run's drain is said (t_kaudit_get). */
                cfg->test_kaudit_get_fails = true;
                break;
        case O_TEST_CHILD_FAIL_BEFORE_GO:
                /* Only to show the child's own failure is reported (t_child_fail_go). */
                cfg->test_child_fail_before_go = true;
                break;
        case O_TEST_COPY_STEP_MS:
                /* Only to hold an input's copy in flight (16 MiB a step), for the tests of what
                 * happens meanwhile (t_input_fd: other runs served, a cancel). */
        {
                unsigned long ms;
                if (parse_uint(w->value, 10000, &ms) < 0 || ms == 0)
                        return cfg_bad(w, err, "expected milliseconds, 1 to 10000");
                cfg->test_copy_step_ms = (unsigned)ms;
                break;
        }
        case O_TEST_NO_SIGNAL_RESET:
                /* Only to show what children would inherit without lib/proc.c's reset
                 * (t_signals): the jail's child, pid 1's runner and the builder's children
                 * execute with the signal state they were forked with. */
                cfg->test_no_signal_reset = true;
                break;
        case O_TEST_NO_CAP_DROP:
                /* Only to show the drop after start-up is what narrows the capabilities
                 * (t_sup_caps): every capability is kept, no_new_privs is not set. */
                cfg->test_no_cap_drop = true;
                break;
        case O_TEST_CAP_WITHHOLD:
                /* Only to show a kept capability is needed: dropped after start-up too, the
                 * step that needs it fails (t_sup_caps). */
                if (sup_privilege_withhold(cfg, w->value) < 0)
                        return cfg_bad(w, err, "expected a capability's name (cap_kill), at most 8");
                break;
        }
        return 0;
#else
        (void)cfg;
        return cfg_bad(w, err, "refused: this is not a test build");
#endif
}

static int apply(void *data, const struct cfg_src *w, struct anvil_err *err)
{
        struct ctx *x = data;
        struct sup_config *cfg = x->cfg;
        const char *s = w->value;
        unsigned long v;
        switch (w->opt->id) {
        case O_LISTEN:
                cfg->listen_path = s;
                break;
        case O_STATE_DIR:
                cfg->state_dir = s;
                break;
        case O_ALLOW_UID: {
                if (w->first) /* the command line's list replaces the file's */
                        cfg->n_allow = 0;
                struct anvil_err e = ANVIL_ERR_INIT;
                uid_t uid;
                if (parse_user(s, &uid, &e) < 0)
                        return cfg_bad(w, err, "%s", e.msg);
                if (cfg->n_allow >= SUP_MAX_ALLOW)
                        return cfg_bad(w, err, "more than %d uids", SUP_MAX_ALLOW);
                cfg->allow_uids[cfg->n_allow++] = uid;
                break;
        }
        case O_MAX_RUNS:
                if (parse_uint(s, SUP_MAX_RUNS, &v) < 0 || v == 0)
                        return cfg_bad(w, err, "expected 1..%d", SUP_MAX_RUNS);
                cfg->max_runs = (unsigned)v;
                break;
        case O_KEEP_RUNS:
                /* At least one: the run just finished names its artifacts. */
                if (parse_uint(s, 1000000, &v) < 0 || v == 0)
                        return cfg_bad(w, err, "expected 1..1000000");
                cfg->keep_runs = (unsigned)v;
                break;
        case O_MAX_INPUT_BYTES:
                if (parse_uint(s, ULONG_MAX, &v) < 0 || v == 0)
                        return cfg_bad(w, err, "expected bytes, 1 or more");
                cfg->max_input_bytes = (uint64_t)v;
                break;
        case O_UID_BASE:
                if (parse_uint(s, 0xFFFFFFFEul - SUP_MAX_RUNS - 1, &v) < 0 || v < 65536)
                        return cfg_bad(w, err, "expected a uid of 65536 or more");
                cfg->uid_base = (uid_t)v;
                break;
        case O_SOCKET_GROUP: {
                struct anvil_err e = ANVIL_ERR_INIT;
                if (parse_group(s, &cfg->socket_group, &e) < 0)
                        return cfg_bad(w, err, "%s", e.msg);
                break;
        }
        case O_KERNEL_AUDIT:
                if (strcmp(s, "on") != 0 && strcmp(s, "off") != 0)
                        return cfg_bad(w, err, "expected on or off");
                cfg->enable_kernel_audit = strcmp(s, "on") == 0;
                break;
        case O_ENABLE_KERNEL_AUDIT:
                cfg->enable_kernel_audit = true;
                break;
        case O_CGROUP:
                if (strcmp(s, "auto") != 0 && strcmp(s, "none") != 0 && strcmp(s, "delegated") != 0)
                        return cfg_bad(w, err, "expected auto, delegated or none");
                cfg->no_cgroup = strcmp(s, "none") == 0;
                cfg->cgroup_delegated = strcmp(s, "delegated") == 0;
                break;
        case O_CPU_QUOTA:
                if (strcmp(s, "none") == 0)
                        v = 0;
                else if (parse_uint(s, x->max_pct, &v) < 0 || v == 0)
                        return cfg_bad(w, err,
                                       "'%s': expected a percentage of one CPU from 1 to %lu (this machine has %ld "
                                       "CPUs), or none",
                                       s, x->max_pct, x->ncpu > 0 ? x->ncpu : 1);
                cfg->cpu_quota_pct = (unsigned)v;
                cfg->cpu_quota_given = true;
                break;
        case O_SPARES:
                if (parse_uint(s, SUP_MAX_SPARES, &v) < 0)
                        return cfg_bad(w, err, "expected 0..%d", SUP_MAX_SPARES);
                cfg->spares = (unsigned)v;
                break;
        case O_WARM:
                if (parse_uint(s, SUP_MAX_WARM, &v) < 0)
                        return cfg_bad(w, err, "expected 0..%d", SUP_MAX_WARM);
                cfg->warm = (unsigned)v;
                break;
        case O_WARM_MIN_AVAILABLE_MB:
                if (parse_uint(s, 1u << 30, &v) < 0)
                        return cfg_bad(w, err, "expected MB, 0..%u", 1u << 30);
                cfg->warm_min_available_mb = (uint64_t)v;
                break;
        case O_RUNNER:
                if (!realpath(s, cfg->runner_path))
                        return cfg_bad_with_value(w, err, "%s", strerror(errno));
                break;
        case O_MAX_CONNS:
        case O_MAX_CONNS_PER_UID:
        case O_MAX_INFLIGHT_PER_UID:
        case O_IDLE_TIMEOUT:
        case O_FRAME_TIMEOUT:
        case O_MAX_PARTIAL_BYTES:
        case O_MAX_UNREAD_BYTES:
                return apply_bound(w, &cfg->bounds, err);
        case O_LIMIT:
                return apply_limit(x, w, err);
        default:
                return apply_test(cfg, w, err);
        }
        return 0;
}

/* The defaults that follow from --max-runs, and the rule that the broker must be able to
 * fill every run slot (one connection each) and still ask for a probe. */
static int bounds_resolve(struct sup_config *cfg)
{
        struct sup_bounds *b = &cfg->bounds;
        size_t in_transit = (size_t)(cfg->max_runs + 1) * (PROTO_FRAME_MAX + 4);
        if (!b->max_conns_per_uid)
                b->max_conns_per_uid = cfg->max_runs + SUP_CONNS_HEADROOM;
        if (!b->max_conns)
                b->max_conns = 2 * b->max_conns_per_uid > SUP_MAX_CONNS_MIN ? 2 * b->max_conns_per_uid
                                                                            : SUP_MAX_CONNS_MIN;
        if (!b->max_inflight_per_uid)
                b->max_inflight_per_uid = cfg->max_runs;
        if (!b->max_partial)
                b->max_partial = in_transit;
        if (!b->max_unread)
                b->max_unread = in_transit;
        if (b->max_conns_per_uid < cfg->max_runs + 1) {
                fprintf(stderr,
                        "anvil-supervisor: --max-conns-per-uid %u: at least --max-runs + 1 (%u): the broker carries "
                        "each run on a connection of its own, and a probe on another\n",
                        b->max_conns_per_uid, cfg->max_runs + 1);
                return -1;
        }
        if (b->max_conns_per_uid > b->max_conns) {
                fprintf(stderr, "anvil-supervisor: --max-conns-per-uid %u is over --max-conns %u\n", b->max_conns_per_uid,
                        b->max_conns);
                return -1;
        }
        return 0;
}

/* Each limit's default at most its maximum, once the whole file is read: the message names
 * both keys, at the later of their lines, and the other's line (or that it is the compiled
 * default, when only the maximum was lowered). */
static int limits_check(struct ctx *x, const char *path)
{
        unsigned f;
        struct anvil_err e = ANVIL_ERR_INIT;
        if (pol_limits_table_check(&x->cfg->limits, &f, &e) == 0)
                return 0;
        unsigned ld = x->limit_line[f][0], lm = x->limit_line[f][1];
        char other[96];
        if (!ld)
                snprintf(other, sizeof(other), " (%s is the compiled default: set it too)", pol_limit_name(f));
        else
                snprintf(other, sizeof(other), " (%s%s on line %u)", pol_limit_name(f), ld > lm ? "_max" : "",
                         ld > lm ? lm : ld);
        fprintf(stderr, "anvil-supervisor: %s:%u: %s%s\n", path, ld > lm ? ld : lm, e.msg, other);
        return -1;
}

int sup_parse_args(int argc, char **argv, struct sup_config *cfg)
{
        cfg->max_runs = 32;
        cfg->keep_runs = 200;
        cfg->max_input_bytes = SUP_MAX_INPUT_BYTES_DEFAULT;
        cfg->spares = 2;
        cfg->warm_min_available_mb = 1024;
        cfg->socket_group = (gid_t)-1;
        cfg->uid_base = UID_BASE_DEFAULT;
        cfg->cpu_quota_pct = 100;
        cfg->bounds.stream = (struct proto_bounds){ .daemon = "supervisor", .idle_s = SUP_IDLE_S_DEFAULT,
                                                    .frame_s = SUP_FRAME_S_DEFAULT };
        pol_limits_table_init(&cfg->limits);
        /* A quota above all the CPUs there are would limit nothing. */
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        struct ctx x = { .cfg = cfg, .ncpu = ncpu,
                         .max_pct = 100ul * (unsigned long)(ncpu > 0 ? (ncpu < 4096 ? ncpu : 4096) : 1) };
        struct cfg_daemon d = { .sections = own_sections, .opts = opts, .n_opts = ELEMENTSOF(opts), .apply = apply,
                                .ctx = &x, .getopt_messages = true };
        struct cfg_result res;
        struct anvil_err err = ANVIL_ERR_INIT;
        int r = cfg_args(&d, argc, argv, &res, &err);
        if (res.help) {
                usage(stdout);
                exit(0);
        }
        if (res.version) {
                printf("anvil-supervisor " ANVIL_VERSION "\n");
                exit(0);
        }
        if (r < 0 && res.bad_usage) {
                if (err.msg[0])
                        fprintf(stderr, "anvil-supervisor: %s\n", err.msg);
                usage(stderr);
                return -1;
        }
        if (r < 0) {
                fprintf(stderr, "anvil-supervisor: %s\n", err.msg);
                return -1;
        }
        cfg->config_path = res.path;
        if (res.path && limits_check(&x, res.path) < 0)
                return -1;
        if (!cfg->listen_path || !cfg->state_dir) {
                usage(stderr);
                return -1;
        }
        if (bounds_resolve(cfg) < 0)
                return -1;
        if (cfg->no_cgroup && cfg->cpu_quota_given && cfg->cpu_quota_pct) {
                fprintf(stderr, "anvil-supervisor: --cpu-quota needs a cgroup, and --cgroup none was given\n");
                return -1;
        }
        return 0;
}
