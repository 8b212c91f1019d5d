/* supervisor/: anvil-supervisor, the root daemon (started by systemd, never setuid; after
 * start-up a named capability set under no_new_privs, privilege.c). Only what needs root is
 * here: jails built, verified, timed and killed, seccomp notifications answered, Landlock's
 * audit records read, cgroups and each run's directory and tmpfs. Its clients are the broker
 * and root (SO_PEERCRED); it links no Python, no libcurl, no JSON and no prose (the broker
 * writes that from the facts it sends). scripts/root-loc.sh counts its lines. */
/* anvil-supervisor's shared state. See main.c for the theory of operation. */
#pragma once

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "jail/cgroup.h"
#include "jail/jail.h"
#include "policy/limits.h"
#include "policy/reasons.h"
#include "proto/stream.h"

#define SUP_MAX_ALLOW 32
#define SUP_MAX_RUNS 256 /* concurrent runs */
#define SUP_MAX_SPARES 8
#define SUP_MAX_WARM 8
#define SUP_MAX_SLOTS (SUP_MAX_RUNS + SUP_MAX_SPARES + SUP_MAX_WARM)

/* The bounds on clients (server.c; docs/operations.md "Bounds on clients"), defaults of their flags. The
 * supervisor's clients are the broker, which carries every run on a connection of its own,
 * and root. A uid's cap on connections must leave the broker every run slot and a probe
 * beside them: at least --max-runs + 1, by default --max-runs + SUP_CONNS_HEADROOM. The one
 * global bound, --max-conns, is global because each connection costs this one process an fd
 * and buffers whoever holds it; it defaults to twice the per-uid cap (and at least
 * SUP_MAX_CONNS_MIN), so that root (an operator's probe) finds room while the broker is at
 * its cap. The bytes per uid default to every run slot's request (or result) in transit at
 * once, as the broker's uid carries all of them. */
#define SUP_CONNS_HEADROOM 16
#define SUP_MAX_CONNS_MIN 512
#define SUP_IDLE_S_DEFAULT 300
#define SUP_FRAME_S_DEFAULT 60

struct sup_bounds {
        unsigned max_conns;            /* --max-conns, all uids */
        unsigned max_conns_per_uid;    /* --max-conns-per-uid */
        unsigned max_inflight_per_uid; /* --max-inflight-per-uid: runs (default --max-runs) */
        size_t max_partial;            /* --max-partial-bytes, per uid */
        size_t max_unread;             /* --max-unread-bytes, per uid */
        struct proto_bounds stream;    /* --idle-timeout, --frame-timeout */
};

#define SUP_MAX_INPUT_BYTES_DEFAULT (8ull << 30)

struct sup_config {
        const char *config_path; /* the file read (--config, or the default one); NULL: none */
        const char *listen_path;
        const char *state_dir;
        uid_t allow_uids[SUP_MAX_ALLOW];
        unsigned n_allow;
        gid_t socket_group; /* the socket's group (the broker's); -1: root's */
        bool no_cgroup;     /* --cgroup none */
        bool cgroup_delegated; /* --cgroup delegated: our own v2 cgroup is ours (cgroup-setup.c) */
        unsigned cpu_quota_pct; /* --cpu-quota: percent of one CPU per run, 0: none */
        bool cpu_quota_given;
        bool test_no_python_layers; /* test builds only (ANVIL_TEST_BUILD) */
        const char *test_probe_break; /* test builds only: a layer the probe's jail leaves out */
        bool test_skip_seccomp;       /* test builds only: runs load no seccomp filter */
        bool test_no_exit_flush;      /* test builds only: runners end without the flush */
        bool test_machine_idle;       /* test builds only: the warm pool sees no other load */
        bool test_no_userns;          /* test builds only: as if no user namespace could be made */
        bool test_skip_landlock;    /* test builds only: jails apply no Landlock (kaudit.c) */
        bool test_no_pdeathsig;     /* test builds only: jails set no parent-death signal */
        bool test_no_sync_watch;    /* test builds only: pid 1 does not watch its sync socket */
        unsigned test_copy_step_ms; /* test builds only: a pause before each step of an input's copy */
        bool test_child_alloc;      /* test builds only: the jail's child allocates, for its guard's control */
        bool test_kaudit_get_fails; /* test builds only: AUDIT_GET at a run's drain fails (kaudit.c) */
        bool test_child_fail_before_go; /* test builds only: the jail's child fails before GO */
        bool test_no_signal_reset;  /* test builds only: children execute with our signal state */
        bool test_no_cap_drop;      /* test builds only: every capability kept after start-up */
        int test_cap_withhold[8];   /* test builds only: dropped too, to show each kept one is needed */
        unsigned test_cap_withhold_n;
        bool enable_kernel_audit;   /* --enable-kernel-audit: switch the kernel's audit on */
        uid_t uid_base;     /* runs get uid_base + 1 + slot; uid_base itself builds the font cache */
        bool rootless;      /* not root (detected): every jail maps to our own uid, no cgroup
                               unless delegated, the jail makes its own artifacts tmpfs */
        bool direct;        /* no user namespace can be made (detected, or a test build's
                               --test-no-userns): jails on the host's paths, held by Landlock
                               and seccomp alone (struct jail_static) */
        unsigned max_runs;  /* concurrent */
        unsigned keep_runs; /* run directories kept */
        uint64_t max_input_bytes; /* --max-input-bytes: a run's input files passed as fds, in all */
        unsigned spares;    /* jail children cloned ahead of time */
        unsigned warm;      /* warm jails: built and imported ahead, waiting for a run (warm.c) */
        uint64_t warm_min_available_mb; /* below this MemAvailable, the warm pool shrinks */
        char runner_path[PATH_MAX];
        struct sup_bounds bounds;
        struct pol_limits_table limits; /* [limits]: each run limit's default and maximum */
};

