/* A run's life in the supervisor (DESIGN §4), S-numbers as in main.c's theory of operation.
 * Every handle of a run is closed through uv_close; the run is freed when the last close
 * callback has run and the artifacts work is done.
 *
 * The run's state (run.h), three parts, each moved only by run_to/run_judge/run_end_to, which
 * refuse (and log as an internal error) any move not drawn here:
 *
 *   life (enum sup_run_state), forward one step at a time:
 *
 *     NEW --spawned or a spare taken--> CLONED --handles watched, GO to the child--> WATCHING
 *     WATCHING --READY and attached, verified from outside, GO to pid 1 (S4)--> VERIFIED
 *     VERIFIED --EXEC_OK from pid 1--> EXECUTING --EXIT from pid 1 (status, rusage)--> EXITED
 *
 *   verdict (enum sup_run_verdict), at most once: NO_VERDICT --kill--> KILLED
 *                                                NO_VERDICT --failure--> FAILED
 *     A failure after a kill is the kill's doing and changes nothing (run_fail).
 *
 *   end (enum sup_run_end): LIVE --pid 1 reaped, every stream at EOF, no attach in flight,
 *     audit records drained--> FINISHING (S10: a last sample, artifacts collected)
 *     FINISHING --result or error frame sent--> REPORTED (S11), then the run lets go.
 *     The end may come at any point of the life (a run that fails before its child is watched
 *     finishes from NEW or CLONED), and the life may still take a step while finishing (the
 *     last drain of pid 1's records): the two are independent.
 *
 * What the parts decide: a child is killed (run_kill) only from CLONED; the child is torn down
 * the normal way (teardown) only from WATCHING, else discarded; a run never VERIFIED has no
 * Landlock records to drain; one finishing alive (never EXITED) with no verdict failed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail/verify.h"
#include "lib/list.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "policy/limits.h"
#include "policy/rules.h"
#include "supervisor/run.h"
#include "proto/names.h"

#define SAMPLE_MS 20
/* Room for the supervisor's own events, and for Landlock's, which the runner's (the tool can
 * write to fd 3) must not crowd out. */
#define EVENTS_KEEP (PROTO_EVENTS_MAX - 8 - KAUDIT_EVENTS_MAX)

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

static void run_finish(struct sup_run *run);
static void run_maybe_finish(struct sup_run *run);

/* ---- the state (the diagram above) ---- */

static const char *const state_names[] = { "new", "cloned", "watching", "verified", "executing", "exited" };
static const char *const verdict_names[] = { "none", "killed", "failed" };
static const char *const end_names[] = { "live", "finishing", "reported" };

/* A move not in the diagram is a bug of the supervisor's: said, and not made. */
static bool run_refuse_move(const struct sup_run *run, const char *part, const char *from, const char *to)
{
        log_error("run %s: internal error: its %s cannot go from %s to %s; it stays %s", run->id, part, from, to, from);
        return false;
}

static bool run_to(struct sup_run *run, enum sup_run_state to)
{
        if (to != run->state + 1)
                return run_refuse_move(run, "life", state_names[run->state], state_names[to]);
        run->state = to;
        return true;
}

static bool run_judge(struct sup_run *run, enum sup_run_verdict v)
{
        if (run->verdict != SUP_RUN_NO_VERDICT || v == SUP_RUN_NO_VERDICT)
                return run_refuse_move(run, "verdict", verdict_names[run->verdict], verdict_names[v]);
        run->verdict = v;
        return true;
}

static bool run_end_to(struct sup_run *run, enum sup_run_end to)
{
        if (to != run->end + 1)
                return run_refuse_move(run, "end", end_names[run->end], end_names[to]);
        run->end = to;
        return true;
}

/* ---- small helpers ---- */

/* Time since GO; what happens before it (the capability decisions) is at 0. */
static uint64_t run_ms(const struct sup_run *run)
{
        return run->t0 ? now_ms() - run->t0 : 0;
}

/* Run ids sort by creation: UTC time to the microsecond, strictly increasing within this
 * supervisor (retention keeps the newest by name), then 64 random bits so that an id cannot
 * be guessed by another local user (run directories are reachable, not listable). */
static void make_run_id(char *out, size_t size)
{
        static uint64_t last_us;
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
        if (us <= last_us)
                us = last_us + 1;
        last_us = us;
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                rnd ^= us * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
        time_t t = (time_t)(us / 1000000u);
        struct tm tm;
        gmtime_r(&t, &tm);
        char day[24];
        strftime(day, sizeof(day), "%Y%m%dT%H%M%S", &tm);
        snprintf(out, size, "%s%06u-%016" PRIx64, day, (unsigned)(us % 1000000u), rnd);
}

static void flush_output(struct sup_run *run);

/* Every event is streamed to the client as it is recorded, after what the tool wrote before
 * it (run_request.stream_output). */
static void stream_event(struct sup_run *run, const struct proto_event *e)
{
        if (!run->client)
                return;
        flush_output(run);
        struct proto_msg m = { .type = PROTO_RUN_EVENT };
        m.u.run_event.request_id = run->request_id;
        m.u.run_event.run_id = run->id;
        m.u.run_event.event = *e;
        sup_client_send(run->client, &m);
}

