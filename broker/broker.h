/* broker/: anvil-broker, unprivileged (the user anvil when installed). Relays runs and probes
 * to the supervisor, writes the results' prose and hashes their artifacts (render.c), runs the
 * agent loop (agent.c, the model's replies read in reply.c, its prompt in prompt.c), talks to
 * the model (model.c, libcurl), and stores results and traces. It holds the model key and
 * links no jail code. */
/* anvil-broker's shared state. See main.c for the theory of operation. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "broker/http.h"
#include "policy/reasons.h"
#include "broker/model.h"
#include "proto/stream.h"

#define BRO_MAX_INFLIGHT 8 /* requests in flight per client connection */

/* The bounds on clients (clients.c; docs/operations.md "Bounds on clients"), defaults of their flags. A uid's
 * bounds hold over all its connections together, so that one user cannot take what another
 * needs; --max-conns is the one global bound: each connection costs the broker an fd and its
 * buffers whoever holds it, and the process has one fd table (RLIMIT_NOFILE, raised to 4096
 * in main.c). The per-uid cap is well below it, so that 16 users at their cap still fit. */
#define BRO_MAX_CONNS_DEFAULT 1024
#define BRO_MAX_CONNS_PER_UID_DEFAULT 64
#define BRO_MAX_INFLIGHT_PER_UID_DEFAULT 32
#define BRO_IDLE_S_DEFAULT 300
#define BRO_FRAME_S_DEFAULT 60
/* One connection's worth of maximal requests in transit at once (8 frames of 16 MiB). */
#define BRO_MAX_PARTIAL_DEFAULT ((size_t)BRO_MAX_INFLIGHT * (PROTO_FRAME_MAX + 4))
/* Sixteen maximal replies waiting to be read. */
#define BRO_MAX_UNREAD_DEFAULT ((size_t)16 * (PROTO_FRAME_MAX + 4))

struct bro_bounds {
        unsigned max_conns;            /* --max-conns, all users */
        unsigned max_conns_per_uid;    /* --max-conns-per-uid */
        unsigned max_inflight_per_uid; /* --max-inflight-per-uid: runs, probes and tasks */
        size_t max_partial;            /* --max-partial-bytes, per uid */
        size_t max_unread;             /* --max-unread-bytes, per uid */
        struct proto_bounds stream;    /* --idle-timeout, --frame-timeout */
};
#define BRO_STOP_GRACE_S 10 /* a stop's wait for the results of the runs it cancelled (relay.c) */
#define BRO_KEEP_DEFAULT 1000 /* --keep-results, --keep-tasks */
#define BRO_KEEP_MAX 1000000

struct bro_config {
        const char *config_path;     /* the file read (--config, or the default one); NULL: none */
        const char *supervisor_path; /* the supervisor's socket, connected once per request */
        const char *listen_path;     /* the clients' socket */
        const char *state_dir;
        gid_t socket_group;          /* the clients' socket's group; -1: the broker's own */
        struct bro_model_cfg model;  /* --model-*: the default for every task (url "" if none) */
        const char *model_key_source; /* for the log: "ANVIL_MODEL_KEY", the key file's path, or NULL */
        struct bro_bounds bounds;
        unsigned keep_results; /* --keep-results: DIR/results/ keeps the newest N (store.c) */
        unsigned keep_tasks;   /* --keep-tasks: DIR/tasks/ and DIR/traces/ keep the newest N ended tasks */
        struct bro_http_config http; /* --http, --web-dir, --http-allow-remote */
        /* Network (issue 17): anvil-egress's control socket (--egress; NULL: none, and network
         * is never granted), and --network off, which forbids it whatever is approved. */
        const char *egress_path;
        bool network_off;
};

enum bro_prune { BRO_PRUNE_RESULTS, BRO_PRUNE_TASKS, _BRO_PRUNE_MAX };

struct bro_client;
struct bro_relay;
struct bro_task;
struct bro_xfer;

