/* A run's life in the supervisor (DESIGN §4), S-numbers as in main.c's theory of operation.
 * Every handle of a run is closed through uv_close; the run is freed when the last close
 * callback has run and the artifacts work is done. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail/verify.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "policy/limits.h"
#include "supervisor/supervisor.h"

#define SAMPLE_MS 20
#define EVENTS_KEEP (PROTO_EVENTS_MAX - 8) /* room for the supervisor's own events */
#define MB (1024.0 * 1024.0)

char *const sup_jail_env[] = {
        "PATH=/usr/bin:/bin",
        "HOME=/tmp",
        "LANG=C.UTF-8",
        "TZ=UTC",
        "TMPDIR=/tmp",
        "MPLBACKEND=Agg",
        "MPLCONFIGDIR=" JAIL_MPLCONFIGDIR,
        "OPENBLAS_NUM_THREADS=1",
        NULL,
};

struct capture {
        char *buf;
        size_t len;
        uint64_t total;
        uint64_t cap;
};

struct sup_run {
        struct sup_server *srv;
        struct sup_client *client; /* NULL once the client is gone */
        struct sup_run *next, **pprev;
        char id[64];
        char *request_id;
        char dir[PATH_MAX];
        int slot;
        uid_t uid;
        struct proto_limits lim;
        struct jail_rlimits rl;
        struct proto_strv caps_requested;
        struct jail_cgroup cg;
        bool cg_made;
        pid_t pid;
        int pidfd, sync_fd;
        int mntns_fd; /* holds the jail's mount namespace; see hold_mntns */
        uv_poll_t pidfd_poll, sync_poll;
        uv_pipe_t in_pipe, out_pipe, err_pipe, ev_pipe;
        uv_timer_t wall_timer, sample_timer;
        unsigned open_handles;
        uint64_t t0, t_end;
        struct capture out, err;
        struct proto_reader ev_reader;
        bool ev_broken;
        struct proto_array events;
        uint64_t events_dropped;
        struct proto_strv mechanisms;
        /* what happened */
        bool cloned, verified, exec_ok, got_exit, reaped, out_eof, err_eof, ev_eof, finishing;
        bool ready;           /* pid 1 said READY */
        bool attach_pending;  /* the cgroup attach is on the thread pool */
        bool attached;
        uv_work_t attach_work;
        int attach_r;
        struct anvil_err attach_err;
        int wait_status;
        uint64_t rusage_cpu_us;
        uint64_t rusage_maxrss_kb;
        bool is_killed;
        enum pol_reason killed;
        const char *killed_layer;
        double peak_mb, kill_peak_mb;
        bool failed;
        char sandbox_error[256];
        /* filled on the thread pool */
        uv_work_t work;
        struct proto_array artifacts, notes;
        int collect_r;
        struct anvil_err collect_err;
};

static void run_finish(struct sup_run *run);
static void run_maybe_finish(struct sup_run *run);

/* ---- small helpers ---- */

static uint64_t run_ms(const struct sup_run *run)
{
        return now_ms() - run->t0;
}

static void make_run_id(char *out, size_t size)
{
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                rnd ^= (uint64_t)now_ms() * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        char ts[32];
        strftime(ts, sizeof(ts), "%Y%m%dT%H%M%S", &tm);
        snprintf(out, size, "%s-%016" PRIx64, ts, rnd);
}

/* Appends an event the supervisor itself observed, and streams it to the client. */
static void run_event(struct sup_run *run, const char *layer, const char *kind, const char *op,
                      const char *reason, const char *message)
{
        if (run->events.n >= PROTO_EVENTS_MAX - 1) { /* the last place is the summary's */
                run->events_dropped++;
                return;
        }
        struct proto_event *e = proto_array_push(&run->events, sizeof(*e));
        if (!e)
                return;
        e->t_ms = run_ms(run);
        e->layer = proto_strdup(layer);
        e->kind = proto_strdup(kind);
        e->op = proto_strdup(op);
        e->reason = proto_strdup(reason);
        e->message = proto_strdup(message);
        if (run->client) {
                struct proto_msg m = { .type = PROTO_RUN_EVENT };
                m.u.run_event.request_id = run->request_id;
                m.u.run_event.run_id = run->id;
                m.u.run_event.event = *e;
                sup_client_send(run->client, &m);
        }
}

static void run_kill(struct sup_run *run)
{
        if (run->cloned && !run->reaped)
                (void)pidfd_send_signal(run->pidfd, SIGKILL, NULL, 0);
}

/* The first reason to kill wins; later ones are consequences. */
static void run_kill_for(struct sup_run *run, enum pol_reason why, const char *layer, double peak_mb)
{
        if (run->is_killed || run->failed)
                return;
        run->is_killed = true;
        run->killed = why;
        run->killed_layer = layer;
        run->kill_peak_mb = peak_mb;
        run_kill(run);
}

static void run_fail(struct sup_run *run, const char *msg)
{
        if (!run->failed) {
                run->failed = true;
                snprintf(run->sandbox_error, sizeof(run->sandbox_error), "%s", msg);
        }
        run_kill(run);
}

/* ---- handles ---- */