/* Appends an event the supervisor itself observed, and streams it to the client. */
void sup_run_event(struct sup_run *run, const char *layer, const char *kind, const char *op, const char *reason,
                   const char *message)
{
        /* The last place is the summary's, and the SUP_RESULT_NOTES before it the end's. */
        if (run->events.n >= PROTO_EVENTS_MAX - 1 - (run->end != SUP_RUN_LIVE ? 0 : SUP_RESULT_NOTES)) {
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
        stream_event(run, e);
}

static void run_kill(struct sup_run *run)
{
        if (run->copy_pending)
                atomic_store(&run->copies->cancel, true);
        if (sup_run_reached(run, SUP_RUN_CLONED) && !run->reaped && run->jp.pidfd >= 0)
                (void)pidfd_send_signal(run->jp.pidfd, SIGKILL, NULL, 0);
}

/* The first reason to kill wins; later ones are consequences. */
void sup_run_kill_for(struct sup_run *run, enum pol_reason why, const char *layer, double peak_mb)
{
        if (run->verdict != SUP_RUN_NO_VERDICT)
                return;
        (void)run_judge(run, SUP_RUN_KILLED);
        run->killed = why;
        run->killed_layer = layer;
        run->kill_peak_mb = peak_mb;
        run_kill(run);
}

static void run_fail(struct sup_run *run, const char *msg)
{
        /* After a kill (timeout, cancel, memory...), what fails next is the kill's doing (the
         * cgroup attach of a child that is gone, a verify of a pid 1 that died): the run ends
         * as killed, for the reason that killed it. */
        if (run->verdict == SUP_RUN_KILLED) {
                log_info("run %s: after its kill: %s", run->id, msg);
                return;
        }
        if (run->verdict == SUP_RUN_NO_VERDICT) {
                (void)run_judge(run, SUP_RUN_FAILED);
                snprintf(run->sandbox_error, sizeof(run->sandbox_error), "%s", msg);
        }
        run_kill(run);
}

/* The runner refused what the request gave it (its variables, R6a) before the tool started:
 * the client's error, answered with bad_request and the field, never a sandbox failure. */
static void run_refuse_request(struct sup_run *run, const char *msg, const char *field)
{
        if (run->verdict == SUP_RUN_NO_VERDICT) {
                run->fail_code = "bad_request";
                run->fail_field = field;
        }
        run_fail(run, msg);
}

/* ---- handles ---- */

/* The client's input fds and the trees cloned from them: held only until the jail has them. */
static void run_drop_inputs(struct sup_run *run)
{
        for (size_t i = 0; i < run->n_in_fds; i++)
                (void)close(run->in_fds[i]);
        run->n_in_fds = 0;
        for (uint32_t i = 0; run->inputs && i < run->inputs->n; i++)
                (void)close(run->in_trees[i]);
        free(run->inputs);
        run->inputs = NULL;
        if (run->copies)
                close_reset(&run->copies->ifd);
        free(run->copies);
        run->copies = NULL;
}

static void run_free(struct sup_run *run)
{
        close_reset(&run->egress_fd);
        run_drop_inputs(run);
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
        free(run->variables);
        for (size_t i = 0; i < run->variables_dropped.n; i++)
                proto_schema_free(&proto_variable_dropped_schema,
                                  (struct proto_variable_dropped *)run->variables_dropped.items + i);
        free(run->variables_dropped.items);
        free(run->final_answer);
        proto_strv_free(&run->mechanisms);
        proto_strv_free(&run->caps_requested);
        free(run->source);
        free(run->variables_in);
        proto_strv_free(&run->args);
        proto_strv_free(&run->caps_granted);
        proto_strv_free(&run->caps_denied);
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
void sup_run_track(struct sup_run *run, uv_handle_t *h)
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

/* Output as it comes (run_request.stream_output): what a capture kept and has not yet sent
 * goes to the client as run_output frames, at most PROTO_OUTPUT_CHUNK_MAX bytes each, cut
 * where no character is split. Bounded twice over: only the bytes the capture keeps are ever
 * sent (the run's output cap, so never more than the result carries again), and pieces are
 * gathered for OUTPUT_FLUSH_MS before they go, so a tool that writes a byte at a time makes
 * at most one frame per stream per OUTPUT_FLUSH_MS, not one per byte. A peer that reads
 * none of it meets the bound on replies left unread (proto/stream.h), which these frames count
 * towards as the result does: they add at most the output once more to what it may leave. */
#define OUTPUT_FLUSH_MS 50

static void send_output(struct sup_run *run, struct capture *c, const char *name, bool eof)
{
        /* A capture that is full, or at its stream's end, has nothing more to wait for. */
        bool whole = eof || c->len >= c->cap;
        while (c->sent < c->len) {
                size_t n = c->len - c->sent;
                bool last = n <= PROTO_OUTPUT_CHUNK_MAX;
                if (!last)
                        n = PROTO_OUTPUT_CHUNK_MAX;
                const uint8_t *p = (const uint8_t *)c->buf + c->sent;
                size_t k = last && whole ? n : utf8_complete_len(p, n);
                if (k == 0)
                        return; /* the rest of a character is still to come */
                size_t tl;
                char *text = utf8_sanitize(p, k, &tl);
                if (!text)
                        return; /* out of memory: the result still carries it */
                struct proto_msg m = { .type = PROTO_RUN_OUTPUT };
                m.u.run_output.request_id = run->request_id;
                m.u.run_output.run_id = run->id;
                m.u.run_output.stream = (char *)name;
                m.u.run_output.text = text;
                sup_client_send(run->client, &m);
                free(text);
                c->sent += k;
        }
}

static void flush_output(struct sup_run *run)
{
        if (!run->stream_output || !run->client)
                return;
        if (run->out_timer.data)
                (void)uv_timer_stop(&run->out_timer);
        send_output(run, &run->out, "stdout", run->out_eof);
        send_output(run, &run->err, "stderr", run->err_eof);
}

static void on_out_timer(uv_timer_t *t)
{
        flush_output(t->data);
}

static void on_output(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
        struct sup_run *run = st->data;
        bool is_out = st == (uv_stream_t *)&run->out_pipe;
        struct capture *c = is_out ? &run->out : &run->err;
        if (nread > 0) {
                capture_add(c, buf->base, (size_t)nread);
                if (!run->stream_output || !run->client || c->sent >= c->len)
                        return;
                if (c->len - c->sent >= PROTO_OUTPUT_CHUNK_MAX || c->len >= c->cap)
                        flush_output(run);
                else if (run->out_timer.data && !uv_is_active((uv_handle_t *)&run->out_timer))
                        (void)uv_timer_start(&run->out_timer, on_out_timer, OUTPUT_FLUSH_MS, 0);
                return;
        }
        if (nread < 0) {
                (void)uv_read_stop(st);
                if (is_out)
                        run->out_eof = true;
                else
                        run->err_eof = true;
                flush_output(run); /* its last piece, even a character cut short */
                run_maybe_finish(run);
        }
}

/* Events from the runner are untrusted: strictly decoded, and only the layers that live in
 * the jail may be claimed; time is the supervisor's. */
static bool runner_layer_ok(const char *layer)
{
        switch (proto_layer_from_name(layer)) {
        case PROTO_LAYER_RUNNER:
        case PROTO_LAYER_PYTHON:
        case PROTO_LAYER_PRECHECK:
        case PROTO_LAYER_AUDIT: return true;
        default: return false;
        }
}

/* A runner event's payload (DESIGN §8): the variables the tool left, or its final answer, each
 * only on the event of its kind and only once the tool started (the runner sends them after
 * its last line, or from final_answer); the last of each kind is kept, whether or not the
 * event itself still finds room in the trace. The text is kept as it came, strictly decoded
 * and bounded by the schema: JSON parsing is no business of the supervisor's, and the next
 * run's runner decodes the variables again, strictly, in its jail. NULL, or why the event is
 * malformed. */
static const char *runner_payload(struct sup_run *run, struct proto_runner_event *in)
{
        const struct proto_event *e = &in->event;
        bool vars = proto_event_is(e, PROTO_LAYER_RUNNER, PROTO_KIND_VARIABLES);
        bool answer = proto_event_is(e, PROTO_LAYER_RUNNER, PROTO_KIND_FINAL_ANSWER);
        if ((in->variables || in->variables_dropped.n) && !vars)
                return "variables on an event of another kind";
        if (in->final_answer && !answer)
                return "a final answer on an event of another kind";
        if ((vars && !in->variables) || (answer && !in->final_answer))
                return "a variables or final_answer event without its payload";
        if ((vars || answer) && !run->tool_started)
                return "variables or a final answer before the tool started";
        if (vars) {
                free(run->variables);
                for (size_t i = 0; i < run->variables_dropped.n; i++)
                        proto_schema_free(&proto_variable_dropped_schema,
                                          (struct proto_variable_dropped *)run->variables_dropped.items + i);
                free(run->variables_dropped.items);
                run->variables = in->variables;
                run->variables_dropped = in->variables_dropped;
                in->variables = NULL;
                memset(&in->variables_dropped, 0, sizeof(in->variables_dropped));
        } else if (answer) {
                free(run->final_answer);
                run->final_answer = in->final_answer;
                in->final_answer = NULL;
        }
        return NULL;
}

/* A warm jail's runner has imported the data stack and waits (R6w): no clock runs for it
 * until a run takes it (run_take). */
static void warm_waiting(struct sup_run *run)
{
        run->warm = SUP_WARM_WAITING;
        (void)uv_timer_stop(&run->wall_timer);
        log_info("run %s: a warm jail, waiting (%" PRIu64 " ms to build)", run->id, run_ms(run));
        sup_warm_kick(run->srv);
}

/* S6: one of the runner's events on fd 3. */
static void runner_event(struct sup_run *run, struct proto_msg *m)
{
        struct proto_event *in = &m->u.runner_event.event;
        bool first = !run->runner_spoke; /* the first frame on fd 3 */
        run->runner_spoke = true;
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
        stream_event(run, e);
        /* Before "started" the runner alone writes here; a refusal then (a layer it found
         * not in force, R6; the request's variables, R6a) means the sandbox or the request
         * failed, not the tool. Its word that the layers are in force counts only as its
         * first event, sent before it read a byte of the request's (R6): a later one may come
         * from code that has parsed them. */
        enum proto_event_kind kind = proto_layer_from_name(e->layer) == PROTO_LAYER_RUNNER
                                             ? proto_kind_from_name(e->kind)
                                             : PROTO_KIND_UNKNOWN;
        if (first && kind == PROTO_KIND_IN_FORCE)
                run->layers_in_force = true;
        else if (kind == PROTO_KIND_STARTED)
                run->tool_started = true;
        else if (kind == PROTO_KIND_WARM_READY && run->warm == SUP_WARM_BUILDING && run->layers_in_force)
                warm_waiting(run);
        else if (kind == PROTO_KIND_REFUSED && !run->tool_started && e->op && strcmp(e->op, "variables") == 0)
                run_refuse_request(run, e->message ? e->message : "The runner refused the request's variables",
                                   "run_request.variables");
        else if (kind == PROTO_KIND_REFUSED && !run->tool_started)
                run_fail(run, e->message ? e->message : "The runner refused to run the tool");
}

static void events_broken(struct sup_run *run, const char *why)
{
        char msg[512];
        run->ev_broken = true;
        sup_run_event(run, "supervisor", "malformed_event", NULL, NULL,
                      POL_REASON(msg, sizeof(msg), RUNNER_EVENT_MALFORMED, why));
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
                const char *bad = runner_payload(run, &m.u.runner_event);
                if (bad) {
                        events_broken(run, bad);
                        proto_msg_free(&m);
                        return;
                }
                runner_event(run, &m);
                proto_msg_free(&m);
        }
}

/* ---- the sync socket (S3-S8) ---- */

/* WATCHING -> VERIFIED waits for two facts in either order: pid 1's READY and the cgroup
 * attach. A run that failed is not verified; a killed one may still be (as before its kill
 * took: the kill ends it the normal way). */
static bool may_verify(const struct sup_run *run)
{
        return run->ready && run->attached && run->state == SUP_RUN_WATCHING && run->verdict != SUP_RUN_FAILED;
}

/* S4: pid 1 verified from /proc (jail/verify.c) and Landlock's ABI checked (kaudit.c), then GO. */
static void on_verified(struct sup_run *run)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct jail_expect x = { .host_uid = run->jp.uid,
                                 .direct = run->srv->cfg.direct,
                                 .keeps_bounding = run->srv->cfg.direct && run->srv->cfg.rootless,
                                 .rlimits = &run->rl,
                                 .cgroup = &run->jp.cg };
        if (jail_verify_parent(run->jp.pid, &x, &run->mechanisms, &err) < 0 || sup_kaudit_verified(run, &err) < 0) {
                run_fail(run, err.msg);
                return;
        }
        (void)run_to(run, SUP_RUN_VERIFIED);
        struct jail_msg go = { .kind = JAIL_MSG_GO };
        if (send(run->jp.sync_fd, &go, sizeof(go), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(go))
                run_fail(run, "Failed to start the runner: the jail's pid 1 is gone");
}

/* One record, and the fd it carries if any (only NOTIFY and ARTIFACTS may carry one): its
 * length, or -errno (-EBADMSG: a record cut, or with more than one fd, closed). */
static ssize_t sync_recv(int sync_fd, struct jail_msg *m, int *fd)
{
        size_t n_fds;
        *fd = -1;
        return fd_recv_fds(sync_fd, m, sizeof(*m), fd, 1, &n_fds, MSG_DONTWAIT, NULL);
}

/* A GO that could not be sent (the child gone: EPIPE): the child's ERROR record, if it sent
 * one before it exited, is what the run failed of; it replaces err's message. Other records
 * before it (PREPARED, LANDLOCK) are passed over: the run ends here. */
static void child_error(struct sup_run *run, struct anvil_err *err)
{
        struct jail_msg m;
        int fd;
        for (int i = 0; i < 8; i++) {
                ssize_t n = sync_recv(run->jp.sync_fd, &m, &fd);
                close_reset(&fd);
                if (n != (ssize_t)sizeof(m))
                        return;
                m.msg[sizeof(m.msg) - 1] = 0;
                if (m.kind == JAIL_MSG_ERROR && m.msg[0]) {
                        anvil_err_set(err, err->code, "%s", m.msg);
                        return;
                }
        }
}

/* S3-S8: the child's and pid 1's records on the sync socket: ERROR and LANDLOCK (S3), READY (S4),
 * EXEC_OK (S5), NOTIFY (S6a), EXIT (S8). */
static void sync_drain(struct sup_run *run)
{
        for (;;) {
                struct jail_msg m;
                int fd;
                ssize_t n = sync_recv(run->jp.sync_fd, &m, &fd);
                if (n == -EBADMSG)
                        n = 0; /* malformed, below */
                else if (n <= 0)
                        return;
                /* Only two records carry an fd: NOTIFY from pid 1 once the runner exec'd, and
                 * ARTIFACTS from the child of a rootless supervisor, once. */
                if (fd >= 0 && m.kind == JAIL_MSG_ARTIFACTS && n == (ssize_t)sizeof(m) && run->srv->cfg.rootless &&
                    run->art_fd < 0 && !run->ready) {
                        run->art_fd = fd;
                        fd = -1;
                        continue;
                }
                if (fd >= 0 && (m.kind != JAIL_MSG_NOTIFY || n != (ssize_t)sizeof(m) ||
                                !sup_run_reached(run, SUP_RUN_EXECUTING))) {
                        close_reset(&fd); /* an fd where none belongs */
                }
                if (n != (ssize_t)sizeof(m)) {
                        run_fail(run, "The jail's pid 1 sent a malformed record");
                        return;
                }
                m.msg[sizeof(m.msg) - 1] = 0;
                switch (m.kind) {
                case JAIL_MSG_ERROR: run_fail(run, m.msg[0] ? m.msg : "Building the jail failed"); break;
                case JAIL_MSG_READY:
                        run->ready = true;
                        if (may_verify(run))
                                on_verified(run);
                        break;
                case JAIL_MSG_PREPARED: /* the child's run-independent root: nothing to do */ break;
                case JAIL_MSG_LANDLOCK: /* C10: what is in force, checked at S4 (kaudit.c) */
                        sup_kaudit_jail_report(run, &m);
                        break;
                case JAIL_MSG_EXEC_OK:
                        if (run->state == SUP_RUN_VERIFIED) /* else a record out of turn: ignored */
                                (void)run_to(run, SUP_RUN_EXECUTING);
                        break;
                case JAIL_MSG_NOTIFY: {
                        /* S6a: the filter seen from outside, its listener watched, then the
                         * tool may start; anything less refuses the run. */
                        struct anvil_err err = ANVIL_ERR_INIT;
                        if (fd < 0)
                                break; /* no listener: the runner refuses to run the tool (R6) */
                        if (sup_notify_start(run, fd, &err) < 0 || sup_notify_verify(run, &err) < 0) {
                                run_fail(run, err.msg);
                                break;
                        }
                        struct jail_msg ok = { .kind = JAIL_MSG_NOTIFY_OK };
                        if (send(run->jp.sync_fd, &ok, sizeof(ok), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(ok))
                                run_fail(run, "Failed to confirm the seccomp filter: the jail's pid 1 is gone");
                        break;
                }
                case JAIL_MSG_EXIT:
                        if (run->state == SUP_RUN_EXECUTING) { /* the first EXIT after EXEC_OK */
                                (void)run_to(run, SUP_RUN_EXITED);
                                run->wait_status = m.status;
                                run->rusage_cpu_us = m.utime_us + m.stime_us;
                                run->rusage_maxrss_kb = m.maxrss_kb;
                                run->tmp_full = m.tmp_full;
                        }
                        break;
                case JAIL_MSG_ARTIFACTS:
                        run_fail(run, "The jail's child sent an artifacts tmpfs where none belongs");
                        break;
                default: run_fail(run, "The jail's pid 1 sent an unknown record");
                }
        }
}

static void on_sync(uv_poll_t *p, int status, int events)
{
        (void)status;
        (void)events;
        sync_drain(p->data);
}

/* S9: pid 1 reaped; the end waits for the pipes' end of file and the audit drain. */
static void on_pidfd(uv_poll_t *p, int status, int events)
{
        (void)status;
        (void)events;
        struct sup_run *run = p->data;
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        if (waitid(P_PIDFD, (id_t)run->jp.pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
                return;
        run->reaped = true;
        run->pid1_code = si.si_code;
        run->pid1_status = si.si_status;
        (void)uv_poll_stop(p);
        sync_drain(run);
        run_maybe_finish(run);
}

/* ---- limits: the wall clock and the memory sampler (S7) ---- */

/* S7: the wall clock's kill.
 * libuv's timers count from the loop's own clock, cached at the start of the loop's turn (and
 * maybe coarse): the turn that starts a run also writes its directory and inputs, so a timer
 * started then could fire before wall_s had passed since t0 (a 2 s run killed for its timeout
 * at 1999 ms). The loop's clock is brought up to date before the timer starts, and the kill
 * waits until wall_s has passed on t0's own clock. */
static void on_wall(uv_timer_t *t)
{
        struct sup_run *run = t->data;
        uint64_t wall = run->lim.wall_s * 1000, spent = now_ms() - run->t0;
        if (spent < wall) {
                (void)uv_timer_start(t, on_wall, wall - spent, 0);
                return;
        }
        sup_run_kill_for(run, POL_KILLED_TIMEOUT, "supervisor", 0);
}

/* The tool's resident memory: anon + shmem of the run's cgroup, or without a cgroup the
 * resident size of the jail's pid 1 and its direct children (read from /proc). */
static uint64_t sample_memory(struct sup_run *run)
{
        if (run->jp.cg.mode != JAIL_CG_NONE) {
                uint64_t bytes;
                return jail_cgroup_read_memory(&run->jp.cg, &bytes) == 0 ? bytes : 0;
        }
        char p[96], buf[4096];
        snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)run->jp.pid, (int)run->jp.pid);
        if (fd_read_small(p, buf, sizeof(buf), FD_READ_PREFIX, NULL) <= 0)
                return 0;
        uint64_t total = 0;
        long page = sysconf(_SC_PAGESIZE);
        for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n")) {
                char sp[64], st[128];
                snprintf(sp, sizeof(sp), "/proc/%s/statm", tok);
                if (fd_read_small(sp, st, sizeof(st), FD_READ_PREFIX, NULL) <= 0)
                        continue;
                unsigned long long size, resident;
                if (sscanf(st, "%llu %llu", &size, &resident) == 2)
                        total += resident * (uint64_t)page;
        }
        return total;
}

/* S7: the memory sampler, every 20 ms. */
static void on_sample(uv_timer_t *t)
{
        struct sup_run *run = t->data;
        double mb = (double)sample_memory(run) / MB;
        if (mb > run->peak_mb)
                run->peak_mb = mb;
        if (mb > (double)run->lim.memory_mb)
                sup_run_kill_for(run, POL_KILLED_MEMORY, "supervisor", run->peak_mb);
}

/* S0, the cold path: the attach on the thread pool.
 * ---- the cgroup attach (S2) ----
 * Moving a task into a cgroup v1 hierarchy waits for an RCU grace period (the write side of
 * cgroup_threadgroup_rwsem): 10-15 ms here, longer than building the jail. So it runs on the
 * thread pool while the child builds its root, and pid 1 is verified (membership included)
 * and let go only once both are done. */

static void attach_work(uv_work_t *w)
{
        struct sup_run *run = w->data;
        run->attach_r = sup_jailproc_attach(&run->jp, &run->attach_err);
}

static void attach_done(uv_work_t *w, int status)
{
        struct sup_run *run = w->data;
        run->attach_pending = false;
        if (status < 0 || run->attach_r < 0)
                run_fail(run, status < 0 ? "The cgroup attach was cancelled" : run->attach_err.msg);
        else
                run->attached = true;
        if (may_verify(run))
                on_verified(run);
        run_maybe_finish(run);
}

/* ---- start (S1-S2) ---- */

static int open_pipe(struct sup_run *run, uv_pipe_t *p, int fd, struct anvil_err *err)
{
        int r = uv_pipe_init(run->srv->loop, p, 0);
        if (r < 0) {
                (void)close(fd);
                return anvil_err_set(err, -r, "Failed to set up a pipe: %s", uv_strerror(r));
        }
        sup_run_track(run, (uv_handle_t *)p);
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
        /* A warm jail's runner reads two specs (R6w): the pipe ends after the second. */
        if (--run->spec_writes == 0 && run->warm != SUP_WARM_BUILDING && run->warm != SUP_WARM_WAITING)
                close_handle(run, (uv_handle_t *)&run->in_pipe);
}

static int send_spec(struct sup_run *run, struct anvil_err *err)
{
        struct proto_msg m = { .type = PROTO_RUN_SPEC };
        struct proto_run_spec *s = &m.u.run_spec;
        s->source = run->source;
        s->variables = run->variables_in;
        s->save_source = run->save_source;
        s->args = run->args;                      /* checked at run_begin (pol_args_check) */
        s->warm = run->warm == SUP_WARM_BUILDING; /* the first half: the run's comes at its take */
        /* The roots the Python layers judge paths by, from the table of the jail's paths
         * (policy/jail_paths.h, its audit column): the tool's data (inputs, artifacts), and the
         * private /tmp as scratch besides; direct, where they are on the host. */
        _cleanup_free_ struct pol_jail_roots *roots = malloc(sizeof(*roots));
        if (!roots)
                return anvil_err_set(err, ENOMEM, "Failed to allocate the run spec's roots");
        int rr = pol_jail_roots(run->srv->cfg.direct ? run->jail_dir : NULL, roots);
        if (rr < 0)
                return anvil_err_sys(err, -rr, "Failed to place the run's roots");
        s->workdir = (char *)roots->workdir;
        s->read_roots = (struct proto_strv){ (char **)roots->read, roots->n_read };
        s->write_roots = (struct proto_strv){ (char **)roots->write, roots->n_write };
        s->scratch = (char *)roots->scratch;
        s->direct = run->srv->cfg.direct;
        s->capabilities_granted = run->caps_granted;
        s->platform_processor = run->srv->have_platform_processor ? run->srv->platform_processor : NULL;
        s->platform_file = run->srv->have_platform_processor ? run->srv->platform_file : NULL;
        s->test_no_python_layers = run->srv->cfg.test_no_python_layers || run->opts.python_layers_off;
        s->test_break = (char *)run->opts.test_break;
        if (!s->test_break && run->srv->cfg.test_skip_seccomp)
                s->test_break = "seccomp";
        if (!s->test_break && run->srv->cfg.test_no_exit_flush)
                s->test_break = "exit-flush";
        /* What the probed tier promises, the runner refuses to go without; the probe's own
         * run finds out, and promises nothing. */
        s->expect_seccomp =
                !sup_run_is_probe(run) && !run->srv->cfg.test_skip_seccomp && strstr(run->srv->tier, "seccomp") != NULL;
        /* What the child applies at C10; the runner checks it is enforced (R6). A test build's
         * --test-skip-landlock leaves it unapplied and still says so here, for that check. */
        s->landlock_abi = sup_run_is_probe(run) ? 0 : (uint64_t)run->srv->jail.landlock_abi; /* the probe finds out */
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
        if (r == 0)
                run->spec_writes++;
        if (r < 0) {
                free(buf);
                free(w);
                return anvil_err_set(err, -r, "Failed to send the run spec: %s", uv_strerror(r));
        }
        return 0;
}

/* A run's files that the state directory could not take: the client is told it is full
 * (code unavailable: the supervisor's condition, not the request's nor the sandbox's). */
static int rundir_failed(struct sup_run *run, int r, struct anvil_err *err)
{
        if (r != -ENOSPC && r != -EDQUOT)
                return r;
        run->fail_code = "unavailable";
        return anvil_err_set(err, -r,
                             "The supervisor's state directory is full: the run's files could not be stored (%s)",
                             strerror(-r));
}

/* A run granted network: the broker's O_PATH fd of its egress socket itself, sent last among
 * the input trees, for pid 1 to hold and the relay to connect through (JAIL_FD_EGRESS; no
 * mount: the installed proxy's socket is in its unit's own mount namespace, whose mounts
 * cannot be cloned). Root opens nothing through it and follows no path of the proxy's;
 * pol_run_fds_check saw that it is a socket. */
static int egress_tree(struct sup_run *run, struct anvil_err *err)
{
        if (run->inputs->n >= JAIL_INPUTS_MAX)
                return anvil_err_set(err, E2BIG, "No room for the egress socket among the input trees");
        run->in_trees[run->inputs->n] = TAKE_FD(run->egress_fd);
        run->inputs->names[run->inputs->n][0] = 0;
        run->inputs->n++;
        return 0;
}

/* S1-S2: the run's directory, a jail child (a spare, or cloned now), the run's cgroup limits
 * and artifacts, pipes and handles, GO. Until GO is sent a failure discards the child (and
 * the run's directory) when the run ends, at once; after it, the only way on is the normal
 * end of a run (pidfd readable, pipes at end of file). */
static int run_spawn_jail(struct sup_run *run, struct anvil_err *err);
static void copy_work(uv_work_t *w);
static void copy_done(uv_work_t *w, int status);

/* S1: the run's files. The inputs to copy from fds are copied on the thread pool (a copy of
 * gigabytes takes seconds, and the loop serves every other run meanwhile); the jail is taken
 * once they are in (copy_done). */
static int run_spawn(struct sup_run *run, const struct proto_run_request *req, struct anvil_err *err)
{
        struct sup_server *srv = run->srv;
        int r;
        /* The files first: a state directory that cannot take them costs no jail. Marked in
         * flight before the directory exists (rundir.c); run->dir is set once it is marked,
         * and says so to rundir_end. */
        if (!(run->copies = calloc(1, sizeof(*run->copies))))
                return anvil_err_set(err, ENOMEM, "Out of memory");
        run->copies->ifd = -1;
        run->copies->step_ms = srv->cfg.test_copy_step_ms;
        if ((r = sup_rundir_begin(srv, run->id, err)) < 0 || !(run->inputs = calloc(1, sizeof(*run->inputs))) ||
            (r = sup_rundir_create(srv, run->id, req, run->in_fds, run->inputs, run->in_trees, run->copies, run->dir,
                                   sizeof(run->dir), err)) < 0)
                return run->inputs ? rundir_failed(run, r, err) : anvil_err_set(err, ENOMEM, "Out of memory");
        run->bound_bytes = run->inputs->bound_bytes;
        if (run->copies->n) {
                run->copies->work.data = run;
                if ((r = uv_queue_work(srv->loop, &run->copies->work, copy_work, copy_done)) < 0)
                        return anvil_err_set(err, -r, "Failed to queue the copy of the inputs: %s", uv_strerror(r));
                run->copy_pending = true;
                return 0;
        }
        return run_spawn_jail(run, err);
}

static void copy_work(uv_work_t *w)
{
        sup_rundir_copy(((struct sup_run *)w->data)->copies);
}

/* A run that failed to start: once a child is watched, its end comes the normal way;
 * otherwise now. */
static void run_spawn_failed(struct sup_run *run, const struct anvil_err *err)
{
        log_error("run %s: %s", run->id, err->msg);
        run_fail(run, err->msg);
        if (!sup_run_reached(run, SUP_RUN_WATCHING)) {
                run->reaped = run->out_eof = run->err_eof = run->ev_eof = true;
                run_maybe_finish(run);
        }
}

static void copy_done(uv_work_t *w, int status)
{
        (void)status;
        struct sup_run *run = w->data;
        struct anvil_err err = ANVIL_ERR_INIT;
        run->copy_pending = false;
        if (run->verdict != SUP_RUN_NO_VERDICT) { /* killed while it copied: no jail */
                log_info("run %s: killed while its inputs were copied", run->id);
                run->reaped = run->out_eof = run->err_eof = run->ev_eof = true;
                run_maybe_finish(run);
                return;
        }
        int r = run->copies->r;
        if (r < 0)
                err = run->copies->err;
        else
                r = run_spawn_jail(run, &err);
        if (r < 0) {
                if (r == -ENOSPC || r == -EDQUOT)
                        (void)rundir_failed(run, r, &err);
                run_spawn_failed(run, &err);
                return;
        }
        log_info("run %s: inputs copied; its jail's uid %u", run->id, (unsigned)run->jp.uid);
}

/* The run's rlimits: set by the child at C7 (cold), or from outside at the take (warm.c). */
static struct jail_rlimits run_rlimits(const struct sup_run *run)
{
        uint64_t cap = run->lim.memory_mb * 1024 * 1024;
        return (struct jail_rlimits){
                .cpu_s = run->lim.cpu_s,
                /* Without a memory cgroup, RLIMIT_AS is the kernel's bound: address space, not
                 * memory, so it leaves room for the interpreter's and BLAS's mappings; the
                 * sampler still kills at the cap. */
                .as_bytes = run->jp.cg.mode == JAIL_CG_NONE ? cap + (2048ull << 20) : 0,
                .fsize_bytes = run->lim.files_bytes,
                /* With a pids cgroup, pids.max is the limit and pids.events counts the forks it
                 * refuses; RLIMIT_NPROC, which fork checks first, is a backstop at twice it. */
                /* Direct and rootless: not set (rlimit.c), and the blast radius says so. */
                .nproc = run->srv->cfg.direct && run->srv->cfg.rootless ? 0
                         : jail_cgroup_has(&run->jp.cg, JAIL_CG_PIDS)   ? run->lim.pids * 2
                                                                        : run->lim.pids,
                .nofile = JAIL_NOFILE,
        };
}

/* The cgroup's hard limit is a backstop above the cap: the 20 ms sampler kills at the cap and
 * reports the peak it saw; the kernel kills only a tool that outruns it. */
static uint64_t run_backstop(const struct sup_run *run)
{
        uint64_t cap = run->lim.memory_mb * 1024 * 1024;
        return cap + (cap / 4 > (64u << 20) ? cap / 4 : (64u << 20));
}

/* A warm jail's rlimits until its take: each at the maximum a run may ask (RLIMIT_CPU with
 * room for the imports besides), since prlimit lowers them from outside at the take
 * (warm.c) but may not raise a hard limit: the supervisor keeps no CAP_SYS_RESOURCE. Until
 * then only our code runs in it, under the cgroup's default limits. */
#define WARM_IMPORT_CPU_S 60

static struct jail_rlimits warm_rlimits(struct sup_run *run)
{
        const struct pol_limits_table *t = &run->srv->cfg.limits;
        struct proto_limits shape = run->lim;
        run->lim.cpu_s = t->r[PROTO_LIMIT_CPU_S].max + WARM_IMPORT_CPU_S;
        run->lim.memory_mb = t->r[PROTO_LIMIT_MEMORY_MB].max;
        run->lim.pids = t->r[PROTO_LIMIT_PIDS].max;
        struct jail_rlimits rl = run_rlimits(run);
        run->lim = shape;
        return rl;
}

/* S1 (the rest)-S2: a jail child (a spare, or cloned now), the run's cgroup limits and
 * artifacts, pipes and handles, GO. */
static int run_spawn_jail(struct sup_run *run, struct anvil_err *err)
{
        struct sup_server *srv = run->srv;
        int r;
        for (size_t i = 0; i < run->n_in_fds; i++)
                (void)close(run->in_fds[i]);
        run->n_in_fds = 0;
        if (sup_pool_take(srv, &run->jp))
                run->attached = true;
        else if ((r = sup_jailproc_spawn(srv, &run->jp, err)) < 0)
                return r;
        else if (run->jp.cg.mode == JAIL_CG_NONE)
                run->attached = true;
        else {
                run->attach_work.data = run;
                if ((r = uv_queue_work(srv->loop, &run->attach_work, attach_work, attach_done)) < 0) {
                        sup_jailproc_discard(srv, &run->jp);
                        return anvil_err_set(err, -r, "Failed to queue the cgroup attach: %s", uv_strerror(r));
                }
                run->attach_pending = true;
        }
        /* From here the child is the run's: it goes by kill and the normal end. */
        (void)run_to(run, SUP_RUN_CLONED);
        if ((r = jail_cgroup_set_limits(&run->jp.cg, run_backstop(run), run->lim.pids, err)) < 0)
                return r;
        if (srv->cfg.direct) {
                r = sup_rundir_direct(run->dir, run->jp.uid, srv->cfg.rootless ? getegid() : (gid_t)run->jp.uid,
                                      srv->font_cache_dir, run->jail_dir, sizeof(run->jail_dir), &run->art_fd, err);
                if (r < 0)
                        return rundir_failed(run, r, err);
        } else if (!srv->cfg.rootless &&
                   (r = sup_rundir_artifacts_mount(run->jp.uid, run->lim.files_bytes, &run->art_fd, err)) < 0)
                return r;
        run->rl = run->warm == SUP_WARM_BUILDING ? warm_rlimits(run) : run_rlimits(run);
        /* parent ends: in[1] out[0] er[0] ev[0]; the child's: in[0] out[1] er[1] ev[1] */
        int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 }, ev[2] = { -1, -1 };
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0 ||
            pipe2(ev, O_CLOEXEC) < 0) {
                r = anvil_err_sys(err, errno, "Failed to create the run's pipes");
                int all[] = { in[0], in[1], out[0], out[1], er[0], er[1], ev[0], ev[1] };
                close_reset_many(all, ELEMENTSOF(all));
                return r;
        }
        int child[] = { in[0], out[1], er[1], ev[1] };
        /* open_pipe owns (and on failure closes) the fd it is given. */
        int parent[] = { in[1], out[0], er[0], ev[0] };
        uv_pipe_t *pipes[] = { &run->in_pipe, &run->out_pipe, &run->err_pipe, &run->ev_pipe };
        for (unsigned i = 0; i < ELEMENTSOF(pipes); i++) {
                if ((r = open_pipe(run, pipes[i], parent[i], err)) < 0) {
                        close_reset_many(parent + i + 1, ELEMENTSOF(parent) - i - 1);
                        close_reset_many(child, ELEMENTSOF(child));
                        return r;
                }
        }
        struct uv_loop_s *loop = srv->loop;
        /* Each handle is tracked once initialised, so that run_release closes it. */
        uv_poll_t *polls[] = { &run->sync_poll, &run->pidfd_poll };
        int poll_fds[] = { run->jp.sync_fd, run->jp.pidfd };
        for (unsigned i = 0; i < ELEMENTSOF(polls); i++) {
                if ((r = uv_poll_init(loop, polls[i], poll_fds[i])) < 0) {
                        close_reset_many(child, ELEMENTSOF(child));
                        return anvil_err_set(err, -r, "Failed to watch the jail's child: %s", uv_strerror(r));
                }
                sup_run_track(run, (uv_handle_t *)polls[i]);
        }
        (void)uv_timer_init(loop, &run->wall_timer);
        sup_run_track(run, (uv_handle_t *)&run->wall_timer);
        (void)uv_timer_init(loop, &run->sample_timer);
        sup_run_track(run, (uv_handle_t *)&run->sample_timer);
        (void)uv_timer_init(loop, &run->out_timer);
        sup_run_track(run, (uv_handle_t *)&run->out_timer);
        /* Watching starts before GO: if GO cannot be delivered, the kill that follows ends
         * the child, and its end arrives the normal way. */
        uv_update_time(loop); /* the wall clock's timer counts from here (on_wall) */
        run->t0 = now_ms();
        (void)uv_read_start((uv_stream_t *)&run->out_pipe, on_alloc, on_output);
        (void)uv_read_start((uv_stream_t *)&run->err_pipe, on_alloc, on_output);
        (void)uv_read_start((uv_stream_t *)&run->ev_pipe, on_alloc, on_events);
        (void)uv_poll_start(&run->pidfd_poll, UV_READABLE, on_pidfd);
        (void)uv_poll_start(&run->sync_poll, UV_READABLE, on_sync);
        (void)uv_timer_start(&run->wall_timer, on_wall, run->lim.wall_s * 1000, 0);
        (void)uv_timer_start(&run->sample_timer, on_sample, SAMPLE_MS, SAMPLE_MS);
        (void)run_to(run, SUP_RUN_WATCHING);

        struct jail_go go = { .kind = JAIL_MSG_GO, .rlimits = run->rl, .tmp_bytes = run->lim.files_bytes };
        go.skip_landlock = run->opts.test_break && strcmp(run->opts.test_break, "landlock") == 0;
        go.artifacts_bytes = run->lim.files_bytes;
        if (run->egress && (r = egress_tree(run, err)) < 0) {
                close_reset_many(child, ELEMENTSOF(child));
                return r;
        }
        go.egress = run->egress;
        go.n_inputs = run->inputs->n;
        /* Rootless: the child makes the artifacts tmpfs (ARTIFACTS comes back); a placeholder
         * goes in its place among the GO fds. */
        _cleanup_close_ int placeholder = -EBADF;
        if (srv->cfg.rootless || srv->cfg.direct) {
                go.make_artifacts = !srv->cfg.direct;
                placeholder = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (placeholder < 0) {
                        close_reset_many(child, ELEMENTSOF(child));
                        return anvil_err_sys(err, errno, "Failed to open /dev/null");
                }
        }
        snprintf(go.inputs_dir, sizeof(go.inputs_dir), "%s/inputs", run->dir);
        snprintf(go.run_dir, sizeof(go.run_dir), "%s", run->jail_dir);
        int fds[JAIL_GO_FDS] = { child[0], child[1], child[2], child[3],
                                 srv->cfg.rootless || srv->cfg.direct ? placeholder : run->art_fd };
        r = jail_contain_go(run->jp.sync_fd, &go, fds, err);
        close_reset_many(child, ELEMENTSOF(child));
        if (r < 0)
                child_error(run, err); /* why the child is gone, rather than the send that found it */
        if (r == 0 && go.n_inputs)
                r = jail_contain_inputs(run->jp.sync_fd, run->inputs, run->in_trees, err);
        run_drop_inputs(run);
        if (r < 0)
                return r;
        return send_spec(run, err);
}

