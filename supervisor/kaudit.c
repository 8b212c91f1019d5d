/* Landlock in the supervisor: what each jail reported in force (C10, S4), and Landlock's
 * denials explained from outside the jail, from the kernel's own audit records (DESIGN §1:
 * what the kernel refuses is recorded outside, so tool code cannot suppress its own trace).
 *
 * Kernel audit is a system-wide switch. The supervisor turns it on only when started with
 * --enable-kernel-audit (AUDIT_SET, needs CAP_AUDIT_CONTROL), and never turns it off: auditd
 * or another supervisor may rely on it (`auditctl -e 0` does). Whether or not it did, it joins
 * the audit netlink multicast group (AUDIT_NLGRP_READLOG, needs CAP_AUDIT_READ) and reads
 * every record there on its loop; it keeps only Landlock's records of its own runs' domains.
 * Without either capability, or with audit off, runs go on: Landlock still refuses, and the
 * result says the refusals were not explained.
 *
 * Mapping a record to a run (checked against what a 6.18 kernel emits, see policy/kaudit.h):
 * each jail's child restricts itself (C10) and becomes the domain's creator; the first logged
 * denial of a domain comes with a LANDLOCK_DOMAIN record, status=allocated, that carries the
 * creator's pid and uid in the initial namespaces. A domain is the run's when that pid is the
 * run's pid 1 (the child became it by exec), that uid the run's host uid, and the record not
 * older than the run's verification. A LANDLOCK_ACCESS record names its domain, and comes
 * just before the domain's record in the same event (same serial), though another CPU's
 * records may come between them: records of an unknown domain wait in a small ring, and go
 * to the run whose domain record of the same serial follows, or are overwritten.
 *
 * The runner's own check (R6) lists "/" and is refused: that first denial of every run maps
 * the domain early and is evidence, from the kernel, that Landlock was in force; it is not an
 * event of the tool's. A tool's later listing of "/" is.
 *
 * Records are asynchronous (the kernel's kauditd thread sends them). Once a run's processes
 * are gone (S9), a marker goes through the kernel's audit queue: a user message
 * (AUDIT_TRUSTED_APP, CAP_AUDIT_WRITE) with a random nonce, queued behind every record the
 * run's processes caused before they ended; when it comes back on the multicast group, they
 * have all been read. At most KAUDIT_DRAIN_MS is waited.
 *
 * Bounds: a tool can cause thousands of denials. The kernel's backlog (64 records by default)
 * drops what kauditd has not sent yet and counts it as lost; the socket's buffer drops what
 * the supervisor has not read (ENOBUFS). Either makes a result say that denials may be
 * missing. Per run at most KAUDIT_EVENTS_MAX events; the rest are counted. */
#define _GNU_SOURCE
#include "supervisor/kaudit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "jail/compat.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "policy/kaudit.h"
#include "supervisor/run.h"
#include "proto/names.h"

#define KAUDIT_DRAIN_MS 1000
#define KAUDIT_TICK_MS 20
#define PENDING_MAX 16        /* access records waiting for their domain's record */
#define READ_BATCH 4096       /* records read per turn of the loop */
#define RCVBUF (8u << 20)     /* the multicast socket's buffer */
#define AUDIT_TRUSTED_APP_TYPE 1121

struct sup_kaudit {
        struct sup_server *srv;
        int ctl_fd; /* requests to the kernel: AUDIT_GET, AUDIT_SET, the drain marker */
        int mc_fd;  /* the multicast group: every record */
        uint32_t seq;
        uv_poll_t poll;
        uv_timer_t timer;
        unsigned open_handles;
        bool reading;
        char why_not[160]; /* why records are not read, for KAUDIT_OFF */
        enum pol_reason fix; /* what would have them read: a KAUDIT_FIX_ */
        bool log_denials;  /* the jails ask the kernel to log denials after exec */
        uint64_t overflows;
        uint64_t parse_errors;
        struct pol_ka_record pending[PENDING_MAX]; /* a ring; domain 0: a free slot */
        unsigned pending_next;
        char buf[16384];
        bool stopping;
};