/* options.c: the settings from the configuration file and the command line, checked; on
 * an error, says it on stderr and returns -1. --help prints the usage and exits. */
int sup_parse_args(int argc, char **argv, struct sup_config *cfg);

struct sup_run;
struct sup_client;
struct sup_server;
struct sup_kaudit;

/* The namespaces whose teardown costs the most (the mount namespace waits for an RCU grace
 * period, the network namespace's cleanup takes milliseconds of CPU): the supervisor holds
 * them so that they go after the run's result is out, not in the jail's exit. */
#define SUP_HELD_NS 4

/* A jail child from its clone (C1) until its run ends: its own host uid, its cgroup, the
 * sync socket, a pidfd, and the hold on its namespaces. */
struct sup_jailproc {
        int slot; /* -1: none */
        uid_t uid;
        pid_t pid;
        int pidfd, sync_fd;
        int ns_fds[SUP_HELD_NS];
        struct jail_cgroup cg;
};

/* A spare: a jail child cloned and moved into its cgroup ahead of time, waiting at C5. */
struct sup_spare {
        struct sup_server *srv;
        struct sup_jailproc jp;
        enum { SPARE_EMPTY, SPARE_ATTACHING, SPARE_READY } state;
        uv_work_t work;
        int attach_r;
        struct anvil_err attach_err;
};

struct sup_server {
        uv_loop_t *loop;
        struct sup_config cfg;
        uv_pipe_t listener;
        uv_signal_t sigterm, sigint;
        int init_exe_fd; /* anvil-init, each jail's pid 1 (executed through this fd) */
        int self_pidfd;  /* our own pidfd, for the jail children (struct jail_static) */
        struct jail_static jail; /* what every jail child is cloned with */
        uint64_t jail_seq;       /* names the children's cgroups */
        char runs_dir[PATH_MAX];
        char jail_root[PATH_MAX];
        char font_cache_dir[PATH_MAX]; /* "" if matplotlib's cache could not be built */
        char platform_processor[256];  /* `uname -p` as platform reports it */
        bool have_platform_processor;
        char platform_file[1024]; /* `file -b` of Debian's python3, verbatim; "" if no `file` */
        struct jail_cgroup_sys cg;
        bool slots[SUP_MAX_SLOTS];
        unsigned n_runs; /* runs admitted whose slot is not yet free again (run.c) */
        struct sup_spare spares[SUP_MAX_SPARES];
        uv_timer_t refill_timer;
        uv_timer_t warm_timer; /* warm.c: the warm pool's refill and memory watch */
        bool warm_short;       /* warm.c: memory was short at the last look (said once in the log) */
        unsigned n_clients;  /* every connection until its close callback, refused ones too */
        unsigned n_admitted; /* those admitted (counted against --max-conns) */
        struct sup_run *runs; /* every live run */
        struct sup_client *clients;
        struct proto_user *users; /* one per uid with a connection */
        struct sup_kaudit *kaudit; /* kaudit.c: Landlock's denials from the kernel's audit */
        bool stopping;
        struct sup_probe *probe; /* the last probe's result, and whoever waits for the next */
        char tier[64];           /* the last probe's tier */
        char no_userns[128];     /* why no user namespace can be made here; "" if one can */
};

struct sup_client {
        struct proto_stream stream;
        struct sup_server *srv;
        struct proto_user *user; /* NULL until its credentials are read */
        bool admitted;
        bool probe_waiting; /* a probe_request of it is not answered yet */
        uid_t uid;
        pid_t pid;
        struct sup_client *next, **pprev;
};