/* DESIGN §7: granted = requested ∩ approved ∩ server policy, each decision on the record. */
/* The supervisor's word on network: granted only with an egress socket (run_request.egress),
 * which it can bind into a jail of its own mount namespace alone: not direct (no namespace:
 * the tool would be on the host's network) nor rootless (the socket's mount is root's mount
 * namespace's, which a rootless supervisor cannot clone). Without one, policy/capabilities.c's,
 * today's denial ("... until egress through the broker exists"): the broker sends none yet. */
static enum pol_why cap_egress(enum pol_cap c)
{
        return c == POL_CAP_NETWORK ? POL_WHY_NONE : pol_cap_server_policy(c);
}
static enum pol_why cap_egress_direct(enum pol_cap c)
{
        return c == POL_CAP_NETWORK ? POL_WHY_CAP_EGRESS_DIRECT : pol_cap_server_policy(c);
}
static enum pol_why cap_egress_rootless(enum pol_cap c)
{
        return c == POL_CAP_NETWORK ? POL_WHY_CAP_EGRESS_ROOTLESS : pol_cap_server_policy(c);
}

static void resolve_caps(struct sup_run *run, const struct proto_strv *approved)
{
        const struct proto_strv *req = &run->caps_requested;
        struct pol_caps granted;
        enum pol_why why[PROTO_CAPS_MAX];
        const struct sup_server *srv = run->srv;
        pol_cap_policy_fn server = run->egress_fd < 0  ? pol_cap_server_policy /* today's denial */
                                   : srv->cfg.direct   ? cap_egress_direct
                                   : srv->cfg.rootless ? cap_egress_rootless
                                                       : cap_egress;
        pol_caps_resolve((const char *const *)req->items, req->n, (const char *const *)approved->items, approved->n,
                         server, &granted, why);
        run->egress = granted.granted[POL_CAP_NETWORK];
        if (!run->egress)
                close_reset(&run->egress_fd);
        for (size_t i = 0; i < req->n; i++) {
                char msg[256];
                const char *name = req->items[i];
                if (why[i] == POL_WHY_NONE) {
                        (void)proto_strv_push(&run->caps_granted, name);
                        POL_REASON(msg, sizeof(msg), CAP_GRANTED, name);
                        sup_run_event(run, "policy", "capability_granted", name, NULL, msg);
                } else {
                        (void)proto_strv_push(&run->caps_denied, name);
                        POL_REASON(msg, sizeof(msg), CAP_DENIED, name, pol_why_text(why[i]));
                        sup_run_event(run, "policy", "capability_denied", name, pol_why_text(why[i]), msg);
                }
        }
}