static uint64_t realtime_ms(void)
{
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- requests to the kernel, on ctl_fd (blocking, answered at once) ---- */

/* Sends one request; with want_type, copies the reply of that type into reply; otherwise
 * waits for the acknowledgement. Returns 0 or -errno (the kernel's refusal). */
static int nl_request(struct sup_kaudit *ka, uint16_t type, const void *data, size_t len, uint16_t want_type,
                      void *reply, size_t reply_size)
{
        struct {
                struct nlmsghdr h;
                char payload[1024];
        } req;
        if (len > sizeof(req.payload))
                return -EINVAL;
        memset(&req, 0, sizeof(req));
        req.h.nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
        req.h.nlmsg_type = type;
        req.h.nlmsg_flags = NLM_F_REQUEST | (want_type ? 0 : NLM_F_ACK);
        req.h.nlmsg_seq = ++ka->seq;
        if (len) /* AUDIT_GET has no payload: data is NULL, which memcpy may not be given */
                memcpy(req.payload, data, len);
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        if (sendto(ka->ctl_fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
                return -errno;
        for (;;) {
                char buf[8192];
                ssize_t n = recv(ka->ctl_fd, buf, sizeof(buf), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                int left = (int)n;
                for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
                        if (h->nlmsg_seq != req.h.nlmsg_seq)
                                continue; /* a late answer to an earlier request */
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);
                                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                                        return -EBADMSG;
                                if (e->error || !want_type)
                                        return e->error;
                        } else if (h->nlmsg_type == want_type) {
                                size_t plen = h->nlmsg_len - NLMSG_HDRLEN;
                                memset(reply, 0, reply_size);
                                memcpy(reply, NLMSG_DATA(h), plen < reply_size ? plen : reply_size);
                                return 0;
                        }
                }
        }
}

static int audit_get(struct sup_kaudit *ka, struct audit_status *st)
{
        if (ka->ctl_fd < 0)
                return -EBADF;
        return nl_request(ka, AUDIT_GET, NULL, 0, AUDIT_GET, st, sizeof(*st));
}

/* ---- runs ---- */

static struct sup_run *run_by_domain(struct sup_kaudit *ka, uint64_t domain)
{
        for (struct sup_run *r = ka->srv->runs; r; r = r->next)
                if (r->ka.domain == domain)
                        return r;
        return NULL;
}

/* The run whose pid 1 restricted itself into this domain: its pid and host uid, and not a
 * record older than the run (a pid and a slot's uid are reused by later runs). */
static struct sup_run *run_by_creator(struct sup_kaudit *ka, const struct pol_ka_record *rec)
{
        for (struct sup_run *r = ka->srv->runs; r; r = r->next)
                if (r->ka.abi > 0 && r->ka.domain == 0 && sup_run_reached(r, SUP_RUN_VERIFIED) && r->jp.pid == (pid_t)rec->pid &&
                    (uint64_t)r->jp.uid == rec->uid && rec->time_ms + 1000 >= r->ka.start_ms)
                        return r;
        return NULL;
}

static void record_denial(struct sup_run *run, const struct pol_ka_record *rec)
{
        /* The runner's own check (R6): its first listing of "/", refused, is evidence, not
         * the tool's doing. */
        if (!run->ka.probe_seen && rec->blockers == (1u << POL_KA_FS_READ_DIR) && rec->object == POL_KA_OBJ_PATH &&
            strcmp(rec->path, "/") == 0) {
                run->ka.probe_seen = true;
                return;
        }
        /* The supervisor's own last events (a kill, cut output) keep their room. */
        if (run->ka.events >= KAUDIT_EVENTS_MAX || run->events.n >= PROTO_EVENTS_MAX - 8) {
                run->ka.dropped++;
                return;
        }
        char op[1024], msg[1536], blockers[512];
        enum pol_why why;
        pol_ka_explain(rec, op, sizeof(op), &why, msg, sizeof(msg), blockers, sizeof(blockers));
        sup_run_event(run, "landlock", "blocked", op, blockers, msg);
        run->ka.events++;
}

static void drain_done(struct sup_kaudit *ka, struct sup_run *run, const char *incomplete);

static void on_record(struct sup_kaudit *ka, int type, const char *text, size_t len)
{
        static struct pol_ka_record rec; /* one at a time, on the loop: too large for the stack */
        char why[160];
        if (pol_ka_parse(type, text, len, &rec, why, sizeof(why)) < 0) {
                if (ka->parse_errors++ < 10)
                        log_warn("kernel audit: a malformed record of type %d, ignored: %s", type, why);
                return;
        }
        struct sup_run *run;
        switch (rec.kind) {
        case POL_KA_IGNORED:
        case POL_KA_EOE:
                return;
        case POL_KA_ACCESS:
                if ((run = run_by_domain(ka, rec.domain)))
                        record_denial(run, &rec);
                else /* until its domain's record: the same event's, soon after */
                        ka->pending[ka->pending_next++ % PENDING_MAX] = rec;
                return;
        case POL_KA_DOMAIN:
                if (!rec.allocated || !(run = run_by_creator(ka, &rec)))
                        return;
                run->ka.domain = rec.domain;
                for (unsigned i = 0; i < PENDING_MAX; i++) {
                        /* in the order they came: the oldest slot first */
                        struct pol_ka_record *p = &ka->pending[(ka->pending_next + i) % PENDING_MAX];
                        if (p->domain == rec.domain && p->serial == rec.serial) {
                                record_denial(run, p);
                                p->domain = 0;
                        }
                }
                return;
        case POL_KA_MARKER:
                if (rec.pid != (long)getpid())
                        return;
                for (struct sup_run *r = ka->srv->runs; r; r = r->next)
                        if (r->ka.drain == KAUDIT_DRAINING && r->ka.nonce == rec.nonce) {
                                drain_done(ka, r, NULL);
                                sup_run_maybe_finish(r);
                                return;
                        }
                return;
        }
}

static void on_readable(uv_poll_t *p, int status, int events)
{
        (void)status;
        (void)events;
        struct sup_kaudit *ka = p->data;
        for (unsigned i = 0; i < READ_BATCH; i++) {
                ssize_t n = recv(ka->mc_fd, ka->buf, sizeof(ka->buf), MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == ENOBUFS) { /* records were dropped before we read them */
                                ka->overflows++;
                                continue;
                        }
                        return; /* EAGAIN */
                }
                /* One record per message. The kernel does not pad the last one to NLMSG_ALIGN, so
                 * the remaining length may go below zero after it: a signed length ends the walk. */
                int len = (int)n;
                for (struct nlmsghdr *h = (struct nlmsghdr *)ka->buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
                        if (h->nlmsg_type < 1000 || h->nlmsg_type > 2999)
                                continue; /* netlink's own messages */
                        on_record(ka, h->nlmsg_type, NLMSG_DATA(h), h->nlmsg_len - NLMSG_HDRLEN);
                }
        }
}

