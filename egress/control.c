/* anvil-egress's control socket (unprivileged; egress.h): an AF_UNIX SOCK_SEQPACKET socket,
 * one JSON object per message (at most EGR_CTL_MSG_MAX bytes), for the uids --allow-uid names
 * (SO_PEERCRED) and the daemon's own. docs/egress.md has the messages:
 *   {"type":"open","run_id":ID,"hosts":[...],"addresses":[...],"limits":{...}}
 *       -> {"type":"opened","run_id":ID,"socket":PATH} with an O_PATH fd of that socket
 *   {"type":"close","run_id":ID} -> the run's connections cut, then
 *       {"type":"closed","run_id":ID,"allowed":N,"blocked":N,"bytes":N,"events_dropped":N}
 *   and, unasked, {"type":"event","run_id":ID,"event":{...}} for each decision.
 * Anything else, or a field out of its bounds, is {"type":"error","message":...}, and the
 * connection serves on. A connection that ends closes every run it opened (fail closed: no
 * run outlives the one who answers for it). */
#define _GNU_SOURCE /* accept4, O_PATH, struct ucred */
#include "egress/egress.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/list.h"
#include "lib/log.h"

#define EGR_CTL_MSG_MAX 65536
#define EGR_CTLS_MAX 16

struct egr_ctl {
        struct egr_ctl *next, **pprev;
        int fd;
        uv_poll_t poll;
        unsigned uid;
        bool gone;
};

static int listen_fd = -EBADF;
static uv_poll_t listen_poll;
static unsigned allowed_uids[16];
static size_t n_allowed_uids;
static unsigned n_ctls;

/* ---- sending ---- */

static void ctl_send(struct egr_ctl *ctl, json_t *msg, int fd, struct egr_run *run)
{
        _cleanup_free_ char *s = json_dumps(msg, JSON_COMPACT);
        json_decref(msg);
        if (!ctl || ctl->gone || !s)
                return;
        struct anvil_err err = ANVIL_ERR_INIT;
        int n_fds = fd >= 0 ? 1 : 0;
        if (fd_send_fds(ctl->fd, s, strlen(s), &fd, (size_t)n_fds, &err) < 0) {
                if (run)
                        run->events_dropped++; /* reported in "closed" */
                log_warn("control: %s, ignoring", err.msg);
        }
}

void egr_ctl_event(struct egr_run *run, const struct egr_event *e)
{
        json_t *ev = json_pack("{s:I,s:s,s:s,s:s,s:s}", "t_ms", (json_int_t)(now_ms() - run->t0_ms), "layer", "proxy",
                               "kind", e->kind, "reason", e->reason, "message", e->message);
        if (!ev)
                return;
        if (e->op)
                json_object_set_new(ev, "op", json_string(e->op));
        if (e->host)
                json_object_set_new(ev, "host", json_string(e->host));
        if (e->port)
                json_object_set_new(ev, "port", json_integer(e->port));
        if (e->address)
                json_object_set_new(ev, "address", json_string(e->address));
        if (!strcmp(e->kind, "allowed") || e->bytes_out || e->bytes_in) {
                json_object_set_new(ev, "bytes_out", json_integer((json_int_t)e->bytes_out));
                json_object_set_new(ev, "bytes_in", json_integer((json_int_t)e->bytes_in));
        }
        if (run->n_logged < EGR_LOG_PER_RUN) {
                log_info("run %s: %s", run->id, e->message);
                if (++run->n_logged == EGR_LOG_PER_RUN)
                        log_info("run %s: its next decisions are not logged (%u were); how many is said when it closes",
                                 run->id, EGR_LOG_PER_RUN);
        } else {
                run->log_skipped++;
        }
        if (!run->ctl || run->ctl->gone) {
                run->events_dropped++;
                json_decref(ev);
                return;
        }
        ctl_send(run->ctl, json_pack("{s:s,s:s,s:o}", "type", "event", "run_id", run->id, "event", ev), -1, run);
}

static void ctl_error(struct egr_ctl *ctl, const char *run_id, const char *msg)
{
        json_t *j = json_pack("{s:s,s:s}", "type", "error", "message", msg);
        if (j && run_id)
                json_object_set_new(j, "run_id", json_string(run_id));
        ctl_send(ctl, j, -1, NULL);
}

/* ---- runs ---- */

static struct egr_run *run_find(const char *id)
{
        for (struct egr_run *r = egr_d.runs; r; r = r->next)
                if (!strcmp(r->id, id))
                        return r;
        return NULL;
}