bool sup_run_is_live(struct sup_server *srv, const char *run_id)
{
        for (struct sup_run *r = srv->runs; r; r = r->next)
                if (strcmp(r->id, run_id) == 0)
                        return true;
        return false;
}

/* A run for a client (c, whose errors it gets) or for the supervisor itself (o->done). */
/* The inputs passed as fds, checked at request time (fstat, never a path): each named by one
 * input, a regular file or a directory (a directory only where it can be bind-mounted), and
 * the regular files' sizes within --max-input-bytes. A directory is not measured: it is
 * bind-mounted, never copied, so it costs the supervisor neither disk nor memory, and a walk
 * of it as root would read what its client may not (docs/cli.md). */
static int inputs_check(const struct sup_server *srv, const struct proto_run_request *req, const int *fds, size_t n_fds,
                        struct anvil_err *err)
{
        static const char *const field = "run_request.inputs";
        unsigned modes[PROTO_INPUTS_MAX];
        uint64_t sizes[PROTO_INPUTS_MAX], total = 0;
        char msg[512];
        for (size_t i = 0; i < n_fds; i++) {
                struct stat st;
                if (fstat(fds[i], &st) < 0)
                        return anvil_err_sys(err, errno, "%s: an input's fd cannot be examined", field);
                modes[i] = st.st_mode;
                sizes[i] = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
        }
        int r = pol_run_fds_check(req, modes, n_fds, err);
        if (r < 0)
                return r;
        const struct proto_input *in = req->inputs.items;
        for (size_t i = 0; i < req->inputs.n; i++) {
                if (!in[i].fd.set)
                        continue;
                size_t k = (size_t)in[i].fd.v;
                /* The fd is the client's proof that it may read the file: one opened O_PATH or
                 * write-only proves nothing, and a clone of its mount would expose what the
                 * client could not read. */
                int fl = fcntl(fds[k], F_GETFL);
                if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY)
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), INPUT_FD_NOT_READ, field, i, in[i].name));
                /* A copy reads the fd on the loop: never from a file system whose server is a
                 * process that could stall it (rundir.c input_from_fd decides the same way). */
                struct statfs sf;
                bool copied = srv->cfg.rootless || srv->cfg.direct || !(modes[k] & S_IROTH);
                if (S_ISREG(modes[k]) && copied && (fstatfs(fds[k], &sf) < 0 || sf.f_type == FUSE_SUPER_MAGIC))
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), INPUT_FD_FUSE, field, i, in[i].name));
                if (S_ISDIR(modes[k]) && (srv->cfg.rootless || srv->cfg.direct))
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), INPUT_DIR_UNSUPPORTED, field, i, in[i].name,
                                                        srv->cfg.direct ? "direct" : "rootless"));
                total += sizes[k];
        }
        if (total > srv->cfg.max_input_bytes)
                return anvil_err_set(err, EFBIG, "%s",
                                     POL_REASON(msg, sizeof(msg), INPUT_TOO_LARGE, field, (unsigned long long)total,
                                                (unsigned long long)srv->cfg.max_input_bytes));
        return 0;
}