static void run_free(struct sup_run *run)
{
        proto_reader_free(&run->ev_reader);
        for (size_t i = 0; i < run->events.n; i++)
                proto_schema_free(&proto_event_schema, (struct proto_event *)run->events.items + i);
        free(run->events.items);
        for (size_t i = 0; i < run->notes.n; i++)
                proto_schema_free(&proto_event_schema, (struct proto_event *)run->notes.items + i);
        free(run->notes.items);
        for (size_t i = 0; i < run->artifacts.n; i++) {
                struct proto_artifact *a = (struct proto_artifact *)run->artifacts.items + i;
                free(a->path);
                free(a->sha256);
        }
        free(run->artifacts.items);
        for (size_t i = 0; i < run->mechanisms.n; i++)
                free(run->mechanisms.items[i]);
        free(run->mechanisms.items);
        for (size_t i = 0; i < run->caps_requested.n; i++)
                free(run->caps_requested.items[i]);
        free(run->caps_requested.items);
        free(run->out.buf);
        free(run->err.buf);
        free(run->request_id);
        free(run);
}

static void on_handle_closed(uv_handle_t *h)
{
        struct sup_run *run = h->data;
        if (--run->open_handles == 0)
                run_free(run);
}

static void close_handle(struct sup_run *run, uv_handle_t *h)
{
        if (h->data == run && !uv_is_closing(h))
                uv_close(h, on_handle_closed);
}

/* Handles are counted as they are initialised; a handle never initialised has data NULL. */
static void track(struct sup_run *run, uv_handle_t *h)
{
        h->data = run;
        run->open_handles++;
}

/* ---- output and events ---- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
        (void)h;
        (void)suggested;
        static char slab[65536];
        *buf = uv_buf_init(slab, sizeof(slab));
}

static void capture_add(struct capture *c, const char *data, size_t n)
{
        c->total += n;
        if (c->len >= c->cap)
                return;
        size_t take = n < c->cap - c->len ? n : (size_t)(c->cap - c->len);
        if (!c->buf && !(c->buf = malloc(c->cap)))
                return;
        memcpy(c->buf + c->len, data, take);
        c->len += take;
}

static void on_output(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
        struct sup_run *run = st->data;
        bool is_out = st == (uv_stream_t *)&run->out_pipe;
        if (nread > 0) {
                capture_add(is_out ? &run->out : &run->err, buf->base, (size_t)nread);
                return;
        }
        if (nread < 0) {
                (void)uv_read_stop(st);
                if (is_out)
                        run->out_eof = true;
                else
                        run->err_eof = true;
                run_maybe_finish(run);
        }
}

/* Events from the runner are untrusted: strictly decoded, and only the layers that live in
 * the jail may be claimed; time is the supervisor's. */
static bool runner_layer_ok(const char *layer)
{
        static const char *const ok[] = { "runner", "python", "precheck", "audit" };
        for (unsigned i = 0; i < ELEMENTSOF(ok); i++)
                if (strcmp(layer, ok[i]) == 0)
                        return true;
        return false;
}

static void runner_event(struct sup_run *run, struct proto_msg *m)
{
        struct proto_event *in = &m->u.runner_event.event;
        if (run->events.n >= EVENTS_KEEP) {
                run->events_dropped++;
                return;
        }
        struct proto_event *e = proto_array_push(&run->events, sizeof(*e));
        if (!e)
                return;
        *e = *in; /* takes ownership of the strings */
        memset(in, 0, sizeof(*in));
        e->t_ms = run_ms(run);
        if (run->client) {
                struct proto_msg ev = { .type = PROTO_RUN_EVENT };
                ev.u.run_event.request_id = run->request_id;
                ev.u.run_event.run_id = run->id;
                ev.u.run_event.event = *e;
                sup_client_send(run->client, &ev);
        }
}

static void events_broken(struct sup_run *run, const char *why)
{
        char msg[512];
        run->ev_broken = true;
        run_event(run, "supervisor", "malformed_event", NULL, NULL,
                  pol_reason(msg, sizeof(msg), POL_RUNNER_EVENT_MALFORMED, why));
}

static void on_events(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
        struct sup_run *run = st->data;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (nread < 0) {
                (void)uv_read_stop(st);
                if (!run->ev_broken && proto_reader_partial(&run->ev_reader))
                        events_broken(run, "truncated frame at end of stream");
                run->ev_eof = true;
                run_maybe_finish(run);
                return;
        }
        if (nread == 0 || run->ev_broken)
                return; /* keep draining so the tool never blocks on a full pipe */
        if (proto_reader_feed(&run->ev_reader, buf->base, (size_t)nread, &err) < 0) {
                events_broken(run, err.msg);
                return;
        }
        for (;;) {
                const uint8_t *p;
                size_t n;
                int r = proto_reader_next(&run->ev_reader, &p, &n, &err);
                if (r < 0) {
                        events_broken(run, err.msg);
                        return;
                }
                if (r == 0)
                        return;
                struct proto_msg m;
                if (proto_decode(p, n, &m, &err) < 0) {
                        events_broken(run, err.msg);
                        return;
                }
                if (m.type != PROTO_RUNNER_EVENT || !runner_layer_ok(m.u.runner_event.event.layer)) {
                        events_broken(run, m.type != PROTO_RUNNER_EVENT ? "not a runner_event"
                                                                        : "a layer the runner may not claim");
                        proto_msg_free(&m);
                        return;
                }
                runner_event(run, &m);
                proto_msg_free(&m);
        }
}