struct bro_server {
        uv_loop_t *loop;
        struct bro_config cfg;
        uv_pipe_t listener;
        uv_signal_t sigterm, sigint;
        struct bro_model *model; /* the model client (model.c), closed at stop */
        struct bro_http *http;   /* the web UI (http.c), NULL when off */
        int results_dirfd; /* DIR/results, O_DIRECTORY; shared with the thread pool (read-only use) */
        char results_dir[PATH_MAX];
        struct bro_client *clients;
        unsigned n_clients;  /* every connection until its close callback, refused ones too */
        unsigned n_admitted; /* those admitted (counted against --max-conns) */
        struct proto_user *users; /* one per uid with a connection */
        struct bro_relay *owned; /* relays of tasks' runs (agent.c) */
        struct bro_task *tasks;  /* tasks not yet ended (agent.c) */
        int tasks_dirfd, traces_dirfd; /* DIR/tasks, DIR/traces */
        uint64_t next_seq; /* numbers requests for the log */
        uint64_t next_tmp; /* numbers temporary result files */
        int listen_fd;         /* the clients' socket systemd passed (sdlisten.c), or 0 */
        bool listen_activated; /* listening on it */
        bool stopping;
        bool stopping_now;       /* a second signal, or the stop's grace ran out (relay.c) */
        bool stop_timers;        /* stop_grace and stop_idle are initialised */
        uv_timer_t stop_grace;   /* BRO_STOP_GRACE_S, unreferenced: it never keeps the loop up */
        uv_timer_t stop_idle;    /* 0 ms: clients with nothing left in flight are ended */
        struct {
                bool busy, again;
        } prune[_BRO_PRUNE_MAX]; /* store.c */
};

struct bro_client {
        struct proto_stream stream;
        struct bro_server *srv;
        struct proto_user *user; /* NULL until its credentials are read */
        bool admitted;
        uid_t uid;
        pid_t pid;
        unsigned n_inflight;      /* relays whose request has not ended */
        struct bro_relay *relays; /* every relay still attached, ended or not */
        struct bro_xfer *xfers;   /* artifacts being copied out to it (serve.c) */
        struct bro_client *next, **pprev;
};

/* Who a relay's frames go to when it is not a client's: a task's step (agent.c). Each hook
 * is called at most once per frame; result and error end the request. */
struct bro_relay_owner {
        void (*event)(void *data, const struct proto_msg *m);        /* a run_event */
        void (*result)(void *data, struct proto_msg *m);             /* takes over the run_result */
        void (*error)(void *data, const char *code, const char *message);
        void *data;
        /* Whose run it is, stored beside its result (store.c's DIR/results/<run_id>.meta): the
         * task's client's uid, the task's id, what the run is to the task ("describe", "step 2"). */
        uid_t uid;
        const char *task_id;
        const char *tool;
        /* Optional: a run_output, for a run whose request asked for it (stream_output). */
        void (*output)(void *data, const struct proto_msg *m);
};

/* One client request carried to the supervisor on a connection of its own. Lives until both
 * its supervisor connection is closed (close callback) and its result is stored. */
struct bro_relay {
        struct bro_relay_owner owner; /* data NULL: the request is the client's */
        struct proto_stream stream; /* to the supervisor */
        uv_connect_t connect;
        struct bro_server *srv;
        struct bro_client *client; /* NULL once the client has gone */
        struct bro_relay *next, **pprev;
        enum proto_type kind;  /* PROTO_RUN_REQUEST or PROTO_PROBE_REQUEST */
        struct proto_msg req;  /* owned until it is sent */
        bool req_held;
        bool stream_output; /* its client asked for run_output frames (run_request.stream_output) */
        int fds[PROTO_INPUTS_MAX]; /* a run_request's input fds, sent with it (B3), then closed */
        size_t n_fds;
        char *request_id;      /* the client's, may be NULL */
        char run_id[PROTO_ID_MAX + 1]; /* learned from the supervisor's first frame about the run */
        char *cancel_request_id; /* a cancel waiting for run_id */
        bool cancel_pending;
        bool cancel_sent;
        bool stop_cancelled; /* the broker's stop sent the first cancel (its killed says so) */
        uint64_t seq;
        uint64_t t0;
        bool done;          /* the supervisor has sent its last frame for this request */
        bool ended;         /* the client has had its last frame for this request (or is gone) */
        bool stream_closed; /* the supervisor connection's close callback has run */
        bool store_pending; /* a run_result is being written on the thread pool */
        /* Whose run: the client's uid (SO_PEERCRED) and its name for the tool, or the task's;
         * stored with the result (store.c), and what decides who may see it (serve.c). */
        uid_t uid;
        char task_id[PROTO_ID_MAX + 1];
        char tool[PROTO_NAME_MAX + 1];
        /* Network (relay.c's net_decide): asked for; the broker's word on it (POL_WHY_NONE:
         * granted, with scope's hosts); its proxy, while the run lives; the result waiting for
         * the proxy's "closed" (E4). */
        bool net_asked;
        enum pol_why net_why;
        struct pol_scope *net_scope;
        struct bro_egress *egress;
        struct proto_msg *held_result;
};