/* A warm jail (warm.c) taken by a run whose request fits its shape: the run's own part of the
 * request moves in, its limits are applied from outside, its files written, its clock
 * started, and the second half of the spec sent (R6w). The jail's events so far (in force,
 * seccomp verified) are facts about the run's jail: kept, shown at the take's time (0). */
static int run_take(struct sup_run *run, struct sup_client *c, struct proto_run_request *req,
                    const struct proto_limits *lim, const int *fds, size_t n_fds, struct anvil_err *err)
{
        struct sup_server *srv = run->srv;
        uint64_t built_ms = run_ms(run);
        run->warm = SUP_WARM_TAKEN;
        memset(&run->opts, 0, sizeof(run->opts));
        run->client = c;
        run->counted = true;
        srv->n_runs++;
        run->lim = *lim;
        run->request_id = proto_strdup(req->request_id);
        run->stream_output = req->stream_output && c;
        free(run->source);
        free(run->variables_in);
        run->source = proto_strdup(req->source);
        run->variables_in = proto_strdup(req->variables);
        run->save_source = req->save_source;
        proto_strv_free(&run->args);
        run->args = req->args; /* taken over */
        memset(&req->args, 0, sizeof(req->args));
        run->out.cap = run->err.cap = lim->output_bytes;
        uv_update_time(srv->loop);
        run->t0 = now_ms();
        for (size_t i = 0; i < run->events.n; i++) {
                struct proto_event *e = (struct proto_event *)run->events.items + i;
                e->t_ms = 0;
                stream_event(run, e);
        }
        char msg[200];
        sup_run_event(run, "supervisor", "warm", NULL, NULL,
                      POL_REASON(msg, sizeof(msg), WARM_TAKEN, (unsigned long long)built_ms));
        struct jail_rlimits rl = run_rlimits(run);
        int r = !run->source || (req->variables && !run->variables_in) ? anvil_err_set(err, ENOMEM, "Out of memory")
                                                                       : sup_warm_place(run, req, fds, err);
        run->fd_inputs = n_fds > 0;        /* inputs/ is removed at the end, as the cold path's */
        for (size_t i = 0; i < n_fds; i++) /* taken over */
                (void)close(fds[i]);
        if (r == 0)
                r = jail_cgroup_set_limits(&run->jp.cg, run_backstop(run), run->lim.pids, err);
        if (r == 0 && (r = sup_warm_rlimits(run, &rl, err)) == 0)
                run->rl = rl;
        (void)uv_timer_start(&run->wall_timer, on_wall, run->lim.wall_s * 1000, 0);
        if (r == 0)
                r = send_spec(run, err);
        log_info("run %s: a warm jail taken for %s (uid %u, built %" PRIu64 " ms before)", run->id,
                 c ? c->stream.name : "the supervisor", (unsigned)run->jp.uid, built_ms);
        if (r < 0) {
                log_error("run %s: %s", run->id, err->msg);
                run_fail(run, err->msg); /* it ends the normal way: its child is watched */
        }
        sup_warm_kick(srv);
        return 0;
}