/* ---- the sync socket (S3-S8) ---- */

static void on_verified(struct sup_run *run)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct jail_expect x = { .host_uid = run->uid, .rlimits = &run->rl, .cgroup = &run->cg };
        if (jail_verify_parent(run->pid, &x, &run->mechanisms, &err) < 0) {
                run_fail(run, err.msg);
                return;
        }
        run->verified = true;
        struct jail_msg go = { .kind = JAIL_MSG_GO };
        if (send(run->sync_fd, &go, sizeof(go), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(go))
                run_fail(run, "Failed to start the runner: the jail's pid 1 is gone");
}

static void sync_drain(struct sup_run *run)
{
        for (;;) {
                struct jail_msg m;
                ssize_t n = recv(run->sync_fd, &m, sizeof(m), MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                if (n != (ssize_t)sizeof(m)) {
                        run_fail(run, "The jail's pid 1 sent a malformed record");
                        return;
                }
                m.msg[sizeof(m.msg) - 1] = 0;
                switch (m.kind) {
                case JAIL_MSG_ERROR:
                        run_fail(run, m.msg[0] ? m.msg : "Building the jail failed");
                        break;
                case JAIL_MSG_READY:
                        run->ready = true;
                        if (run->attached && !run->verified && !run->failed)
                                on_verified(run);
                        break;
                case JAIL_MSG_EXEC_OK:
                        if (run->verified)
                                run->exec_ok = true;
                        break;
                case JAIL_MSG_EXIT:
                        if (run->exec_ok && !run->got_exit) {
                                run->got_exit = true;
                                run->wait_status = m.status;
                                run->rusage_cpu_us = m.utime_us + m.stime_us;
                                run->rusage_maxrss_kb = m.maxrss_kb;
                        }
                        break;
                default:
                        run_fail(run, "The jail's pid 1 sent an unknown record");
                }
        }
}

static void on_sync(uv_poll_t *p, int status, int events)
{
        (void)status;
        (void)events;
        sync_drain(p->data);
}

static void on_pidfd(uv_poll_t *p, int status, int events)
{
        (void)status;
        (void)events;
        struct sup_run *run = p->data;
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        if (waitid(P_PIDFD, (id_t)run->pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
                return;
        run->reaped = true;
        (void)uv_poll_stop(p);
        sync_drain(run);
        run_maybe_finish(run);
}

/* ---- limits (S9) ---- */

static void on_wall(uv_timer_t *t)
{
        run_kill_for(t->data, POL_KILLED_TIMEOUT, "supervisor", 0);
}

/* The tool's resident memory: anon + shmem of the run's cgroup, or without a cgroup the
 * resident size of the jail's pid 1 and its direct children (read from /proc). */
static uint64_t sample_memory(struct sup_run *run)
{
        if (run->cg.mode != JAIL_CG_NONE) {
                struct jail_cgroup_stats st;
                return jail_cgroup_read(&run->cg, &st) == 0 ? st.mem_bytes : 0;
        }
        char p[96], buf[4096];
        snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)run->pid, (int)run->pid);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        uint64_t total = 0;
        long page = sysconf(_SC_PAGESIZE);
        for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n")) {
                char sp[64], st[128];
                snprintf(sp, sizeof(sp), "/proc/%s/statm", tok);
                _cleanup_close_ int sfd = open(sp, O_RDONLY | O_CLOEXEC);
                ssize_t k = sfd < 0 ? -1 : read(sfd, st, sizeof(st) - 1);
                if (k <= 0)
                        continue;
                st[k] = 0;
                unsigned long long size, resident;
                if (sscanf(st, "%llu %llu", &size, &resident) == 2)
                        total += resident * (uint64_t)page;
        }
        return total;
}

static void on_sample(uv_timer_t *t)
{
        struct sup_run *run = t->data;
        double mb = (double)sample_memory(run) / MB;
        if (mb > run->peak_mb)
                run->peak_mb = mb;
        if (mb > (double)run->lim.memory_mb)
                run_kill_for(run, POL_KILLED_MEMORY, "supervisor", run->peak_mb);
}

/* Tearing down a mount namespace waits for an RCU grace period, and the last process in it
 * pays, in its exit, before its parent hears of it: a whole grace period on every run's way
 * out. The supervisor holds the namespace instead (an nsfs fd) and lets go of it on the
 * thread pool after the result is sent. */
static void hold_mntns(struct sup_run *run)
{
        char p[64];
        snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)run->pid);
        run->mntns_fd = open(p, O_RDONLY | O_CLOEXEC);
}

/* ---- the cgroup attach (S2) ----
 * Moving a task into a cgroup v1 hierarchy waits for an RCU grace period (the write side of
 * cgroup_threadgroup_rwsem): 10-15 ms here, longer than building the jail. So it runs on the
 * thread pool while the child builds its root, and pid 1 is verified (membership included)
 * and let go only once both are done. */