/* server.c */
int sup_server_listen(struct sup_server *srv, struct anvil_err *err);
void sup_client_send(struct sup_client *c, const struct proto_msg *m);
void sup_client_error(struct sup_client *c, const char *code, const char *message, const char *field,
                      const char *request_id);
/* Stopping: once the last run's result is out, every client connection is closed. */
void sup_server_stop_when_idle(struct sup_server *srv);

/* run.c */
/* Takes over the n_fds input fds that came with req. */
void sup_run_start(struct sup_client *c, struct proto_run_request *req, const int *fds, size_t n_fds);

/* A run of the supervisor's own: its result (or, res NULL, the sandbox's failure) goes to
 * done, not to a client. */
typedef void (*sup_run_done_fn)(struct sup_server *srv, const struct proto_run_result *res, const char *failure,
                                void *data);
struct sup_run_opts {
        bool python_layers_off; /* the probe tests the kernel layers alone */
        const char *test_break; /* test builds: a layer the runner leaves out (the probe's tests) */
        bool warm;              /* warm.c: a warm jail, built ahead for the next run that fits */
        sup_run_done_fn done;
        void *data;
};
int sup_run_internal(struct sup_server *srv, struct proto_run_request *req, const struct sup_run_opts *o,
                     struct anvil_err *err);
void sup_run_cancel(struct sup_client *c, const struct proto_cancel *cancel);
void sup_runs_client_gone(struct sup_server *srv, struct sup_client *c);
void sup_runs_kill_all(struct sup_server *srv);
bool sup_run_is_live(struct sup_server *srv, const char *run_id);

/* pool.c */
int sup_jailproc_spawn(struct sup_server *srv, struct sup_jailproc *jp, struct anvil_err *err);
/* Kills (if alive), reaps and frees a child that never ran a tool, synchronously. */
void sup_jailproc_discard(struct sup_server *srv, struct sup_jailproc *jp);
/* After a reaped child's run: its fds (on the loop), then its mount namespace and cgroup (on
 * the thread pool: both wait for an RCU grace period), then its slot (on the loop). */
void sup_jailproc_close(struct sup_jailproc *jp);
int sup_jailproc_teardown(struct sup_jailproc *jp, struct anvil_err *err);
void sup_jailproc_free_slot(struct sup_server *srv, struct sup_jailproc *jp);
int sup_jailproc_attach(struct sup_jailproc *jp, struct anvil_err *err); /* thread pool */
bool sup_pool_take(struct sup_server *srv, struct sup_jailproc *jp);
void sup_pool_start(struct sup_server *srv);
void sup_pool_stop(struct sup_server *srv);

/* warm.c */
void sup_warm_start(struct sup_server *srv);
void sup_warm_stop(struct sup_server *srv);
/* The pool's next look: a warm jail taken, or one ended. */
void sup_warm_kick(struct sup_server *srv);
/* False if a run of this request may take a warm jail; else true, and why not in msg. */
bool sup_warm_cold_reason(const struct sup_server *srv, const struct proto_run_request *req,
                          const struct proto_limits *lim, const int *fds, size_t n_fds, char *msg, size_t size);
/* A waiting warm jail, or NULL. */
struct sup_run *sup_warm_take(struct sup_server *srv);
/* At the take: the run's files, and its rlimits on the runner (rl updated to what was set). */
int sup_warm_place(const struct sup_run *run, const struct proto_run_request *req, const int *fds,
                   struct anvil_err *err);
int sup_warm_rlimits(struct sup_run *run, struct jail_rlimits *rl, struct anvil_err *err);

/* rundir.c: run directories under state/runs/<run_id> */
int sup_rundir_direct(const char *dir, uid_t uid, gid_t gid, const char *font_cache, char *jail_dir, size_t size,
                      int *art_fd, struct anvil_err *err);
/* The inputs to copy from their fds (sup_rundir_create lists them, sup_rundir_copy copies
 * them on the thread pool; cancel is read between steps of the copy). */
struct sup_copy {
        int fd; /* the client's, closed with the run's other input fds */
        uint64_t size;
        char name[PROTO_NAME_MAX + 1];
};
struct sup_copies {
        uv_work_t work;
        int ifd; /* the run's inputs/ */
        size_t n;
        struct sup_copy items[PROTO_INPUTS_MAX];
        atomic_bool cancel;
        unsigned step_ms; /* --test-copy-step-ms */
        int r;
        struct anvil_err err;
};
/* The run's directory and files: its inputs given as bytes written, those passed as fds
 * (fds[i] is the fd of the request's fd index i) exposed without opening any path: a tree
 * cloned from the fd for the jail to mount (in *ji and trees, as root) or a copy read from
 * the fd (rootless, direct, or a file the jail's uid could not read), listed in *cp to be
 * made by sup_rundir_copy (cp->n 0: none; then inputs/ is complete). */