static bool strv_has(const struct proto_strv *v, const char *name)
{
        for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->items[i], name) == 0)
                        return true;
        return false;
}

/* An egress socket comes only with network requested and approved: a socket sent with a run
 * that would not use it is refused, not silently dropped, so that a broker's mistake is seen
 * (docs/egress.md). */
static int egress_check(const struct proto_run_request *req, struct anvil_err *err)
{
        char msg[256];
        if (req->egress.set &&
            !(strv_has(&req->capabilities_requested, "network") && strv_has(&req->capabilities_approved, "network")))
                return anvil_err_set(err, EINVAL, "%s", POL_REASON(msg, sizeof(msg), EGRESS_WITHOUT_NETWORK));
        return 0;
}

static int run_begin(struct sup_server *srv, struct sup_client *c, struct proto_run_request *req,
                     const struct sup_run_opts *o, const int *fds, size_t n_fds, struct anvil_err *err)
{
        struct proto_limits lim;
        char field[128];
        if (pol_limits_resolve(&srv->cfg.limits, &req->limits, &lim, err) < 0 ||
            inputs_check(srv, req, fds, n_fds, err) < 0 || egress_check(req, err) < 0 ||
            pol_args_check(&req->args, "run_request.args", err) < 0) {
                proto_err_field(err, field, sizeof(field));
                if (c)
                        sup_client_error(c, "bad_request", err->msg, field, req->request_id);
                return -EINVAL;
        }
        if (srv->stopping) {
                if (c)
                        sup_client_error(c, "busy", "The supervisor is stopping", NULL, req->request_id);
                return anvil_err_set(err, EBUSY, "The supervisor is stopping");
        }
        /* A run's place is held until its slot is free again (run_leave): one admitted here
         * always finds a slot, a spare's or its own. A warm jail holds a slot of its own, and
         * a place only once a run takes it. */
        bool warm = o && o->warm;
        if (!warm && srv->n_runs >= srv->cfg.max_runs) {
                char msg[96];
                snprintf(msg, sizeof(msg), "All %u run slots are in use; try again later", srv->cfg.max_runs);
                if (c)
                        sup_client_error(c, "busy", msg, NULL, req->request_id);
                return anvil_err_set(err, EBUSY, "%s", msg);
        }
        char cold[200] = "";
        if (!o && srv->cfg.warm && !sup_warm_cold_reason(srv, req, &lim, fds, n_fds, cold, sizeof(cold))) {
                struct sup_run *w = sup_warm_take(srv);
                if (w)
                        return run_take(w, c, req, &lim, fds, n_fds, err);
                POL_REASON(cold, sizeof(cold), WARM_COLD_NONE);
                sup_warm_kick(srv);
        }
        struct sup_run *run = calloc(1, sizeof(*run));
        if (!run) {
                if (c)
                        sup_client_error(c, "internal", "Out of memory", NULL, req->request_id);
                return anvil_err_set(err, ENOMEM, "Out of memory");
        }
        run->srv = srv;
        run->client = c;
        if (o)
                run->opts = *o;
        run->opts.python_layers_off |= req->python_layers_off; /* the request's own, for itself */
        run->jp.slot = -1;
        run->jp.pidfd = run->jp.sync_fd = run->art_fd = run->notify_fd = -1;
        for (unsigned i = 0; i < SUP_HELD_NS; i++)
                run->jp.ns_fds[i] = -1;
        run->lim = lim;
        run->egress_fd = -1;
        if (n_fds) /* taken over */
                memcpy(run->in_fds, fds, n_fds * sizeof(int));
        if (req->egress.set) { /* checked (pol_run_fds_check): no input's */
                run->egress_fd = run->in_fds[req->egress.v];
                run->in_fds[req->egress.v] = -1;
        }
        run->n_in_fds = n_fds;
        run->fd_inputs = n_fds > 0;
        run->request_id = proto_strdup(req->request_id);
        run->stream_output = req->stream_output && c;
        run->caps_requested = req->capabilities_requested; /* taken over */
        memset(&req->capabilities_requested, 0, sizeof(req->capabilities_requested));
        /* What the run spec carries, the run's own: the spec is sent after the jail is taken,
         * which may be after the request is gone (inputs copied on the thread pool). */
        run->source = proto_strdup(req->source);
        run->variables_in = proto_strdup(req->variables);
        run->save_source = req->save_source;
        run->args = req->args; /* taken over */
        memset(&req->args, 0, sizeof(req->args));

        run->out.cap = run->err.cap = lim.output_bytes;
        proto_reader_init(&run->ev_reader, PROTO_RUNNER_FRAME_MAX);
        make_run_id(run->id, sizeof(run->id));
        resolve_caps(run, &req->capabilities_approved);
        if (cold[0])
                sup_run_event(run, "supervisor", "cold", NULL, NULL, cold);
        run->warm = warm ? SUP_WARM_BUILDING : SUP_WARM_NONE;
        run->counted = !warm;
        LIST_PREPEND(srv->runs, run);
        srv->n_runs += run->counted;
        int r = !run->source || (req->variables && !run->variables_in) ? anvil_err_set(err, ENOMEM, "Out of memory")
                                                                       : run_spawn(run, req, err);
        if (run->copy_pending)
                log_info("run %s: started for %s (copying %zu inputs)", run->id, c ? c->stream.name : "the supervisor",
                         run->copies->n);
        else
                log_info("run %s: started for %s (uid %u)", run->id, c ? c->stream.name : "the supervisor",
                         (unsigned)run->jp.uid);
        if (r < 0)
                run_spawn_failed(run, err);
        return 0; /* from here on, the run's end is reported the run's way */
}