static void attach_work(uv_work_t *w)
{
        struct sup_run *run = w->data;
        run->attach_r = jail_cgroup_parent(&run->cg, run->pid, &run->attach_err);
}

static void attach_done(uv_work_t *w, int status)
{
        struct sup_run *run = w->data;
        run->attach_pending = false;
        if (status < 0 || run->attach_r < 0)
                run_fail(run, status < 0 ? "The cgroup attach was cancelled" : run->attach_err.msg);
        else
                run->attached = true;
        if (run->attached && run->ready && !run->verified && !run->failed)
                on_verified(run);
        run_maybe_finish(run);
}

/* ---- start (S1-S2) ---- */

static int alloc_slot(struct sup_server *srv)
{
        for (unsigned i = 0; i < srv->cfg.max_runs && i < SUP_MAX_RUNS; i++)
                if (!srv->slots[i]) {
                        srv->slots[i] = true;
                        return (int)i;
                }
        return -1;
}

static int open_pipe(struct sup_run *run, uv_pipe_t *p, int fd, struct anvil_err *err)
{
        int r = uv_pipe_init(run->srv->loop, p, 0);
        if (r < 0) {
                (void)close(fd);
                return anvil_err_set(err, -r, "Failed to set up a pipe: %s", uv_strerror(r));
        }
        track(run, (uv_handle_t *)p);
        r = uv_pipe_open(p, fd);
        if (r < 0) {
                (void)close(fd);
                return anvil_err_set(err, -r, "Failed to adopt a pipe: %s", uv_strerror(r));
        }
        return 0;
}

static void on_spec_written(uv_write_t *req, int status)
{
        (void)status; /* a runner that died before reading its spec is reported by its exit */
        struct sup_run *run = req->handle->data;
        free(req->data);
        free(req);
        close_handle(run, (uv_handle_t *)&run->in_pipe);
}

static int send_spec(struct sup_run *run, const struct proto_run_request *req, struct anvil_err *err)
{
        struct proto_msg m = { .type = PROTO_RUN_SPEC };
        struct proto_run_spec *s = &m.u.run_spec;
        s->source = req->source;
        s->variables = req->variables;
        char *reads[] = { JAIL_INPUTS, JAIL_ARTIFACTS };
        char *writes[] = { JAIL_ARTIFACTS, JAIL_TMP };
        s->read_roots = (struct proto_strv){ reads, 2 };
        s->write_roots = (struct proto_strv){ writes, 2 };
        uint8_t *buf;
        size_t len;
        int r = proto_encode(&m, &buf, &len, err);
        if (r < 0)
                return r;
        uv_write_t *w = malloc(sizeof(*w));
        if (!w) {
                free(buf);
                return anvil_err_set(err, ENOMEM, "Out of memory");
        }
        w->data = buf;
        uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
        r = uv_write(w, (uv_stream_t *)&run->in_pipe, &b, 1, on_spec_written);
        if (r < 0) {
                free(buf);
                free(w);
                return anvil_err_set(err, -r, "Failed to send the run spec: %s", uv_strerror(r));
        }
        return 0;
}

static void close_fds(int *fds, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0) {
                        (void)close(fds[i]);
                        fds[i] = -1;
                }
}

/* S1-S2: directories, cgroup, pipes, clone, maps, GO. Every libuv handle is set up before the
 * clone, so that once a child exists the only way on is the normal end of a run (pidfd
 * readable, pipes at end of file), whatever fails after. */
