/* A run, shared between run.c (its life) and result.c (its RunResult). */
#pragma once

#include "supervisor/kaudit.h"
#include "supervisor/supervisor.h"

#define MB (1024.0 * 1024.0)
/* The last places of a result's events, before the very last (the summary of those not
 * recorded): the supervisor's notes at a run's end (a kill, cut output, forks refused, the
 * artifacts' bounds: sup_result_build, sup_rundir_collect), which nothing during the run may
 * take. At most: 1 + 2 + 1 + 22 (sup_rundir_collect: 16 one by one, 6 of the whole). */
#define SUP_RESULT_NOTES 32

struct capture {
        char *buf;
        size_t len;
        size_t sent; /* of buf, streamed to the client (run_request.stream_output) */
        uint64_t total;
        uint64_t cap;
};

/* A run's life: how far its jail child has come (run.c opens with the diagram). Forward only,
 * one step at a time (run_to); what arrives out of order is refused by the caller's check of
 * the state it needs, never by skipping one. */
enum sup_run_state {
        SUP_RUN_NEW,       /* no child is the run's */
        SUP_RUN_CLONED,    /* a jail child is the run's (S0): from here it goes by kill and the normal end */
        SUP_RUN_WATCHING,  /* its pipes, pidfd and sync socket watched, GO sent to the child: its end is awaited */
        SUP_RUN_VERIFIED,  /* pid 1 READY in its cgroup, verified from outside (S4), GO sent to it */
        SUP_RUN_EXECUTING, /* pid 1 said the runner exec'd (EXEC_OK) */
        SUP_RUN_EXITED,    /* pid 1 reported the runner's end (EXIT): its status is the run's */
};
/* How the run ends, beside its life: the first verdict wins (a kill's consequences are the
 * kill's), and the end goes live -> finishing (S10, collecting) -> reported (S11). */
enum sup_run_verdict { SUP_RUN_NO_VERDICT, SUP_RUN_KILLED, SUP_RUN_FAILED };
enum sup_run_end { SUP_RUN_LIVE, SUP_RUN_FINISHING, SUP_RUN_REPORTED };

/* A warm jail (warm.c): built under the default shape, waiting, then one run's. */
enum sup_warm_state { SUP_WARM_NONE, SUP_WARM_BUILDING, SUP_WARM_WAITING, SUP_WARM_TAKEN };