int sup_rundir_create(struct sup_server *srv, const char *run_id, const struct proto_run_request *req,
                      const int *fds, struct jail_inputs *ji, int *trees, struct sup_copies *cp, char *dir,
                      size_t size, struct anvil_err *err);
void sup_rundir_copy(struct sup_copies *cp);
int sup_rundir_artifacts_mount(uid_t uid, uint64_t files_bytes, int *mount_fd, struct anvil_err *err);
/* Copies the regular files of the artifacts tmpfs (mount_fd) into dir/artifacts, hashing as
 * it goes. Runs on the thread pool: touches nothing but its arguments. */
int sup_rundir_collect(const char *dir, int mount_fd, uint64_t files_bytes, struct proto_array *artifacts,
                       struct proto_array *notes, struct anvil_err *err);
void sup_rundir_prune(struct sup_server *srv);
/* A run in flight: _begin marks it (before its directory exists), _end unmarks it once its
 * result is out, and removes its directory unless keep (a run that never started its tool).
 * _sweep, at start-up: the directories of runs still marked, which a previous supervisor
 * never finished (it was killed, or crashed), are removed; *removed says how many. */
int sup_rundir_begin(struct sup_server *srv, const char *run_id, struct anvil_err *err);
int sup_rundir_end(struct sup_server *srv, const char *run_id, bool keep, struct anvil_err *err);
int sup_rundir_sweep(struct sup_server *srv, unsigned *removed, struct anvil_err *err);

/* prewarm.c */
int sup_fontcache_build(struct sup_server *srv, struct anvil_err *err);

/* privilege.c: the capabilities kept after start-up, and why. */
void sup_privilege_describe(const struct sup_server *srv);
int sup_privilege_drop(struct sup_server *srv, struct anvil_err *err);
int sup_privilege_withhold(struct sup_config *cfg, const char *name); /* test builds */
int sup_prewarm_platform(struct sup_server *srv, struct anvil_err *err);
/* Runs path as the builder uid (uid_base, no run's) with env, stdout to out_fd (-1:
 * /dev/null), and waits; _output collects up to size - 1 bytes of its stdout. */
int sup_builder_run(struct sup_server *srv, const char *path, char *const argv[], char *const env[], int out_fd,
                    int *status, struct anvil_err *err);
int sup_builder_output(struct sup_server *srv, const char *path, char *const argv[], char *const env[], char *buf,
                       size_t size, int *status, struct anvil_err *err);

/* The uid that builds the font cache and runs the probe's control: uid_base as root, our own
 * when rootless. */
uid_t sup_builder_uid(const struct sup_server *srv);
gid_t sup_builder_gid(const struct sup_server *srv);

/* probe.c: the isolation probe (DESIGN §6). At start-up (then done(srv) is called once) and
 * on demand (a client's probe_request gets the probe_result). */
struct sup_probe;
int sup_probe_startup(struct sup_server *srv, void (*done)(struct sup_server *srv));
void sup_probe_request(struct sup_client *c, const char *request_id);
void sup_probe_client_gone(struct sup_server *srv, struct sup_client *c);
/* The tier a run ran under, from what was verified for it. */
const char *sup_tier(bool namespaces, bool seccomp, bool landlock);

/* kaudit.c: Landlock in the supervisor. _start: audit switched on if asked, the multicast
 * group joined if it can be (never fatal: it says what it could not do); before any jail is
 * cloned. _stop: waiting runs go on; _free after the loop has ended. _jail_report: the
 * child's LANDLOCK record (C10). _verified (S4): Landlock in force as expected, or the run is
 * refused. _drained (before S10): false while the run's records are still on their way; the
 * run is then finished by sup_run_maybe_finish() once they are in. */
int sup_kaudit_start(struct sup_server *srv, bool enable, struct anvil_err *err);
void sup_kaudit_stop(struct sup_server *srv);
/* KAUDIT_NOT_EXPLAINED (why, and what would explain them) in buf, or NULL if they are. */
const char *sup_kaudit_unexplained(struct sup_server *srv, char *buf, size_t size);
void sup_kaudit_free(struct sup_server *srv);
void sup_kaudit_jail_report(struct sup_run *run, const struct jail_msg *m);
int sup_kaudit_verified(struct sup_run *run, struct anvil_err *err);
bool sup_kaudit_drained(struct sup_run *run);

/* The jail's environment: the whole of it, fixed (docs/operations.md "The jail's environment" lists it). */
extern char *const sup_jail_env[];