static int run_spawn(struct sup_run *run, const struct proto_run_request *req, struct anvil_err *err)
{
        struct sup_server *srv = run->srv;
        int r = sup_rundir_create(srv, run->id, req, run->uid, run->lim.files_bytes, run->dir, sizeof(run->dir), err);
        if (r < 0)
                return r;
        /* The cgroup's hard limit is a backstop above the cap: the 20 ms sampler kills at the
         * cap and reports the peak it saw; the kernel kills only a tool that outruns it. */
        uint64_t cap = run->lim.memory_mb * 1024 * 1024;
        uint64_t backstop = cap + (cap / 4 > (64u << 20) ? cap / 4 : (64u << 20));
        if ((r = jail_cgroup_prepare(&srv->cg, run->id, backstop, run->lim.pids, &run->cg, err)) < 0)
                return r;
        run->cg_made = true;
        run->rl = (struct jail_rlimits){
                .cpu_s = run->lim.cpu_s,
                /* Without a memory cgroup, RLIMIT_AS is the kernel's bound: address space, not
                 * memory, so it leaves room for the interpreter's and BLAS's mappings; the
                 * sampler still kills at the cap. */
                .as_bytes = run->cg.mode == JAIL_CG_NONE ? cap + (2048ull << 20) : 0,
                .fsize_bytes = run->lim.files_bytes,
                .nproc = run->lim.pids,
                .nofile = 1024,
        };
        /* parent ends: in[1] out[0] er[0] ev[0] sy[0]; child ends: in[0] out[1] er[1] ev[1] sy[1] */
        int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 }, ev[2] = { -1, -1 }, sy[2] = { -1, -1 };
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0 ||
            pipe2(ev, O_CLOEXEC) < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sy) < 0) {
                r = anvil_err_sys(err, errno, "Failed to create the run's pipes");
                int all[] = { in[0], in[1], out[0], out[1], er[0], er[1], ev[0], ev[1], sy[0], sy[1] };
                close_fds(all, ELEMENTSOF(all));
                return r;
        }
        int child[] = { in[0], out[1], er[1], ev[1], sy[1] };
        run->sync_fd = sy[0];
        /* open_pipe owns (and on failure closes) the fd it is given. */
        int parent[] = { in[1], out[0], er[0], ev[0] };
        uv_pipe_t *pipes[] = { &run->in_pipe, &run->out_pipe, &run->err_pipe, &run->ev_pipe };
        for (unsigned i = 0; i < ELEMENTSOF(pipes); i++) {
                if ((r = open_pipe(run, pipes[i], parent[i], err)) < 0) {
                        close_fds(parent + i + 1, ELEMENTSOF(parent) - i - 1);
                        close_fds(child, ELEMENTSOF(child));
                        return r;
                }
        }
        if ((r = uv_poll_init(srv->loop, &run->sync_poll, run->sync_fd)) < 0) {
                close_fds(child, ELEMENTSOF(child));
                return anvil_err_set(err, -r, "Failed to watch the sync socket: %s", uv_strerror(r));
        }
        track(run, (uv_handle_t *)&run->sync_poll);
        (void)uv_timer_init(srv->loop, &run->wall_timer);
        track(run, (uv_handle_t *)&run->wall_timer);
        (void)uv_timer_init(srv->loop, &run->sample_timer);
        track(run, (uv_handle_t *)&run->sample_timer);

        char root[PATH_MAX + 16], inputs[PATH_MAX + 16], artifacts[PATH_MAX + 16];
        snprintf(root, sizeof(root), "%s/root", run->dir);
        snprintf(inputs, sizeof(inputs), "%s/inputs", run->dir);
        snprintf(artifacts, sizeof(artifacts), "%s/artifacts", run->dir);
        struct jail_config cfg = {
                .host_uid = run->uid,
                .host_gid = run->uid,
                .root_dir = root,
                .inputs_dir = inputs,
                .artifacts_dir = artifacts,
                .runner_path = srv->cfg.runner_path,
                .font_cache_dir = srv->font_cache_dir[0] ? srv->font_cache_dir : NULL,
                .tmp_bytes = run->lim.files_bytes,
                .rlimits = run->rl,
                .stdin_fd = in[0],
                .stdout_fd = out[1],
                .stderr_fd = er[1],
                .events_fd = ev[1],
                .sync_fd = sy[1],
                .init_exe_fd = srv->self_exe_fd,
                .env = sup_jail_env,
        };
        run->t0 = now_ms();
        r = jail_contain_clone(&cfg, &run->pid, &run->pidfd, err);
        close_fds(child, ELEMENTSOF(child));
        if (r < 0)
                return r;
        run->cloned = true;
        hold_mntns(run);
        if (uv_poll_init(srv->loop, &run->pidfd_poll, run->pidfd) < 0 ||
            uv_poll_start(&run->pidfd_poll, UV_READABLE, on_pidfd) < 0) {
                /* Without a watch on the child there is no asynchronous end: end it here. */
                siginfo_t si;
                (void)pidfd_send_signal(run->pidfd, SIGKILL, NULL, 0);
                (void)waitid(P_PIDFD, (id_t)run->pidfd, &si, WEXITED);
                run->reaped = true;
                return anvil_err_set(err, EIO, "Failed to watch the jail's pid 1");
        }
        track(run, (uv_handle_t *)&run->pidfd_poll);
        (void)uv_read_start((uv_stream_t *)&run->out_pipe, on_alloc, on_output);
        (void)uv_read_start((uv_stream_t *)&run->err_pipe, on_alloc, on_output);
        (void)uv_read_start((uv_stream_t *)&run->ev_pipe, on_alloc, on_events);
        (void)uv_poll_start(&run->sync_poll, UV_READABLE, on_sync);
        (void)uv_timer_start(&run->wall_timer, on_wall, run->lim.wall_s * 1000, 0);
        (void)uv_timer_start(&run->sample_timer, on_sample, SAMPLE_MS, SAMPLE_MS);
        /* S2: the maps, GO; the cgroup attach in parallel (see attach_work). */
        if ((r = jail_userns_parent(run->pid, run->uid, run->uid, err)) < 0)
                return r;
        run->attach_work.data = run;
        if (run->cg.mode == JAIL_CG_NONE)
                run->attached = true;
        else if ((r = uv_queue_work(srv->loop, &run->attach_work, attach_work, attach_done)) < 0)
                return anvil_err_set(err, -r, "Failed to queue the cgroup attach: %s", uv_strerror(r));
        else
                run->attach_pending = true;
        struct jail_msg go = { .kind = JAIL_MSG_GO };
        if (send(run->sync_fd, &go, sizeof(go), MSG_NOSIGNAL) != sizeof(go))
                return anvil_err_sys(err, errno, "Failed to release the jail's child");
        return send_spec(run, req, err);
}