static bool run_id_ok(const char *id)
{
        size_t n = strlen(id);
        if (n == 0 || n > EGR_RUN_ID_MAX || id[0] == '.')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(id[i] >= 'a' && id[i] <= 'z') && !(id[i] >= 'A' && id[i] <= 'Z') &&
                    !(id[i] >= '0' && id[i] <= '9') && id[i] != '-' && id[i] != '_' && id[i] != '.')
                        return false;
        return true;
}

void egr_ctl_run_gone(struct egr_run *run)
{
        LIST_REMOVE(run);
        egr_d.n_runs--;
        if (run->log_skipped)
                log_info("run %s: closed; %llu of its decisions were not logged", run->id, run->log_skipped);
        if (run->ctl && !run->ctl->gone)
                ctl_send(run->ctl,
                         json_pack("{s:s,s:s,s:i,s:i,s:I,s:I}", "type", "closed", "run_id", run->id, "allowed",
                                   (int)run->n_allowed, "blocked", (int)run->n_blocked, "bytes", (json_int_t)run->bytes,
                                   "events_dropped", (json_int_t)run->events_dropped),
                         -1, NULL);
        free(run);
}

/* One limit: absent keeps the default; present must be 1 to the daemon's maximum. */
static int limit_get(json_t *limits, const char *key, uint64_t def, uint64_t max, uint64_t *out, char *why,
                     size_t why_size)
{
        json_t *v = limits ? json_object_get(limits, key) : NULL;
        *out = def;
        if (!v)
                return 0;
        if (!json_is_integer(v) || json_integer_value(v) < 1 || (uint64_t)json_integer_value(v) > max) {
                snprintf(why, why_size, "limits.%s: an integer from 1 to %llu", key, (unsigned long long)max);
                return -EINVAL;
        }
        *out = (uint64_t)json_integer_value(v);
        return 0;
}

static int limits_parse(json_t *limits, struct egr_limits *l, char *why, size_t ws)
{
        static const char *const keys[] = { "conns", "bytes", "head_s", "idle_s", "lifetime_s" };
        const struct egr_limits *d = &egr_d.defaults, *m = &egr_d.maxima;
        uint64_t v[5];
        if (limits && !json_is_object(limits))
                return snprintf(why, ws, "limits: an object"), -EINVAL;
        const char *k;
        json_t *val;
        json_object_foreach(limits, k, val)
        {
                bool known = false;
                for (size_t i = 0; i < 5; i++)
                        known |= !strcmp(k, keys[i]);
                if (!known)
                        return snprintf(why, ws, "limits: unknown key '%.40s'", k), -EINVAL;
        }
        if (limit_get(limits, "conns", d->conns, m->conns, &v[0], why, ws) < 0 ||
            limit_get(limits, "bytes", d->bytes, m->bytes, &v[1], why, ws) < 0 ||
            limit_get(limits, "head_s", d->head_s, m->head_s, &v[2], why, ws) < 0 ||
            limit_get(limits, "idle_s", d->idle_s, m->idle_s, &v[3], why, ws) < 0 ||
            limit_get(limits, "lifetime_s", d->lifetime_s, m->lifetime_s, &v[4], why, ws) < 0)
                return -EINVAL;
        *l = (struct egr_limits){ (unsigned)v[0], v[1], (unsigned)v[2], (unsigned)v[3], (unsigned)v[4] };
        return 0;
}

static int rules_parse(json_t *hosts, json_t *addrs, struct egr_run *run, char *why, size_t ws)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        size_t i;
        json_t *v;
        if (!json_is_array(hosts) || json_array_size(hosts) == 0 || json_array_size(hosts) > EGR_RULES_MAX)
                return snprintf(why, ws, "hosts: an array of 1 to %d strings", EGR_RULES_MAX), -EINVAL;
        if (addrs && (!json_is_array(addrs) || json_array_size(addrs) > EGR_CIDRS_MAX))
                return snprintf(why, ws, "addresses: an array of at most %d strings", EGR_CIDRS_MAX), -EINVAL;
        json_array_foreach(hosts, i, v)
        {
                if (!json_is_string(v) || json_string_length(v) > 300)
                        return snprintf(why, ws, "hosts[%zu]: a string of at most 300 bytes", i), -EINVAL;
                if (egr_rule_parse(json_string_value(v), &run->rules[i], &err) < 0)
                        return snprintf(why, ws, "hosts[%zu]: %s", i, err.msg), -EINVAL;
        }
        run->n_rules = json_array_size(hosts);
        json_array_foreach(addrs, i, v)
        {
                if (!json_is_string(v) || json_string_length(v) > 64)
                        return snprintf(why, ws, "addresses[%zu]: a string of at most 64 bytes", i), -EINVAL;
                if (egr_cidr_parse(json_string_value(v), &run->cidrs[i], &err) < 0)
                        return snprintf(why, ws, "addresses[%zu]: %s", i, err.msg), -EINVAL;
        }
        run->n_cidrs = addrs ? json_array_size(addrs) : 0;
        return 0;
}