struct sup_run {
        struct sup_server *srv;
        enum sup_warm_state warm;
        bool counted;     /* holds a place among --max-runs (a warm jail: once taken) */
        unsigned spec_writes; /* run specs being written: a warm jail's runner takes two */
        struct sup_run_opts opts; /* a run of the supervisor's own (the probe) */
        struct sup_client *client; /* NULL once the client is gone */
        struct sup_run *next, **pprev;
        char id[64];
        char *request_id;
        char dir[PATH_MAX - 32]; /* room for "/artifacts.collected" below it */
        char jail_dir[PATH_MAX]; /* direct: <dir>/jail, the tool's cwd on the host */
        struct sup_jailproc jp;
        int art_fd; /* the artifacts tmpfs, a detached mount (rundir.c) */
        int in_fds[PROTO_INPUTS_MAX]; /* the client's input fds (S1), closed once the run's files exist */
        size_t n_in_fds;
        bool fd_inputs; /* some came as fds: inputs/ is removed at the end (teardown_work) */
        uint64_t bound_bytes; /* the input files mounted from fds, whose mount points are empty */
        /* Granted network: the broker's O_PATH fd of the run's anvil-egress socket (closed once
         * its tree is cloned, S2), and that the run has it: the relay's connect is let by
         * (notify.c), the blast radius says so. */
        int egress_fd;
        bool egress;
        struct jail_inputs *inputs; /* the input trees to send after GO (rundir.c), and their fds */
        int in_trees[JAIL_INPUTS_MAX];
        struct proto_limits lim;
        struct jail_rlimits rl;
        struct proto_strv caps_requested;
        char *source, *variables_in; /* the request's, for the run spec (send_spec) */
        bool save_source;
        struct proto_strv args;
        struct proto_strv caps_granted;
        struct proto_strv caps_denied;
        uv_poll_t pidfd_poll, sync_poll;
        uv_pipe_t in_pipe, out_pipe, err_pipe, ev_pipe;
        uv_timer_t wall_timer, sample_timer;
        uv_timer_t out_timer; /* gathers output before it is streamed (OUTPUT_FLUSH_MS) */
        bool stream_output;   /* run_request.stream_output, for a client */
        unsigned open_handles;
        uint64_t t0, t_end;
        struct capture out, err;
        struct proto_reader ev_reader;
        bool ev_broken;
        struct proto_array events;
        uint64_t events_dropped;
        struct proto_strv mechanisms;
        /* seccomp (notify.c): the runner's listener, from pid 1 (S6a) */
        int notify_fd;
        uv_poll_t notify_poll;
        uint64_t kernel_refusals;
        bool seccomp_verified; /* S6a: seen in force from outside */
        bool tool_started; /* the runner said "started": its later claims are the tool's word */
        /* The runner's first frame on fd 3 was the event "in_force" (R6): it saw every layer
         * it checks in force (Landlock among them) before it read a byte of the request's. */
        bool layers_in_force;
        bool runner_spoke; /* a runner_event frame has come on fd 3 */
        struct sup_run_kaudit ka; /* Landlock: what the jail reported, its denials (kaudit.c) */
        /* what happened */
        enum sup_run_state state;
        enum sup_run_verdict verdict;
        enum sup_run_end end;
        /* Facts that arrive in any order, each on its own: what the life's steps wait for. */
        bool reaped, out_eof, err_eof, ev_eof; /* pid 1 ended (pidfd), each stream's end: the run's end waits for all */
        int pid1_code, pid1_status;  /* how pid 1 ended (waitid: CLD_EXITED and its status, or the signal) */
        bool ready;           /* pid 1 said READY: with attached, the condition of VERIFIED */
        bool attach_pending;  /* the cgroup attach is on the thread pool */
        bool copy_pending;    /* the copy of inputs from their fds is on the thread pool */
        struct sup_copies *copies;
        bool attached;
        uv_work_t attach_work;
        int attach_r;
        struct anvil_err attach_err;
        int wait_status;
        uint64_t rusage_cpu_us;
        uint64_t rusage_maxrss_kb;
        uint32_t tmp_full; /* JAIL_TMP_FULL_*, as pid 1 found /tmp (P5) */
        enum pol_reason killed; /* with verdict SUP_RUN_KILLED */
        const char *killed_layer;
        double peak_mb, kill_peak_mb;
        char sandbox_error[256]; /* with verdict SUP_RUN_FAILED */
        /* A failure that is the request's, not the sandbox's (the runner refused its variables
         * before the tool started): the error frame's code and field; NULL for sandbox_failed. */
        const char *fail_code;
        const char *fail_field;
        /* The runner's last "variables" and "final_answer" events' payloads (DESIGN §8). */
        char *variables;
        struct proto_array variables_dropped; /* of struct proto_variable_dropped */
        char *final_answer;
        /* filled on the thread pool */
        uv_work_t work;
        uv_work_t teardown;
        int teardown_r; /* the cgroup's removal */
        struct anvil_err teardown_err;
        struct proto_array artifacts, notes;
        int collect_r;
        struct anvil_err collect_err;
};


/* A run of the probe's: it finds out what is in force, and is promised nothing. */
static inline bool sup_run_is_probe(const struct sup_run *run)
{
        return run->opts.done && !run->opts.warm;
}

/* run.c */
/* Whether the run's child has come as far as s (it stays so once the run is finishing). */
static inline bool sup_run_reached(const struct sup_run *run, enum sup_run_state s)
{
        return run->state >= s;
}
void sup_run_track(struct sup_run *run, uv_handle_t *h);
void sup_run_event(struct sup_run *run, const char *layer, const char *kind, const char *op, const char *reason,
                   const char *message);
void sup_run_kill_for(struct sup_run *run, enum pol_reason why, const char *layer, double peak_mb);
/* Finishes the run if everything it waits for is in (kaudit.c calls it after the drain). */
void sup_run_maybe_finish(struct sup_run *run);

/* notify.c: takes over fd (closed on failure too) */
int sup_notify_start(struct sup_run *run, int fd, struct anvil_err *err);
void sup_notify_stop(struct sup_run *run);
/* The runner's filter, from outside: its /proc status says Seccomp 2 with a filter; the
 * mechanism is added to the run's list. -EPERM and the refusal otherwise. */
int sup_notify_verify(struct sup_run *run, struct anvil_err *err);
void sup_notify_finish(struct sup_run *run);

/* result.c: builds the run_result from what was observed; what it allocates is freed by
 * sup_result_free_own, the rest belongs to the run. */
void sup_result_build(struct sup_run *run, struct proto_run_result *res);
void sup_result_free_own(struct proto_run_result *res);