/* ---- the drain (S9) ---- */

/* Why Landlock's denials are not explained (NULL: they are), and in *fix what would explain
 * them. run: for its own view of the kernel's switch, taken when it started; NULL: now. */
static const char *unexplained(struct sup_kaudit *ka, struct sup_run *run, enum pol_reason *fix)
{
        *fix = POL_KAUDIT_FIX_RESTART;
        if (!ka)
                return "not started";
        if (!ka->reading) {
                *fix = ka->fix;
                return ka->why_not;
        }
        if (!ka->log_denials) {
                *fix = POL_KAUDIT_FIX_PANIC;
                return "the kernel's audit fails by panicking, so jails do not log their denials";
        }
        struct audit_status st;
        if (run ? !run->ka.audit_on : (audit_get(ka, &st) == 0 && !st.enabled)) {
                *fix = POL_KAUDIT_FIX_ENABLE;
                return "audit is disabled in the kernel";
        }
        return NULL;
}

const char *sup_kaudit_unexplained(struct sup_server *srv, char *buf, size_t size)
{
        enum pol_reason fix;
        const char *why = unexplained(srv->kaudit, NULL, &fix);
        if (!why)
                return NULL;
        /* fix is a KAUDIT_FIX_, of no argument: its format is its text */
        return POL_REASON(buf, size, KAUDIT_NOT_EXPLAINED, why, pol_reason_format(fix));
}

static const char *kaudit_status(struct sup_kaudit *ka, struct sup_run *run, const char *incomplete, char *buf,
                                 size_t size)
{
        enum pol_reason fix;
        const char *why = unexplained(ka, run, &fix);
        if (why)
                return POL_REASON(buf, size, KAUDIT_OFF, why);
        if (incomplete)
                return POL_REASON(buf, size, KAUDIT_INCOMPLETE, incomplete);
        return POL_REASON(buf, size, KAUDIT_ON);
}