void sup_run_start(struct sup_client *c, struct proto_run_request *req, const int *fds, size_t n_fds)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        if (run_begin(c->srv, c, req, NULL, fds, n_fds, &err) < 0)
                for (size_t i = 0; i < n_fds; i++)
                        (void)close(fds[i]);
}

int sup_run_internal(struct sup_server *srv, struct proto_run_request *req, const struct sup_run_opts *o,
                     struct anvil_err *err)
{
        return run_begin(srv, NULL, req, o, NULL, 0, err);
}

/* ---- the end (S10-S12) ---- */

static void run_maybe_finish(struct sup_run *run)
{
        /* Last, the kernel's audit records of the run's Landlock denials are read (kaudit.c):
         * they come after its processes ended, and must be in its result. */
        if (run->reaped && run->out_eof && run->err_eof && run->ev_eof && !run->attach_pending && !run->copy_pending &&
            run->end == SUP_RUN_LIVE && sup_kaudit_drained(run))
                run_finish(run);
}

void sup_run_maybe_finish(struct sup_run *run)
{
        run_maybe_finish(run);
}

/* S10: the artifacts copied out of the tmpfs, on the thread pool. */
static void collect_work(uv_work_t *w)
{
        struct sup_run *run = w->data;
        run->collect_r = sup_rundir_collect(run->dir, run->art_fd, run->lim.files_bytes, &run->artifacts, &run->notes,
                                            &run->collect_err);
}