/* Binds the run's socket (its handle made already): in the run directory (0700, the daemon's: nobody else reaches it by
 * its path), the socket itself 0666 (whoever is given it, bind-mounted, may connect). */
static int run_bind(struct egr_run *run, struct anvil_err *err)
{
        int e;
        static unsigned long long seq;
        /* named by a number, not the run's id: a socket's path is at most 107 bytes */
        if ((size_t)snprintf(run->path, sizeof(run->path), "%s/%llu.sock", egr_d.run_dir, ++seq) >= sizeof(run->path))
                return anvil_err_set(err, ENAMETOOLONG, "the socket path for run %s is too long", run->id);
        if ((e = uv_pipe_bind(&run->listener, run->path)) < 0 || (e = chmod(run->path, 0666) < 0 ? -errno : 0) < 0) {
                anvil_err_set(err, -e, "Failed to bind %s: %s", run->path, uv_strerror(e));
                return e;
        }
        return egr_proxy_listen(run, err);
}

static void on_run_bind_failed(uv_handle_t *h)
{
        free(h->data);
}

/* E2 */
static void ctl_open(struct egr_ctl *ctl, json_t *m, const char *id)
{
        char why[300] = "";
        json_t *hosts = json_object_get(m, "hosts"), *addrs = json_object_get(m, "addresses");
        if (run_find(id))
                return ctl_error(ctl, id, "run_id: a run of that id is open");
        if (egr_d.n_runs >= egr_d.max_runs)
                return ctl_error(ctl, id, "too many runs open (--max-runs)");
        struct egr_run *run = calloc(1, sizeof(*run));
        if (!run)
                return ctl_error(ctl, id, "out of memory");
        snprintf(run->id, sizeof(run->id), "%s", id);
        if (rules_parse(hosts, addrs, run, why, sizeof(why)) < 0 ||
            limits_parse(json_object_get(m, "limits"), &run->limits, why, sizeof(why)) < 0) {
                free(run);
                return ctl_error(ctl, id, why);
        }
        run->ctl = ctl;
        run->t0_ms = now_ms();
        struct anvil_err err = ANVIL_ERR_INIT;
        int e = uv_pipe_init(egr_d.loop, &run->listener, 0);
        if (e < 0) {
                free(run);
                return ctl_error(ctl, id, uv_strerror(e));
        }
        run->listener.data = run;
        if (run_bind(run, &err) < 0) {
                (void)unlink(run->path);
                uv_close((uv_handle_t *)&run->listener, on_run_bind_failed);
                return ctl_error(ctl, id, err.msg);
        }
        LIST_PREPEND(egr_d.runs, run);
        egr_d.n_runs++;
        _cleanup_close_ int pfd = open(run->path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
        if (pfd < 0) {
                egr_proxy_close_run(run);
                return ctl_error(ctl, id, "Failed to open the run's socket O_PATH");
        }
        ctl_send(ctl, json_pack("{s:s,s:s,s:s}", "type", "opened", "run_id", id, "socket", run->path), pfd, NULL);
}

static void ctl_handle(struct egr_ctl *ctl, const char *buf, size_t len)
{
        json_error_t je;
        json_t *m = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
        if (!m || !json_is_object(m)) {
                char why[300];
                snprintf(why, sizeof(why), "not a JSON object%s%.200s", m ? "" : ": ", m ? "" : je.text);
                json_decref(m);
                return ctl_error(ctl, NULL, why);
        }
        const char *type = json_string_value(json_object_get(m, "type"));
        const char *id = json_string_value(json_object_get(m, "run_id"));
        static const char *const known[] = { "type", "run_id", "hosts", "addresses", "limits" };
        const char *k;
        json_t *v;
        json_object_foreach(m, k, v)
        {
                bool ok = false;
                for (size_t i = 0; i < ELEMENTSOF(known); i++)
                        ok |= !strcmp(k, known[i]);
                if (!ok) {
                        char why[100];
                        snprintf(why, sizeof(why), "unknown key '%.40s'", k);
                        ctl_error(ctl, id, why);
                        json_decref(m);
                        return;
                }
        }
        if (!type || !id || !run_id_ok(id))
                ctl_error(ctl, NULL,
                          "type and run_id ([A-Za-z0-9._-], 1 to 64 bytes, not starting with '.') are required");
        else if (!strcmp(type, "open"))
                ctl_open(ctl, m, id);
        else if (!strcmp(type, "close")) {
                struct egr_run *run = run_find(id);
                if (json_object_size(m) != 2)
                        ctl_error(ctl, id, "close: type and run_id, and no other key");
                else if (!run || run->ctl != ctl)
                        ctl_error(ctl, id, "run_id: no such run open on this connection");
                else
                        egr_proxy_close_run(run);
        } else
                ctl_error(ctl, id, "type: open or close");
        json_decref(m);
}

/* ---- connections ---- */

static void on_ctl_closed(uv_handle_t *h)
{
        struct egr_ctl *ctl = h->data;
        close_reset(&ctl->fd);
        free(ctl);
}

static void ctl_drop(struct egr_ctl *ctl)
{
        if (ctl->gone)
                return;
        ctl->gone = true;
        LIST_REMOVE(ctl);
        n_ctls--;
        for (struct egr_run *r = egr_d.runs, *next; r; r = next) {
                next = r->next;
                if (r->ctl == ctl) {
                        r->ctl = NULL; /* fail closed: its connections cut, no one to tell */
                        egr_proxy_close_run(r);
                }
        }
        uv_close((uv_handle_t *)&ctl->poll, on_ctl_closed);
}

static void on_ctl_readable(uv_poll_t *p, int status, int events)
{
        struct egr_ctl *ctl = p->data;
        static char buf[EGR_CTL_MSG_MAX];
        (void)events;
        if (status < 0)
                return ctl_drop(ctl);
        ssize_t n = recv(ctl->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0)
                return ctl_drop(ctl);
        if ((size_t)n > sizeof(buf))
                return ctl_error(ctl, NULL, "message larger than 64 KiB");
        ctl_handle(ctl, buf, (size_t)n);
}

static bool uid_allowed(unsigned uid)
{
        if (uid == 0 || uid == (unsigned)geteuid())
                return true;
        for (size_t i = 0; i < n_allowed_uids; i++)
                if (allowed_uids[i] == uid)
                        return true;
        return false;
}

static void on_ctl_connection(uv_poll_t *p, int status, int events)
{
        (void)p;
        (void)events;
        if (status < 0)
                return;
        _cleanup_close_ int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
                return;
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || !uid_allowed(cred.uid)) {
                log_warn("control: uid %u refused (not --allow-uid)", (unsigned)cred.uid);
                return;
        }
        if (n_ctls >= EGR_CTLS_MAX) {
                log_warn("control: too many connections (at most %d), one refused", EGR_CTLS_MAX);
                return;
        }
        struct egr_ctl *ctl = calloc(1, sizeof(*ctl));
        if (!ctl || uv_poll_init(egr_d.loop, &ctl->poll, fd) < 0) {
                free(ctl);
                return;
        }
        int sndbuf = 4 << 20; /* events queue here while the peer reads (SO_SNDBUF, halved by no one) */
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        ctl->fd = TAKE_FD(fd);
        ctl->uid = cred.uid;
        ctl->poll.data = ctl;
        LIST_PREPEND(egr_d.ctls, ctl);
        n_ctls++;
        (void)uv_poll_start(&ctl->poll, UV_READABLE | UV_DISCONNECT, on_ctl_readable);
}

int egr_ctl_listen(const char *path, const unsigned *uids, size_t n_uids, struct anvil_err *err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return anvil_err_set(err, ENAMETOOLONG, "--control %s: too long for a socket path", path);
        memcpy(allowed_uids, uids, sizeof(unsigned) * (n_uids < 16 ? n_uids : 16));
        n_allowed_uids = n_uids < 16 ? n_uids : 16;
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to make the control socket");
        (void)unlink(path);
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return anvil_err_sys(err, errno, "Failed to bind %s", path);
        if (chmod(path, 0660) < 0 || listen(fd, 16) < 0)
                return anvil_err_sys(err, errno, "Failed to listen on %s", path);
        if (uv_poll_init(egr_d.loop, &listen_poll, fd) < 0 ||
            uv_poll_start(&listen_poll, UV_READABLE, on_ctl_connection) < 0)
                return anvil_err_set(err, EIO, "Failed to poll %s", path);
        listen_fd = TAKE_FD(fd);
        return 0;
}

void egr_ctl_close_all(void)
{
        while (egr_d.ctls)
                ctl_drop(egr_d.ctls);
        if (listen_fd >= 0) {
                uv_close((uv_handle_t *)&listen_poll, NULL);
                close_reset(&listen_fd);
        }
}