bool sup_run_is_live(struct sup_server *srv, const char *run_id)
{
        for (struct sup_run *r = srv->runs; r; r = r->next)
                if (strcmp(r->id, run_id) == 0)
                        return true;
        return false;
}

void sup_run_start(struct sup_client *c, struct proto_run_request *req)
{
        struct sup_server *srv = c->srv;
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_limits lim;
        char field[128];
        if (pol_limits_resolve(&req->limits, &lim, &err) < 0 || pol_inputs_check(&req->inputs, &err) < 0) {
                proto_err_field(&err, field, sizeof(field));
                sup_client_error(c, "bad_request", err.msg, field, req->request_id);
                return;
        }
        if (srv->stopping) {
                sup_client_error(c, "busy", "The supervisor is stopping", NULL, req->request_id);
                return;
        }
        int slot = alloc_slot(srv);
        if (slot < 0) {
                char msg[96];
                snprintf(msg, sizeof(msg), "All %u run slots are in use; try again later", srv->cfg.max_runs);
                sup_client_error(c, "busy", msg, NULL, req->request_id);
                return;
        }
        struct sup_run *run = calloc(1, sizeof(*run));
        if (!run) {
                srv->slots[slot] = false;
                sup_client_error(c, "internal", "Out of memory", NULL, req->request_id);
                return;
        }
        run->srv = srv;
        run->client = c;
        run->slot = slot;
        run->uid = srv->cfg.uid_base + 1 + (uid_t)slot;
        run->lim = lim;
        run->pidfd = run->sync_fd = run->mntns_fd = -1;
        run->request_id = proto_strdup(req->request_id);
        run->caps_requested = req->capabilities_requested; /* taken over */
        memset(&req->capabilities_requested, 0, sizeof(req->capabilities_requested));
        run->out.cap = run->err.cap = lim.output_bytes;
        proto_reader_init(&run->ev_reader, 1024 * 1024);
        make_run_id(run->id, sizeof(run->id));
        run->next = srv->runs;
        if (srv->runs)
                srv->runs->pprev = &run->next;
        run->pprev = &srv->runs;
        srv->runs = run;
        srv->n_runs++;
        log_info("run %s: started for %s (uid %u)", run->id, c->stream.name, (unsigned)run->uid);
        if (run_spawn(run, req, &err) < 0) {
                log_error("run %s: %s", run->id, err.msg);
                run_fail(run, err.msg);
                /* Once a child is watched, its end comes the normal way; otherwise now. */
                if (!run->cloned || run->reaped) {
                        run->reaped = run->out_eof = run->err_eof = run->ev_eof = true;
                        run_maybe_finish(run);
                }
        }
}

/* ---- the end (S10-S12) ---- */

static void run_maybe_finish(struct sup_run *run)
{
        if (run->reaped && run->out_eof && run->err_eof && run->ev_eof && !run->attach_pending && !run->finishing)
                run_finish(run);
}

static const char *signal_name(int sig)
{
        static char buf[16];
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev)
                snprintf(buf, sizeof(buf), "SIG%s", abbrev);
        else
                snprintf(buf, sizeof(buf), "signal %d", sig);
        return buf;
}

/* Output as UTF-8 (invalid bytes become U+FFFD) and never longer than the cap. */
static char *capture_text(const struct capture *c, bool *truncated)
{
        size_t n;
        char *s = utf8_sanitize((const uint8_t *)(c->buf ? c->buf : ""), c->len, &n);
        *truncated = c->total > c->len;
        if (s && n > c->cap) {
                size_t cut = (size_t)c->cap;
                while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
                        cut--;
                s[cut] = 0;
                *truncated = true;
        }
        return s ? s : strdup("");
}

static void set_blast_radius(struct sup_run *run, struct proto_blast_radius *b)
{
        for (unsigned i = 0; i < jail_n_ro_binds; i++)
                if (!jail_ro_binds[i].optional || access(jail_ro_binds[i].path, F_OK) == 0)
                        (void)proto_strv_push(&b->read, jail_ro_binds[i].path);
        static const char *const reads[] = { "/etc (synthetic: passwd, group, hosts, hostname, nsswitch.conf)",
                                             "/proc (the jail's own processes)", "/dev/null, /dev/zero, /dev/urandom",
                                             JAIL_INPUTS, JAIL_ARTIFACTS, JAIL_TMP " (private)" };
        for (unsigned i = 0; i < ELEMENTSOF(reads); i++)
                (void)proto_strv_push(&b->read, reads[i]);
        char w[128];
        snprintf(w, sizeof(w), "%s (at most %llu bytes)", JAIL_ARTIFACTS, (unsigned long long)run->lim.files_bytes);
        (void)proto_strv_push(&b->write, w);
        snprintf(w, sizeof(w), "%s (private tmpfs, at most %llu bytes, discarded)", JAIL_TMP,
                 (unsigned long long)run->lim.files_bytes);
        (void)proto_strv_push(&b->write, w);
        b->network = strdup("none: a network namespace of its own with no interface up");
        char p[160];
        snprintf(p, sizeof(p), "at most %llu processes and threads, in a pid namespace of its own",
                 (unsigned long long)run->lim.pids);
        b->processes = strdup(p);
        b->limits = run->lim;
}