/* egress.c: a run's anvil-egress control connection (E1-E4 there) */
struct bro_egress;
struct pol_scope;
/* What the proxy said of a run, for its result. */
struct bro_egress_record {
        struct proto_array events; /* of struct proto_event, layer proxy, in order */
        uint64_t dropped;          /* events not kept (beyond the bound, or the daemon's own count) */
        struct proto_array conns;  /* of struct proto_connection: the "allowed" events */
        uint64_t conns_dropped;
        bool gone;     /* the connection ended during the run: the proxy's end (PROXY_GONE) */
        bool unclosed; /* "closed" never came (sending failed, or EGRESS_CLOSE_MS passed) */
};
/* E1: the run opened with s's hosts, its answer to come through bro_relay_egress_opened; NULL
 * (and why) if it cannot even be asked. */
struct bro_egress *bro_egress_open(struct bro_relay *r, const char *path, const char *run_id,
                                   const struct pol_scope *s, enum pol_why *why);
/* E4: "close" sent; true if "closed" is to come (bro_relay_egress_done), false if nothing is. */
bool bro_egress_close(struct bro_egress *e);
struct bro_egress_record *bro_egress_record(struct bro_egress *e);
void bro_egress_record_free(struct bro_egress_record *rec);
/* The relay lets go: the connection ends (and the proxy's run with it), e freed when it can. */
void bro_egress_free(struct bro_egress *e);
/* relay.c's side: E2's answer (fd the run's socket, or -1 and why not), E3's events, E4's end. */
void bro_relay_egress_opened(struct bro_relay *r, struct bro_egress *e, int fd, enum pol_why why);
void bro_relay_egress_event(struct bro_relay *r, const struct proto_event *ev);
void bro_relay_egress_done(struct bro_relay *r, struct bro_egress *e);
uv_loop_t *bro_relay_loop(struct bro_relay *r);

/* clients.c */
int bro_server_listen(struct bro_server *srv, struct anvil_err *err);
/* A client on fd, one end of a socketpair the web UI holds (http_link.c), whose uid is the
 * session's: then bounded, admitted and served as a socket's client is. Takes fd. */
int bro_client_adopt(struct bro_server *srv, int fd, uid_t uid, struct anvil_err *err);
/* The clients' socket's path removed at exit, unless systemd passed the socket (it owns it). */
void bro_server_unlink(struct bro_server *srv);
/* sdlisten.c: the listening socket systemd passed (LISTEN_PID/LISTEN_FDS), its fd; 0 when
 * none was passed; -errno (err set) when what was passed is not the clients' socket. */
int bro_sd_listen_fd(const char *listen_path, struct anvil_err *err);
void bro_server_stop(struct bro_server *srv);
void bro_client_send(struct bro_client *c, const struct proto_msg *m);
void bro_client_error(struct bro_client *c, const char *code, const char *message, const char *field,
                      const char *request_id);
/* Whether c may start one more request (what: "run_request", "task_submit"): 0, or -EBUSY
 * with the busy error's message in msg (BRO_MAX_INFLIGHT on the connection, then
 * --max-inflight-per-uid over all the connections of its uid). */
int bro_client_inflight_check(struct bro_client *c, const char *what, char *msg, size_t size);

/* relay.c */
/* Takes over *m (a run_request or probe_request). */
/* Takes over m and the n_fds fds that came with it (a run_request's inputs). */
void bro_relay_start(struct bro_client *c, struct proto_msg *m, const int *fds, size_t n_fds);
/* A run of a task's (agent.c), on the same path as a client's run_request: its frames go to
 * the owner's hooks, its result is stored the same way. Takes over *m; NULL if it could not
 * start (the owner's error hook has not been called), and err says why: -EMSGSIZE, a request
 * too large once encoded (the client's fault), or the broker's own failure. */
struct bro_relay *bro_relay_start_owned(struct bro_server *srv, struct proto_msg *m, const struct bro_relay_owner *o,
                                        struct anvil_err *err);
/* The owner is gone (a cancelled task): nothing more reaches it, the run is abandoned (the
 * supervisor kills the runs of a connection that closes). */
void bro_relay_abandon(struct bro_relay *r);
void bro_relay_cancel(struct bro_client *c, const struct proto_cancel *cancel);
/* The client has gone: every supervisor connection of its requests is closed. */
void bro_relays_client_gone(struct bro_client *c);
/* Called by store.c once a run_result has been written (or failed to be): forwards it. */
void bro_relay_stored(struct bro_relay *r, struct proto_msg *m);
/* The broker's stop (main.c's signals), in relay.c. The first signal: no new request or
 * client; every run in flight is cancelled at the supervisor, its result stored and sent;
 * tasks are cancelled (agent.c); each client is ended once nothing of its is in flight.
 * Returns the requests in flight. */