/* The run's records are all read (or will not be): its result may be made. */
static void drain_done(struct sup_kaudit *ka, struct sup_run *run, const char *incomplete)
{
        char why[160], msg[320];
        run->ka.drain = KAUDIT_DRAINED;
        if (run->ka.abi <= 0 || !sup_run_reached(run, SUP_RUN_VERIFIED))
                return; /* nothing to explain */
        struct audit_status st;
        int got = 0;
        if (!incomplete && ka && ka->reading && run->ka.audit_on) {
                if (ka->overflows != run->ka.overflows_at_start) {
                        snprintf(why, sizeof(why), "the supervisor's audit socket overflowed and dropped records");
                        incomplete = why;
                } else if ((got = ka->srv->cfg.test_kaudit_get_fails ? -EIO : audit_get(ka, &st)) < 0) {
                        /* Without the kernel's count, a lost record cannot be ruled out: said. */
                        snprintf(why, sizeof(why), "the kernel's count of lost records could not be read (%s)",
                                 strerror(-got));
                        incomplete = why;
                } else if (st.lost != run->ka.lost_at_start) {
                        snprintf(why, sizeof(why), "the kernel lost %u audit records during the run",
                                 st.lost - run->ka.lost_at_start);
                        incomplete = why;
                } else if (!run->ka.probe_seen && run->ka.domain == 0 && sup_run_reached(run, SUP_RUN_EXECUTING)) {
                        bool started = false;
                        const struct proto_event *e = run->events.items;
                        for (size_t i = 0; i < run->events.n; i++)
                                if (proto_event_is(&e[i], PROTO_LAYER_RUNNER, PROTO_KIND_STARTED))
                                        started = true;
                        if (started)
                                incomplete = "no record of the runner's own check was seen";
                }
        }
        (void)proto_strv_push(&run->mechanisms, kaudit_status(ka, run, incomplete, msg, sizeof(msg)));
        /* Said in the trace too, where a reader of the run looks, with what would explain them. */
        enum pol_reason fix;
        const char *off = unexplained(ka, run, &fix);
        if (off) {
                char note[640];
                sup_run_event(run, "supervisor", "not_explained", NULL, NULL,
                              POL_REASON(note, sizeof(note), KAUDIT_NOT_EXPLAINED, off,
                                         pol_reason_format(fix) /* a KAUDIT_FIX_: no argument */));
        }
        if (run->ka.dropped)
                sup_run_event(run, "landlock", "dropped", NULL, NULL,
                              POL_REASON(msg, sizeof(msg), LANDLOCK_DROPPED, (unsigned long long)run->ka.dropped,
                                         (unsigned)KAUDIT_EVENTS_MAX));
}

static void on_tick(uv_timer_t *t)
{
        struct sup_kaudit *ka = t->data;
        /* What is still in the socket first: the marker may be there. */
        if (ka->reading)
                on_readable(&ka->poll, 0, UV_READABLE);
        uint64_t now = now_ms();
        struct sup_run *late[SUP_MAX_RUNS];
        unsigned n = 0, waiting = 0;
        for (struct sup_run *r = ka->srv->runs; r; r = r->next) {
                if (r->ka.drain != KAUDIT_DRAINING)
                        continue;
                if ((now >= r->ka.deadline_ms || ka->stopping) && n < (unsigned)ELEMENTSOF(late))
                        late[n++] = r;
                else
                        waiting++;
        }
        if (!waiting)
                (void)uv_timer_stop(&ka->timer);
        for (unsigned i = 0; i < n; i++) {
                drain_done(ka, late[i], ka->stopping ? "the supervisor is stopping"
                                                     : "the kernel's records of the run's end did not all arrive in time");
                sup_run_maybe_finish(late[i]);
        }
}

bool sup_kaudit_drained(struct sup_run *run)
{
        struct sup_kaudit *ka = run->srv->kaudit;
        if (run->ka.drain == KAUDIT_DRAINED)
                return true;
        if (run->ka.drain == KAUDIT_DRAINING)
                return false;
        if (!ka || !ka->reading || ka->stopping || run->ka.abi <= 0 || !sup_run_reached(run, SUP_RUN_VERIFIED) || !run->ka.audit_on ||
            !ka->log_denials) {
                drain_done(ka, run, NULL);
                return true;
        }
        /* The run's wall time ends with its processes, not with this wait. */
        run->t_end = now_ms();
        struct audit_status st;
        if (audit_get(ka, &st) == 0 && !st.enabled) {
                drain_done(ka, run, "audit was switched off during the run");
                return true;
        }
        char text[64];
        uint64_t nonce = 0;
        if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce) || nonce == 0)
                nonce = now_ms() ^ (uint64_t)(uintptr_t)run;
        int len = snprintf(text, sizeof(text), "anvil-drain=%016llx", (unsigned long long)nonce);
        int r = nl_request(ka, AUDIT_TRUSTED_APP_TYPE, text, (size_t)len + 1, 0, NULL, 0);
        if (r < 0) {
                char why[160];
                snprintf(why, sizeof(why), "the drain marker could not be sent: %s", strerror(-r));
                drain_done(ka, run, why);
                return true;
        }
        run->ka.nonce = nonce;
        run->ka.drain = KAUDIT_DRAINING;
        run->ka.deadline_ms = now_ms() + KAUDIT_DRAIN_MS;
        if (!uv_is_active((uv_handle_t *)&ka->timer))
                (void)uv_timer_start(&ka->timer, on_tick, KAUDIT_TICK_MS, KAUDIT_TICK_MS);
        return false;
}