static void build_result(struct sup_run *run, struct proto_run_result *res)
{
        char msg[160];
        memset(res, 0, sizeof(*res));
        res->request_id = run->request_id;
        res->run_id = run->id;
        res->wall_ms = run->t_end - run->t0;
        /* Peaks and times as observed: the cgroup's when there is one. */
        struct jail_cgroup_stats st = { 0 };
        bool have_cg = jail_cgroup_read(&run->cg, &st) == 0;
        res->cpu_ms = (have_cg && st.has_cpu ? st.cpu_us : run->rusage_cpu_us) / 1000;
        if (have_cg && st.oom_kills > 0) {
                double kpeak = (double)st.peak_bytes / MB;
                if (kpeak > run->peak_mb)
                        run->peak_mb = kpeak;
                run_kill_for(run, POL_KILLED_MEMORY, "cgroup", run->peak_mb);
        }
        /* The kernel's own high-water mark of the runner's resident set (rusage) catches a
         * tool shorter than one sampling period; the larger of the two observations is kept. */
        double ru_mb = (double)run->rusage_maxrss_kb / 1024.0;
        double peak = run->peak_mb > ru_mb ? run->peak_mb : ru_mb;
        res->peak_rss_mb = (double)(uint64_t)(peak * 10 + 0.5) / 10;
        if (run->got_exit && WIFSIGNALED(run->wait_status)) {
                int sig = WTERMSIG(run->wait_status);
                if (sig == SIGXCPU || (sig == SIGKILL && res->cpu_ms >= run->lim.cpu_s * 1000))
                        run_kill_for(run, POL_KILLED_CPU, "rlimit", 0);
        }
        if (run->got_exit && WIFEXITED(run->wait_status)) {
                res->exit_code.set = true;
                res->exit_code.v = WEXITSTATUS(run->wait_status);
        } else if (run->got_exit && WIFSIGNALED(run->wait_status))
                res->signal = strdup(signal_name(WTERMSIG(run->wait_status)));
        if (run->is_killed) {
                if (run->killed == POL_KILLED_MEMORY)
                        pol_reason(msg, sizeof(msg), POL_KILLED_MEMORY, run->kill_peak_mb > run->peak_mb ? run->kill_peak_mb : run->peak_mb,
                                   (unsigned long long)run->lim.memory_mb);
                else
                        pol_reason(msg, sizeof(msg), run->killed);
                res->killed = strdup(msg);
                res->status = "killed";
                run_event(run, run->killed_layer, "killed", NULL, NULL, msg);
        } else if (res->exit_code.set && res->exit_code.v == 0)
                res->status = "ok";
        else
                res->status = "error";
        res->out_text = capture_text(&run->out, &res->stdout_truncated);
        res->err_text = capture_text(&run->err, &res->stderr_truncated);
        res->stdout_bytes = run->out.total;
        res->stderr_bytes = run->err.total;
        if (res->stdout_truncated)
                run_event(run, "supervisor", "truncated", "stdout", NULL,
                          pol_reason(msg, sizeof(msg), POL_OUTPUT_TRUNCATED, "stdout",
                                     (unsigned long long)strlen(res->out_text), (unsigned long long)run->out.total));
        if (res->stderr_truncated)
                run_event(run, "supervisor", "truncated", "stderr", NULL,
                          pol_reason(msg, sizeof(msg), POL_OUTPUT_TRUNCATED, "stderr",
                                     (unsigned long long)strlen(res->err_text), (unsigned long long)run->err.total));
        for (size_t i = 0; i < run->notes.n; i++) {
                struct proto_event *e = (struct proto_event *)run->notes.items + i;
                run_event(run, e->layer, e->kind, e->op, NULL, e->message);
        }
        if (run->events_dropped) {
                struct proto_event *e = proto_array_push(&run->events, sizeof(*e));
                if (e) {
                        e->t_ms = res->wall_ms;
                        e->layer = strdup("supervisor");
                        e->kind = strdup("events_dropped");
                        e->message = strdup(pol_reason(msg, sizeof(msg), POL_EVENTS_DROPPED,
                                                       (unsigned long long)run->events_dropped));
                }
        }
        res->events = run->events;
        res->isolation.tier = "namespaces";
        res->isolation.mechanisms = run->mechanisms;
        char dir[PATH_MAX + 16];
        snprintf(dir, sizeof(dir), "%s/artifacts", run->dir);
        res->artifacts_dir = strdup(dir);
        res->artifacts = run->artifacts;
        res->capabilities.requested = run->caps_requested;
        /* No capability is grantable until the capability policy exists (issue 3): every
         * request is denied, and says so. */
        for (size_t i = 0; i < run->caps_requested.n; i++)
                (void)proto_strv_push(&res->capabilities.denied, run->caps_requested.items[i]);
        set_blast_radius(run, &res->blast_radius);
}

static void free_result_own(struct proto_run_result *res)
{
        /* Only what build_result allocated; the rest belongs to the run. */
        free(res->signal);
        free(res->killed);
        free(res->out_text);
        free(res->err_text);
        free(res->artifacts_dir);
        struct proto_capabilities *c = &res->capabilities;
        for (size_t i = 0; i < c->denied.n; i++)
                free(c->denied.items[i]);
        free(c->denied.items);
        struct proto_blast_radius *b = &res->blast_radius;
        for (size_t i = 0; i < b->read.n; i++)
                free(b->read.items[i]);
        free(b->read.items);
        for (size_t i = 0; i < b->write.n; i++)
                free(b->write.items[i]);
        free(b->write.items);
        free(b->network);
        free(b->processes);
}

