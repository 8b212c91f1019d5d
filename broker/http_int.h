/* The web UI's parts (http.c the server, http_route.c the routes, http_auth.c who is who,
 * http_link.c the way into the broker's own request handling, http_api.c the JSON API,
 * http_job.c the runs and tasks started from the page and their event streams). Internal to
 * anvil-broker (unprivileged). */
#pragma once

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "broker/broker.h"
#include "broker/http.h"
#include "proto/stream.h"

/* Bounds (docs/web-api.md "Bounds"). */
#define HTTP_BODY_MAX (16u << 20)    /* a POST's body: 413 beyond */
#define HTTP_CONN_MEMORY (32u << 10) /* a connection's buffer for the request line and headers: 431 beyond */
#define HTTP_CONNS_MAX 256           /* connections at once */
#define HTTP_CONNS_PER_IP 64
#define HTTP_TIMEOUT_S 60  /* a connection idle this long is closed (a suspended one is not idle) */
#define HTTP_TOKENS_MAX 64 /* login links not yet used */
#define HTTP_TOKEN_S 60    /* a login link's life */
#define HTTP_SESSIONS_MAX 256
#define HTTP_SESSION_IDLE_S (60u * 60)   /* a session unused this long ends */
#define HTTP_SESSION_MAX_S (12u * 3600)  /* and any session after this long */
#define HTTP_JOBS_MAX 64                 /* runs and tasks started from the page, kept once ended */
#define HTTP_JOB_EVENTS_MAX (8u << 20)   /* bytes of a job's events kept for its followers */
#define HTTP_JOBS_BYTES_MAX (128u << 20) /* and of all jobs' together: the oldest ended go first */
#define HTTP_FOLDER_FILE_MAX (16u << 20) /* a folder file read for a task (tasks take bytes) */
#define HTTP_SECRET_LEN 32               /* bytes of randomness in a token or a session id */
#define HTTP_ID_LEN 43                   /* their base64url text */

/* Every answer's Content-Security-Policy; an SVG artifact's adds "sandbox". */
#define HTTP_CSP                                                                                \
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " \
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

struct http_session {
        char id[HTTP_ID_LEN + 1];
        uid_t uid;
        uint64_t t0_ms, last_ms;
        /* anvilctl ui --inputs DIR: the files it opened, as the user, and passed */
        size_t n_files;
        int fds[PROTO_INPUTS_MAX];
        char *names[PROTO_INPUTS_MAX];
        uint64_t sizes[PROTO_INPUTS_MAX];
        struct http_session *next, **pprev;
};

struct http_token {
        char tok[HTTP_ID_LEN + 1];
        uid_t uid;
        uint64_t expires_ms;
        size_t n_files;
        int fds[PROTO_INPUTS_MAX];
        char *names[PROTO_INPUTS_MAX];
        struct http_token *next, **pprev;
};

struct http_job;
struct http_req;

struct bro_http {
        struct bro_server *srv;
        struct MHD_Daemon *d;
        uv_poll_t poll;
        uv_timer_t timer;
        uv_idle_t kick; /* MHD_run once more on this turn of the loop (a resumed connection) */
        bool handles, kicked;
        int web_dirfd;
        char origin[96]; /* "http://127.0.0.1:8700": what a POST's Origin must be */
        char addr_shown[80];
        bool check_host; /* loopback: a request's Host must name this server (DNS rebinding) */
        unsigned port;
        struct http_token *tokens;
        unsigned n_tokens;
        struct http_session *sessions;
        unsigned n_sessions;
        struct http_job *jobs;
        unsigned n_jobs;
        size_t jobs_bytes; /* their events and sources */
        uint64_t next_req;
};

/* One link into the broker: a socketpair whose far end is a client of the broker's own
 * (clients.c bro_client_adopt) with the session's uid, so that what the page asks goes the
 * path a socket client's request goes, with the same owner checks and bounds. */
struct http_link {
        struct proto_stream stream;
        struct bro_http *h;
        void (*on_msg)(void *owner, struct proto_msg *m); /* the callee takes m */
        void (*on_gone)(void *owner);                     /* closed before the owner let it go */
        void *owner;
};

struct http_req {
        struct bro_http *h;
        struct MHD_Connection *conn;
        uint64_t seq;
        char *url;
        bool post;
        char *body;
        size_t body_len;
        bool body_too_big;
        bool dispatched, suspended, ended;
        struct http_session *sess; /* valid during the dispatch alone: a session may end while r waits */
        uid_t uid;                 /* the session's, for what comes later */
        unsigned status;
        struct MHD_Response *resp; /* ready to be queued */
        struct http_link *link;    /* an answer awaited from the broker */
        char *id;                  /* the route's id */
        char *name;                /* the route's file or artifact */
        /* A streamed answer (an artifact, an event stream): bytes waiting to be taken. */
        char *out;
        size_t out_len, out_off;
        bool out_end, out_err;
        bool reading_paused;
        struct http_job *starting;      /* a POST that waits for its job's id */
        struct http_job *job;           /* an event stream following a job */
        size_t job_next;                /* the next of its events to send */
        struct http_req *next, **pprev; /* the job's followers */
        json_t *acc;                    /* what an answer gathers (a task's replayed trace) */
        int kind;                       /* the route */
};