/* ---- what the jail reported (C10, S4) ---- */

void sup_kaudit_jail_report(struct sup_run *run, const struct jail_msg *m)
{
        if (run->ka.reported)
                return; /* one report per child */
        run->ka.reported = true;
        run->ka.abi = m->status > 0 && m->status <= 255 ? m->status : 0;
        snprintf(run->ka.text, sizeof(run->ka.text), "%s", m->msg);
}

int sup_kaudit_verified(struct sup_run *run, struct anvil_err *err)
{
        struct sup_server *srv = run->srv;
        int want = srv->jail.landlock_abi;
        char buf[256], text[128];
        if (!run->ka.reported)
                return anvil_err_set(err, EPERM, "%s",
                                     POL_REASON(buf, sizeof(buf), REFUSED_NOT_IN_FORCE, "landlock",
                                                "the jail's child reported nothing about it"));
        if (run->ka.abi == 0) {
                /* The child said why: no Landlock in this kernel, or a test build told it not to
                 * (the runner, told to expect it, then refuses the run). Never claimed. */
                if (want > 0 && !srv->jail.test_skip_landlock && !sup_run_is_probe(run) /* the probe finds out */)
                        return anvil_err_set(err, EPERM, "%s",
                                             POL_REASON(buf, sizeof(buf), REFUSED_NOT_IN_FORCE, "landlock",
                                                        run->ka.text));
                sup_run_event(run, "supervisor", "landlock_absent", NULL, NULL,
                              POL_REASON(buf, sizeof(buf), LANDLOCK_ABSENT, run->ka.text));
                return 0;
        }
        if (run->ka.abi != want) {
                snprintf(text, sizeof(text), "the jail applied ABI %d, the kernel reports %d", run->ka.abi, want);
                return anvil_err_set(err, EPERM, "%s",
                                     POL_REASON(buf, sizeof(buf), REFUSED_NOT_IN_FORCE, "landlock", text));
        }
        jail_landlock_describe(run->ka.abi, text, sizeof(text));
        if (proto_strv_push(&run->mechanisms, text) < 0)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        /* From here its domain's records are the run's. */
        struct sup_kaudit *ka = srv->kaudit;
        struct audit_status st;
        run->ka.start_ms = realtime_ms();
        if (ka && ka->reading && audit_get(ka, &st) == 0) {
                run->ka.audit_on = st.enabled != 0;
                run->ka.lost_at_start = st.lost;
                run->ka.overflows_at_start = ka->overflows;
        }
        return 0;
}

/* ---- start and stop ---- */

/* The struct outlives its handles: sup_kaudit_free() releases it once the loop has ended. */
static void on_closed(uv_handle_t *h)
{
        struct sup_kaudit *ka = h->data;
        ka->open_handles--;
}

static int open_audit_socket(void)
{
        return socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
}

/* Joins the multicast group: every record the kernel emits, from now on. */
static int join_group(struct sup_kaudit *ka, struct anvil_err *err)
{
        int fd = open_audit_socket();
        if (fd < 0)
                return anvil_err_sys(err, errno, "cannot open an audit socket");
        int size = (int)RCVBUF;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)); /* best effort, ignoring */
        struct sockaddr_nl group = { .nl_family = AF_NETLINK, .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
        if (bind(fd, (struct sockaddr *)&group, sizeof(group)) < 0) {
                int e = errno;
                (void)close(fd);
                return anvil_err_sys(err, e, "cannot read the audit multicast group");
        }
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
                int e = errno;
                (void)close(fd);
                return anvil_err_sys(err, e, "cannot make the audit socket non-blocking");
        }
        ka->mc_fd = fd;
        return 0;
}