static void collect_work(uv_work_t *w)
{
        struct sup_run *run = w->data;
        if (run->mntns_fd >= 0) {
                (void)close(run->mntns_fd); /* the grace period is paid here, off the loop */
                run->mntns_fd = -1;
        }
        run->collect_r = sup_rundir_collect(run->dir, run->lim.files_bytes, &run->artifacts, &run->notes,
                                            &run->collect_err);
}

static void run_release(struct sup_run *run)
{
        struct sup_server *srv = run->srv;
        if (run->cg_made)
                jail_cgroup_destroy(&run->cg);
        if (run->pidfd >= 0)
                (void)close(run->pidfd);
        if (run->sync_fd >= 0)
                (void)close(run->sync_fd);
        run->pidfd = run->sync_fd = -1;
        srv->slots[run->slot] = false;
        srv->n_runs--;
        *run->pprev = run->next;
        if (run->next)
                run->next->pprev = run->pprev;
        uv_handle_t *hs[] = { (uv_handle_t *)&run->in_pipe, (uv_handle_t *)&run->out_pipe,
                              (uv_handle_t *)&run->err_pipe, (uv_handle_t *)&run->ev_pipe,
                              (uv_handle_t *)&run->pidfd_poll, (uv_handle_t *)&run->sync_poll,
                              (uv_handle_t *)&run->wall_timer, (uv_handle_t *)&run->sample_timer };
        if (run->open_handles == 0) {
                run_free(run);
        } else {
                for (unsigned i = 0; i < ELEMENTSOF(hs); i++)
                        close_handle(run, hs[i]);
        }
        sup_rundir_prune(srv);
}

static void collect_done(uv_work_t *w, int status)
{
        struct sup_run *run = w->data;
        (void)status;
        if (run->collect_r < 0 && !run->failed) {
                log_error("run %s: %s", run->id, run->collect_err.msg);
                run_fail(run, run->collect_err.msg);
        }
        if (run->failed) {
                log_warn("run %s: sandbox failed: %s", run->id, run->sandbox_error);
                if (run->client)
                        sup_client_error(run->client, "sandbox_failed", run->sandbox_error, NULL, run->request_id);
        } else {
                struct proto_msg m = { .type = PROTO_RUN_RESULT };
                build_result(run, &m.u.run_result);
                log_info("run %s: %s%s%s in %" PRIu64 " ms", run->id, m.u.run_result.status,
                         m.u.run_result.killed ? ", " : "", m.u.run_result.killed ? m.u.run_result.killed : "",
                         m.u.run_result.wall_ms);
                if (run->client)
                        sup_client_send(run->client, &m);
                run->events = m.u.run_result.events; /* may have grown */
                free_result_own(&m.u.run_result);
        }
        run_release(run);
}

static void run_finish(struct sup_run *run)
{
        run->finishing = true;
        run->t_end = now_ms();
        if (run->sample_timer.data) {
                on_sample(&run->sample_timer); /* a last look, for tools shorter than 20 ms */
                (void)uv_timer_stop(&run->sample_timer);
                (void)uv_timer_stop(&run->wall_timer);
        }
        if (run->sync_fd >= 0)
                sync_drain(run);
        if (run->cloned && !run->got_exit && !run->is_killed && !run->failed)
                run_fail(run, "The jail's pid 1 ended without reporting the runner's end");
        if (run->failed && !run->cloned) {
                /* Nothing was started: nothing to collect. */
                sup_rundir_unmount(run->dir);
                collect_done(&run->work, 0);
                return;
        }
        run->work.data = run;
        if (uv_queue_work(run->srv->loop, &run->work, collect_work, collect_done) < 0) {
                collect_work(&run->work);
                collect_done(&run->work, 0);
        }
}

/* ---- clients ---- */

void sup_run_cancel(struct sup_client *c, const struct proto_cancel *cancel)
{
        for (struct sup_run *r = c->srv->runs; r; r = r->next)
                if (r->client == c && cancel->run_id && strcmp(r->id, cancel->run_id) == 0) {
                        run_kill_for(r, POL_KILLED_CANCELLED, "supervisor", 0);
                        return;
                }
        sup_client_error(c, "bad_request", "cancel.run_id: no live run of yours has this id", "cancel.run_id",
                         cancel->request_id);
}

void sup_runs_client_gone(struct sup_server *srv, struct sup_client *c)
{
        for (struct sup_run *r = srv->runs; r; r = r->next)
                if (r->client == c) {
                        r->client = NULL;
                        run_kill_for(r, POL_KILLED_CANCELLED, "supervisor", 0);
                }
}

void sup_runs_kill_all(struct sup_server *srv)
{
        for (struct sup_run *r = srv->runs; r; r = r->next)
                run_kill_for(r, POL_KILLED_CANCELLED, "supervisor", 0);
}