/* http.c */
void http_kick(struct bro_http *h);
/* The answer of r: queued now or once it is resumed. Takes resp. */
void http_answer(struct http_req *r, unsigned status, struct MHD_Response *resp);
/* The headers of every answer; api: no-store too. */
void http_secure(struct MHD_Response *resp, bool api);
/* The JSON text of every answer and event (takes data; NULL if it cannot be made). */
char *http_json_text(json_t *data);
/* One server-sent event, "event: TYPE\ndata: JSON\n\n" (takes data; NULL if it cannot be
 * made); *size is what was allocated for it, what a job's events are counted by. */
char *http_sse_frame(const char *type, json_t *data, size_t *size);
void http_json(struct http_req *r, unsigned status, json_t *body); /* takes body */
void http_error(struct http_req *r, unsigned status, const char *code, const char *message);
/* A status for a broker error code (not_found 404, forbidden 403, ...). */
unsigned http_status_of(const char *code);
/* r's answer is streamed: a response that reads r->out (http.c), suspending r when empty. */
struct MHD_Response *http_stream_response(struct http_req *r);
/* More bytes in r->out, or its end: r is resumed if it waits. */
void http_stream_wake(struct http_req *r);
int http_stream_append(struct http_req *r, const char *data, size_t len);

/* http_route.c: pure, unit-tested */
enum http_route_kind {
        HR_NONE,
        HR_STATIC,
        HR_LOGIN,
        HR_ME,
        HR_PROBE,
        HR_RUNS,
        HR_TASKS,
        HR_RUN,
        HR_TASK,
        HR_RUN_ARTIFACT,
        HR_TASK_ARTIFACT,
        HR_RUN_CANCEL,
        HR_TASK_CANCEL,
        HR_RUN_EVENTS,
        HR_TASK_EVENTS,
        HR_FOLDER,
        HR_BREAKIT,
        HR_BREAKIT_FILE,
};
struct http_route {
        enum http_route_kind kind;
        bool api;  /* under /api/: a session needed */
        bool post; /* the method it takes */
        char id[PROTO_ID_MAX + 1];
        const char *name; /* into the url: the static file, the artifact, the attempt's file */
};
/* 0; -ENOENT: no such route (404); -EINVAL: a path refused (400); -EPERM: the route takes
 * another method (405). */
int bro_http_route(const char *method, const char *url, struct http_route *out);
/* Whether a request's Host header names a loopback server on port (127.0.0.1, localhost,
 * [::1], any 127.x.y.z), with that port: a page of another site that a rebound DNS name
 * points here sends its own name. */
bool bro_http_host_ok(const char *host, unsigned port);
/* A static file's path below web_dir (no leading '/'): segments of [A-Za-z0-9._-], none
 * empty or beginning with '.', no NUL; true if served. */
bool bro_http_static_path_ok(const char *path);
/* The Content-Type of a static file by its name, or NULL (not served). */
const char *bro_http_static_type(const char *path);
/* An artifact's Content-Type, and whether it goes as an attachment (and, svg, sandboxed). */
const char *bro_http_artifact_type(const char *path, bool *attachment, bool *sandbox);

/* http_auth.c */
void http_auth_free(struct bro_http *h);
/* The session of the request's cookie, if live (its last use now); or NULL. */
struct http_session *http_session_of(struct bro_http *h, struct MHD_Connection *conn);
/* GET /login?t=TOKEN */
void http_login(struct http_req *r);

/* http_link.c */
/* A new link for uid; NULL with err set. */
struct http_link *http_link_open(struct bro_http *h, uid_t uid, void *owner, void (*on_msg)(void *, struct proto_msg *),
                                 void (*on_gone)(void *), struct anvil_err *err);
/* The owner lets it go: nothing more reaches it; the broker's end sees the close (a run or
 * task of it is cancelled: close only once it has ended). */
void http_link_close(struct http_link *l);
int http_link_send(struct http_link *l, const struct proto_msg *m, const int *fds, size_t n_fds);

/* http_api.c */
void http_api(struct http_req *r, const struct http_route *rt);
void http_req_gone(struct http_req *r); /* MHD has ended r: whatever it awaits is let go */

/* http_job.c */
void http_job_start_run(struct http_req *r, json_t *body);
void http_job_start_task(struct http_req *r, json_t *body);
/* The job of id if it is uid's (or uid is root); NULL otherwise. */
struct http_job *http_job_find(struct bro_http *h, const char *id, uid_t uid);
const char *http_job_source(const struct http_job *j);
/* r becomes an event stream of j: what happened so far, then live. */
void http_job_follow(struct http_req *r, struct http_job *j);
/* Into r->out: the events of its job it has not had; out_end once the job has ended. */
void http_job_pull(struct http_req *r);
void http_job_unfollow(struct http_req *r);
/* r, the POST of a job still without its id, has gone: the job goes on, answering no one. */
void http_job_unstart(struct http_req *r);
int http_job_cancel(struct http_job *j);
void http_jobs_free(struct bro_http *h);