int sup_kaudit_start(struct sup_server *srv, bool enable, struct anvil_err *err)
{
        struct sup_kaudit *ka = calloc(1, sizeof(*ka));
        if (!ka)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        ka->srv = srv;
        ka->ctl_fd = ka->mc_fd = -1;
        ka->log_denials = true;
        ka->fix = POL_KAUDIT_FIX_RESTART;
        srv->kaudit = ka;
        char msg[320];
        struct anvil_err e = ANVIL_ERR_INIT;
        struct audit_status st;
        memset(&st, 0, sizeof(st));
        int r;
        ka->ctl_fd = open_audit_socket();
        if (ka->ctl_fd < 0) {
                snprintf(ka->why_not, sizeof(ka->why_not), "no kernel audit: %s", strerror(errno));
                ka->fix = POL_KAUDIT_FIX_NONE;
                goto done;
        }
        struct timeval tv = { .tv_sec = 1 };
        (void)setsockopt(ka->ctl_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)); /* the kernel answers at once */
        if (enable) {
                struct audit_status set = { .mask = AUDIT_STATUS_ENABLED, .enabled = 1 };
                if ((r = nl_request(ka, AUDIT_SET, &set, sizeof(set), 0, NULL, 0)) < 0)
                        log_warn("--enable-kernel-audit: the kernel refused to switch audit on: %s", strerror(-r));
                else
                        log_info("--enable-kernel-audit: kernel audit switched on (it stays on when the supervisor "
                                 "stops: auditd or another program may rely on it)");
        }
        if ((r = audit_get(ka, &st)) < 0) {
                snprintf(ka->why_not, sizeof(ka->why_not), "cannot read the kernel's audit status: %s", strerror(-r));
                ka->fix = POL_KAUDIT_FIX_READ; /* AUDIT_GET: CAP_AUDIT_CONTROL, which root has */
                goto done;
        }
        /* A denial the kernel cannot queue is "lost"; with failure=2 a lost record panics the
         * machine. A tool can cause denials at will, so then the jails do not ask for theirs
         * to be logged. */
        if (st.failure == AUDIT_FAIL_PANIC) {
                ka->log_denials = false;
                log_warn("kernel audit fails by panicking (failure=2): a tool could flood it, so jails do not "
                         "ask the kernel to log their landlock denials");
        }
        if (join_group(ka, &e) < 0) {
                snprintf(ka->why_not, sizeof(ka->why_not), "%s", e.msg);
                ka->fix = e.code == EPERM ? POL_KAUDIT_FIX_READ : POL_KAUDIT_FIX_RESTART;
                goto done;
        }
        if (uv_poll_init(srv->loop, &ka->poll, ka->mc_fd) < 0 || uv_timer_init(srv->loop, &ka->timer) < 0) {
                snprintf(ka->why_not, sizeof(ka->why_not), "cannot watch the audit socket");
                close_reset(&ka->mc_fd);
                goto done;
        }
        ka->poll.data = ka->timer.data = ka;
        ka->open_handles = 2;
        (void)uv_poll_start(&ka->poll, UV_READABLE, on_readable);
        ka->reading = true;
done:
        srv->jail.landlock_log = ka->log_denials;
        char note[640];
        if (ka->reading && st.enabled && ka->log_denials)
                log_info("%s", POL_REASON(msg, sizeof(msg), KAUDIT_ON));
        else {
                log_info("%s", POL_REASON(msg, sizeof(msg), KAUDIT_OFF,
                                          !ka->log_denials ? "the kernel's audit fails by panicking"
                                          : ka->why_not[0] ? ka->why_not
                                                           : "audit is disabled in the kernel"));
                const char *why = sup_kaudit_unexplained(srv, note, sizeof(note));
                if (why)
                        log_warn("%s", why);
        }
        return 0;
}

void sup_kaudit_stop(struct sup_server *srv)
{
        struct sup_kaudit *ka = srv->kaudit;
        if (!ka || ka->stopping)
                return;
        ka->stopping = true;
        if (ka->reading) {
                on_tick(&ka->timer); /* every waiting run goes on to its result */
                uv_close((uv_handle_t *)&ka->poll, on_closed);
                uv_close((uv_handle_t *)&ka->timer, on_closed);
        }
        ka->reading = false;
        snprintf(ka->why_not, sizeof(ka->why_not), "the supervisor is stopping");
}

void sup_kaudit_free(struct sup_server *srv)
{
        struct sup_kaudit *ka = srv->kaudit;
        if (!ka)
                return;
        if (ka->ctl_fd >= 0)
                (void)close(ka->ctl_fd);
        if (ka->mc_fd >= 0)
                (void)close(ka->mc_fd);
        free(ka);
        srv->kaudit = NULL;
}