/* S12, after the result is out: what waits for RCU grace periods (dropping the jail's mount
 * namespace, removing its cgroup) runs on the thread pool; the slot is free once it is done. */
static void teardown_work(uv_work_t *w)
{
        struct sup_run *run = w->data;
        close_reset(&run->art_fd); /* the tmpfs and everything in it go with its last reference */
        run->teardown_r = sup_jailproc_teardown(&run->jp, &run->teardown_err);
        /* Inputs passed as fds may be gigabytes: their copies (and mount points) are not kept
         * with the run's directory once it has ended; a failure leaves them to retention,
         * ignoring. */
        if (run->fd_inputs && run->dir[0]) {
                struct anvil_err e = ANVIL_ERR_INIT;
                _cleanup_close_ int d = open(run->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (d >= 0)
                        (void)fd_rm_tree_at(d, "inputs", 4, &e);
        }
}

/* The run's place among --max-runs is given up: its slot is free (or it never had one). */
static void run_leave(struct sup_run *run)
{
        struct sup_server *srv = run->srv;
        if (run->counted)
                srv->n_runs--;
        run->counted = false;
        sup_server_stop_when_idle(srv);
}

static void teardown_done(uv_work_t *w, int status)
{
        (void)status;
        struct sup_run *run = w->data;
        if (run->teardown_r < 0)
                log_warn("run %s: %s (the next start-up sweep retries)", run->id, run->teardown_err.msg);
        sup_jailproc_free_slot(run->srv, &run->jp);
        run_leave(run);
        sup_rundir_prune(run->srv);
        if (--run->open_handles == 0)
                run_free(run);
}

/* The run's directory: no longer in flight; removed if no tool was started in it (a run that
 * failed before GO leaves nothing behind). Before the result or error goes out: a client
 * that has its answer finds the directory as it stays, and a supervisor killed in between
 * leaves a directory kept, never one swept under a result that names it. */
static void rundir_end(struct sup_run *run)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        /* A warm jail no run took ran no tool: its directory goes. */
        bool kept = sup_run_reached(run, SUP_RUN_WATCHING) && run->warm != SUP_WARM_BUILDING &&
                    run->warm != SUP_WARM_WAITING;
        if (run->dir[0] && sup_rundir_end(run->srv, run->id, kept, &err) < 0)
                log_warn("run %s: %s (left marked: the next start-up removes its directory)", run->id, err.msg);
}

static void run_release(struct sup_run *run)
{
        struct sup_server *srv = run->srv;
        LIST_REMOVE(run);
        uv_handle_t *hs[] = { (uv_handle_t *)&run->in_pipe,    (uv_handle_t *)&run->out_pipe,
                              (uv_handle_t *)&run->err_pipe,   (uv_handle_t *)&run->ev_pipe,
                              (uv_handle_t *)&run->pidfd_poll, (uv_handle_t *)&run->sync_poll,
                              (uv_handle_t *)&run->wall_timer, (uv_handle_t *)&run->sample_timer,
                              (uv_handle_t *)&run->out_timer,  (uv_handle_t *)&run->notify_poll };
        for (unsigned i = 0; i < ELEMENTSOF(hs); i++)
                close_handle(run, hs[i]);
        close_reset(&run->notify_fd); /* after its poll handle is closing, as libuv asks */
        if (!sup_run_reached(run, SUP_RUN_CLONED)) {
                run_leave(run); /* no child was the run's, nor a slot */
        } else if (!sup_run_reached(run, SUP_RUN_WATCHING)) {
                sup_jailproc_discard(srv, &run->jp); /* GO was never sent: kill and reap here */
                run_leave(run);
                sup_rundir_prune(srv);
        } else {
                sup_jailproc_close(&run->jp);
                run->teardown.data = run;
                run->open_handles++; /* the teardown holds the run like a handle */
                if (uv_queue_work(srv->loop, &run->teardown, teardown_work, teardown_done) < 0) {
                        teardown_work(&run->teardown);
                        teardown_done(&run->teardown, 0);
                        return;
                }
        }
        if (run->open_handles == 0)
                run_free(run);
}

/* S11: the result, or the error frame, to whoever asked; then the run lets go of the rest. */
static void run_report(struct sup_run *run)
{
        (void)run_end_to(run, SUP_RUN_REPORTED);
        rundir_end(run);
        if (run->collect_r < 0 && run->verdict != SUP_RUN_FAILED) {
                log_error("run %s: %s", run->id, run->collect_err.msg);
                run_fail(run, run->collect_err.msg);
        }
        if (run->verdict == SUP_RUN_FAILED) {
                log_warn("run %s: %s: %s", run->id,
                         !run->fail_code                                                       ? "sandbox failed"
                         : proto_error_code_from_name(run->fail_code) == PROTO_ERR_BAD_REQUEST ? "request refused"
                                                                                               : run->fail_code,
                         run->sandbox_error);
                if (run->client)
                        sup_client_error(run->client, run->fail_code ? run->fail_code : "sandbox_failed",
                                         run->sandbox_error, run->fail_field, run->request_id);
                if (run->opts.done)
                        run->opts.done(run->srv, NULL, run->sandbox_error, run->opts.data);
        } else {
                flush_output(run); /* what the tool wrote, before its result */
                struct proto_msg m = { .type = PROTO_RUN_RESULT };
                sup_result_build(run, &m.u.run_result);
                log_info("run %s: %s%s%s in %" PRIu64 " ms", run->id, m.u.run_result.status,
                         m.u.run_result.killed ? ", " : "", m.u.run_result.killed ? m.u.run_result.killed : "",
                         m.u.run_result.wall_ms);
                if (run->client)
                        sup_client_send(run->client, &m);
                if (run->opts.done)
                        run->opts.done(run->srv, &m.u.run_result, NULL, run->opts.data);
                run->events = m.u.run_result.events; /* may have grown */
                sup_result_free_own(&m.u.run_result);
        }
        run_release(run);
}

static void collect_done(uv_work_t *w, int status)
{
        (void)status;
        run_report(w->data);
}

static void run_finish(struct sup_run *run)
{
        (void)run_end_to(run, SUP_RUN_FINISHING);
        if (!run->t_end) /* set when the drain of its audit records began (kaudit.c) */
                run->t_end = now_ms();
        if (run->sample_timer.data) {
                on_sample(&run->sample_timer); /* a last look, for tools shorter than 20 ms */
                (void)uv_timer_stop(&run->sample_timer);
                (void)uv_timer_stop(&run->wall_timer);
        }
        if (run->jp.sync_fd >= 0)
                sync_drain(run);
        sup_notify_finish(run);
        if (sup_run_reached(run, SUP_RUN_CLONED) && !sup_run_reached(run, SUP_RUN_EXITED) &&
            run->verdict == SUP_RUN_NO_VERDICT) {
                char msg[160];
                snprintf(msg, sizeof(msg), "The jail's pid 1 ended without reporting the runner's end (%s %d)",
                         run->pid1_code == CLD_EXITED ? "it exited with status" : "it was killed by signal",
                         run->pid1_status);
                run_fail(run, msg);
        }
        /* Rootless, the child sends the artifacts' tmpfs (ARTIFACTS) once it has made it: a
         * child killed before that sent none, and there is nothing to collect. */
        if (sup_run_reached(run, SUP_RUN_WATCHING) && run->art_fd < 0)
                run_fail(run, "The jail's child ended before it gave the run's artifacts directory");
        if (!sup_run_reached(run, SUP_RUN_WATCHING) || run->art_fd < 0) {
                /* No tool was started: nothing to collect (and run->work was never queued). */
                close_reset(&run->art_fd);
                run_report(run);
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
                        sup_run_kill_for(r, POL_KILLED_CANCELLED, "supervisor", 0);
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
                        sup_run_kill_for(r, POL_KILLED_CANCELLED, "supervisor", 0);
                }
}

void sup_runs_kill_all(struct sup_server *srv)
{
        for (struct sup_run *r = srv->runs; r; r = r->next)
                sup_run_kill_for(r, POL_KILLED_STOPPING, "supervisor", 0);
}
