/* egress/: anvil-egress (rules.h says what it is; docs/egress.md is its reference). This header:
 * the daemon's runs and connections, shared by main.c (options, signals), control.c (the
 * control socket: runs opened and closed, events sent back) and proxy.c (the proxied
 * connections). Everything runs on one libuv loop, as the unprivileged user anvil-egress;
 * only getaddrinfo runs on libuv's thread pool. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "egress/rules.h"
#include "policy/reasons.h"

/* a run's socket is RUN_DIR/N.sock, N up to 20 digits, within sun_path's 107 bytes */
#define EGR_RUN_DIR_MAX 80
#define EGR_RUN_ID_MAX 64          /* [A-Za-z0-9._-], 1 to 64 bytes */
#define EGR_RULES_MAX 64           /* hosts per run */
#define EGR_CIDRS_MAX 16           /* address ranges per run */
#define EGR_HEAD_MAX 16384         /* a request's head: request line and headers */
#define EGR_HEADERS_MAX 64         /* header lines in it */
#define EGR_PENDING_MAX (1u << 20) /* bytes queued toward one side before its source pauses */

struct egr_limits {
        unsigned conns;      /* connections at once */
        uint64_t bytes;      /* bytes both ways, all connections of the run together */
        unsigned head_s;     /* to send a whole request head (slowloris) */
        unsigned idle_s;     /* with no byte either way, resolving and connecting included */
        unsigned lifetime_s; /* one connection's longest life */
};

struct egr_ctl;
struct egr_conn;

/* The log lines one run's decisions may take (its events still all go to its owner): a tool
 * that opens connection after connection must not flood the journal for everyone. */
#define EGR_LOG_PER_RUN 100

struct egr_run {
        struct egr_run *next, **pprev;
        char id[EGR_RUN_ID_MAX + 1];
        struct egr_ctl *ctl; /* who opened it: its events go there */
        struct egr_rule rules[EGR_RULES_MAX];
        size_t n_rules;
        struct egr_cidr cidrs[EGR_CIDRS_MAX];
        size_t n_cidrs;
        struct egr_limits limits;
        uv_pipe_t listener;
        char path[108];
        uint64_t t0_ms;
        uint64_t bytes;   /* both ways, so far */
        unsigned n_conns; /* open now (the cap counts these) */
        unsigned n_alive; /* connections not yet freed */
        bool listener_closed;
        unsigned n_allowed, n_blocked;
        unsigned long long events_dropped; /* not sent: the control connection full or gone */
        unsigned n_logged;                 /* decisions logged, at most EGR_LOG_PER_RUN */
        unsigned long long log_skipped;    /* decisions past EGR_LOG_PER_RUN, not logged */
        struct egr_conn *conns;
        bool closing;
};

struct egr_daemon {
        uv_loop_t *loop;
        char run_dir[EGR_RUN_DIR_MAX + 1];
        struct egr_run *runs;
        unsigned n_runs, max_runs;
        struct egr_ctl *ctls;
        struct egr_limits defaults, maxima;
};

extern struct egr_daemon egr_d;

/* proxy.c */
/* Starts serving run's listener (bound already): each connection accepted is proxied. */
int egr_proxy_listen(struct egr_run *run, struct anvil_err *err);
/* Cuts every connection of run (PROXY_RUN_CLOSED) and closes its listener; the run is freed
 * when the last handle has closed. */
void egr_proxy_close_run(struct egr_run *run);

/* control.c */
int egr_ctl_listen(const char *path, const unsigned *uids, size_t n_uids, struct anvil_err *err);
/* One decision, as sent (docs/egress.md): NULL and 0 fields are left out, but bytes of
 * "allowed". */
struct egr_event {
        const char *kind, *reason, *message;
        const char *op;   /* "CONNECT host:443" */
        const char *host; /* as checked: lowercased, or an address's standard text */
        unsigned port;
        const char *address; /* the address resolved, connected to or refused */
        uint64_t bytes_out, bytes_in;
};

/* Sends run's event to whoever opened it (dropped, and counted, if that connection is gone). */
void egr_ctl_event(struct egr_run *run, const struct egr_event *e);
/* The run's last handle closed: it is unlinked and freed, and its owner told "closed". */
void egr_ctl_run_gone(struct egr_run *run);
void egr_ctl_close_all(void);