unsigned bro_stop_begin(struct bro_server *srv);
/* A second signal, or the grace ran out: what is still in flight is abandoned and every
 * connection closed; why goes to the log. */
void bro_stop_now(struct bro_server *srv, const char *why);
/* Something of a client's has ended while the broker stops: clients with nothing left in
 * flight are ended once what is queued for them is written (on the loop's next turn). */
void bro_stop_poke(struct bro_server *srv);
/* After the loop has ended: the stop's timers closed (their callbacks run in one more turn). */
void bro_stop_close(struct bro_server *srv);

/* store.c: DIR/results/<run_id>.json */
int bro_store_init(struct bro_server *srv, struct anvil_err *err);
/* *slot (freed first) becomes POL_NOT_STORED for dir/name and the errno code. */
void bro_not_stored(char **slot, const char *dir, const char *name, int code);
/* Retention (--keep-results, --keep-tasks), on the thread pool. */
void bro_store_prune(struct bro_server *srv, enum bro_prune kind);
/* text to dirfd/name as the thread pool's writes do (whole or not at all), but now, on the
 * caller's thread: for the start-up (recover.c). */
int bro_store_write_now(struct bro_server *srv, int dirfd, const char *name, const char *text, struct anvil_err *err);
/* DIR/tasks/<task_id>.unstored, empty: the task ended and its client had its result, which
 * could not be written. It needs no data block, so a full disk still takes it; it tells the
 * next start that the trace without a result is no interrupted task (recover.c). */
#define BRO_UNSTORED_SUFFIX ".unstored"
void bro_store_mark_unstored(struct bro_server *srv, const char *task_id);
bool bro_run_id_valid(const char *run_id);
/* Takes over *m (a run_result); renders and writes it on the thread pool, then calls
 * bro_relay_stored(r, m). Returns <0 if it could not be queued (m is left to the caller). */
int bro_store_result(struct bro_relay *r, struct proto_msg *m, struct anvil_err *err);
/* Files of a task's, each written whole (or not at all) on the thread pool, in order, all
 * or none (a failure removes those written before it); then cb(data, 0 or -errno, the name
 * of the file that failed or NULL, the error). Takes over each text once queued (returns 0);
 * on an error return the texts stay the caller's and cb is not called. */
#define BRO_SAVE_FILES_MAX 3
struct bro_save_file {
        char *name;
        char *text;
};
typedef void (*bro_saved_cb)(void *data, int rc, const char *failed, const char *error);
/* task_id non-NULL (dirfd is DIR/tasks): first the copy of its deliverable's artifacts is
 * kept as tasks/<task_id>.artifacts/ (deliverable_run NULL: none is) and its other runs'
 * copies are removed (store.c). */
int bro_store_files(struct bro_server *srv, int dirfd, const struct bro_save_file *files, size_t n,
                    const char *task_id, const char *deliverable_run, bro_saved_cb cb, void *data,
                    struct anvil_err *err);
/* Whose a stored result or task is: DIR/results/<run_id>.meta, DIR/tasks/<task_id>.meta, one
 * JSON object {"uid", "tool", "status", "time", "task_id", "artifacts_dir", "deliverable_run",
 * "artifacts"} written before the result it describes and removed with it (serve.c reads it). */
#define BRO_META_SUFFIX ".meta"
/* Now, UTC, as "2026-12-02T07:40:00Z". */
void bro_store_time(char *buf, size_t size);
/* A task's .meta text (malloc'd), or NULL. */
char *bro_task_meta_text(uid_t uid, const char *tool, const char *status, const char *deliverable_run,
                         const struct proto_array *artifacts);

/* serve.c: what a client may read of the store, its own (root: everyone's). Each takes over
 * nothing; answers or sends an error frame. */
void bro_serve_artifact(struct bro_client *c, const struct proto_artifact_request *req);
void bro_serve_list(struct bro_client *c, const struct proto_list_request *req);
void bro_serve_show(struct bro_client *c, const struct proto_show_request *req);
/* The client has gone, or writes were taken: its copies in flight are ended or go on. */
void bro_serve_client_gone(struct bro_client *c);

/* recover.c: at start-up, before the socket is opened: every task with a trace and no result
 * (the broker was killed while it ran) is ended "interrupted": its trace is given its end and
 * its TaskResult is stored. Failures are logged; the broker starts all the same. */
void bro_recover_tasks(struct bro_server *srv);
