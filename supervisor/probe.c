/* The isolation probe (DESIGN §6): probe, don't detect. A mechanism being available is not
 * evidence that it holds; the probe runs a tool of its own in a real jail, with the Python
 * layers off (so only the kernel layers answer), and checks each promise functionally:
 *   - the interpreter starts and runs the probe;
 *   - a write outside the write root (/work/anvil-probe-canary) is refused;
 *   - a read of a host file (a canary the supervisor wrote under its state directory) is
 *     refused;
 *   - a TCP connect to a listener the supervisor opened on the host's 127.0.0.1 is refused,
 *     and the listener counts no connection;
 *   - a read of /etc/hostname, which is in the jail but not among its read roots, is refused
 *     by Landlock (EACCES): what shows Landlock holding inside the jail's own namespaces.
 * Then the same probe runs outside any jail, as the builder uid, as the control: there the
 * write, the read and the connect must all succeed (the listener counts one), or the probe
 * proves nothing; its canary is then removed.
 *
 * Each mechanism is reported as available (the kernel offers it), probed (a check of it ran)
 * and in force (the check showed it holding), with the evidence. The tier is the best rung
 * of the ladder whose mechanisms are all in force. The probe runs before the supervisor
 * listens, and again for each probe_request (one at a time; requests that arrive meanwhile
 * get the running probe's result): if the environment changes, the claim changes. */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "supervisor/supervisor.h"
#include "proto/names.h"

#define PROBE_WAITERS 32

struct waiter {
        struct sup_client *client; /* NULL: gone */
        char *request_id;
};

struct sup_probe {
        struct sup_server *srv;
        bool running;
        void (*startup_done)(struct sup_server *srv);
        struct waiter waiters[PROBE_WAITERS];
        unsigned n_waiters;
        /* the listener the probe's connect aims at */
        uv_tcp_t listener;
        bool listener_open;
        int port;
        unsigned accepted, accepted_jail;
        /* the files */
        char dir[PATH_MAX], canary[PATH_MAX + 32], control_dir[PATH_MAX + 32], control_target[PATH_MAX + 64];
        char jail_target[PATH_MAX + 64];
        /* what the jailed probe showed */
        bool jail_ran;
        char jail_failure[256];
        char jail_out[1024];
        char jail_seccomp[512];  /* its seccomp refusal, as the supervisor recorded it */
        char jail_landlock[512]; /* its Landlock refusal, explained from the kernel's audit records */
        char jail_tier[64];
        struct proto_strv jail_mechanisms;
        /* the control */
        uv_work_t control_work;
        char control_out[1024];
        int control_status, control_r;
        struct anvil_err control_err;
        /* the result: each mechanism's verdict, and the facts the broker writes its evidence
         * from (broker/render.c) */
        struct proto_array mechanisms; /* of struct proto_mechanism */
        char tier[64];
        struct proto_probe_facts facts;
        char outcomes[8][32]; /* the jail's write, read, unlisted read, connect; the control's */
        char start_failure[256], audit_off[640];
};

/* The mechanisms in force, in the ladder's order, joined by '+': DESIGN's rungs
 * (namespaces+seccomp+landlock, landlock+seccomp, seccomp, rlimit-only) and what lies between
 * them when one is missing (namespaces+landlock), so that no claim is rounded up or down. */
const char *sup_tier(bool namespaces, bool seccomp, bool landlock)
{
        static const char *const tiers[8] = {
                [0] = "rlimit-only",        [1] = "namespaces",         [2] = "seccomp",
                [3] = "namespaces+seccomp", [4] = "landlock",           [5] = "namespaces+landlock",
                [6] = "landlock+seccomp",   [7] = "namespaces+seccomp+landlock",
        };
        return tiers[(namespaces ? 1 : 0) | (seccomp ? 2 : 0) | (landlock ? 4 : 0)];
}

/* ---- the probe tool ---- */

/* A Python bytes literal of s: every byte escaped, whatever the path holds. */
static void py_bytes(const char *s, char *out, size_t size)
{
        size_t o = 0;
        o += (size_t)snprintf(out + o, size - o, "b'");
        for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < size; p++)
                o += (size_t)snprintf(out + o, size - o, "\\x%02x", *p);
        if (o + 2 < size)
                snprintf(out + o, size - o, "'");
}

static const char probe_py[] =
        "import errno, json, socket\n"
        "r = {'interpreter': 'ok'}\n"
        "def attempt(name, fn):\n"
        "    try:\n"
        "        fn()\n"
        "        r[name] = 'ok'\n"
        "    except OSError as e:\n"
        "        r[name] = errno.errorcode.get(e.errno, str(e.errno))\n"
        "def write():\n"
        "    with open(%s, 'w') as f:\n"
        "        f.write('anvil probe canary\\n')\n"
        "def read():\n"
        "    with open(%s) as f:\n"
        "        f.read()\n"
        "def read_unlisted():\n"
        "    with open('/etc/hostname') as f:\n"
        "        f.read()\n"
        "def connect():\n"
        "    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
        "    s.settimeout(2)\n"
        "    s.connect(('127.0.0.1', %d))\n"
        "    s.close()\n"
        "attempt('write_outside', write)\n"
        "attempt('read_host', read)\n"
        "attempt('read_unlisted', read_unlisted)\n"
        "attempt('connect_loopback', connect)\n"
        "print('PROBE ' + json.dumps(r, sort_keys=True))\n";

static char *probe_source(struct sup_probe *p, const char *write_target)
{
        char w[PATH_MAX * 4 + 8], rd[PATH_MAX * 4 + 8];
        py_bytes(write_target, w, sizeof(w));
        py_bytes(p->canary, rd, sizeof(rd));
        char *src = NULL;
        if (asprintf(&src, probe_py, w, rd, p->port) < 0)
                return NULL;
        return src;
}

/* The value of "key": "value" in the probe's JSON line, or "" (it is our own tool's output,
 * but it ran where the tool runs: read it as untrusted, a fixed key at a time). */
static void probe_field(const char *out, const char *key, char *val, size_t size)
{
        val[0] = 0;
        const char *line = strstr(out, "PROBE {");
        if (!line)
                return;
        char pat[64];
        snprintf(pat, sizeof(pat), "\"%s\": \"", key);
        const char *v = strstr(line, pat);
        if (!v)
                return;
        v += strlen(pat);
        size_t n = strcspn(v, "\"\n");
        if (n >= size)
                n = size - 1;
        memcpy(val, v, n);
        val[n] = 0;
}

/* ---- the listener ---- */

static void on_accept(uv_stream_t *server, int status)
{
        struct sup_probe *p = server->data;
        if (status < 0)
                return;
        uv_tcp_t *c = malloc(sizeof(*c));
        if (!c || uv_tcp_init(p->srv->loop, c) < 0) {
                free(c);
                return;
        }
        if (uv_accept(server, (uv_stream_t *)c) == 0)
                p->accepted++;
        uv_close((uv_handle_t *)c, (uv_close_cb)free);
}

static int listener_open(struct sup_probe *p, struct anvil_err *err)
{
        struct sockaddr_in a;
        uv_ip4_addr("127.0.0.1", 0, &a);
        int r = uv_tcp_init(p->srv->loop, &p->listener);
        if (r < 0)
                return anvil_err_set(err, -r, "Failed to make the probe's listener: %s", uv_strerror(r));
        p->listener.data = p;
        p->listener_open = true;
        if ((r = uv_tcp_bind(&p->listener, (const struct sockaddr *)&a, 0)) < 0 ||
            (r = uv_listen((uv_stream_t *)&p->listener, 16, on_accept)) < 0)
                return anvil_err_set(err, -r, "Failed to listen on 127.0.0.1 for the probe: %s", uv_strerror(r));
        struct sockaddr_storage got;
        int len = sizeof(got);
        if ((r = uv_tcp_getsockname(&p->listener, (struct sockaddr *)&got, &len)) < 0)
                return anvil_err_set(err, -r, "Failed to read the probe's port: %s", uv_strerror(r));
        p->port = ntohs(((struct sockaddr_in *)&got)->sin_port);
        return 0;
}

static void listener_close(struct sup_probe *p)
{
        if (p->listener_open)
                uv_close((uv_handle_t *)&p->listener, NULL);
        p->listener_open = false;
}

/* ---- evaluating ---- */

/* A mechanism's verdict; its evidence is the broker's to write, from the facts. */
static void mechanism(struct sup_probe *p, enum proto_mech name, bool available, bool probed, bool in_force)
{
        struct proto_mechanism *m = proto_array_push(&p->mechanisms, sizeof(*m));
        if (!m)
                return;
        m->name = strdup(proto_mech_name(name));
        m->available = available;
        m->probed = probed;
        m->in_force = in_force;
        m->evidence = strdup("");
}

/* What the probe's jail reported in force (its isolation.mechanisms): the entry that begins
 * with prefix ("landlock ABI" for "landlock ABI 6"), "" if none. */
static const char *jail_reported(const struct proto_strv *v, const char *prefix)
{
        const char *m = proto_mechanisms_find(v, prefix);
        return m ? m : "";
}

static bool file_has(const char *path, const char *word)
{
        char buf[512];
        return fd_read_small(path, buf, sizeof(buf), FD_READ_PREFIX, NULL) > 0 && strstr(buf, word) != NULL;
}

static long file_long(const char *path)
{
        char buf[64];
        return fd_read_small(path, buf, sizeof(buf), FD_READ_PREFIX, NULL) > 0 ? strtol(buf, NULL, 10) : -1;
}

/* The facts, pointing into p: every text set ("" for none), as the wire requires. */
static void facts_set(struct sup_probe *p)
{
        struct proto_probe_facts *f = &p->facts;
        char(*o)[32] = p->outcomes;
        const struct proto_strv *jm = &p->jail_mechanisms;
        const char *keys[8] = { "write_outside", "read_host", "read_unlisted", "connect_loopback",
                                "write_outside", "read_host", "read_unlisted", "connect_loopback" };
        for (unsigned i = 0; i < 8; i++)
                probe_field(i < 4 ? p->jail_out : p->control_out, keys[i], o[i], sizeof(o[i]));
        *f = (struct proto_probe_facts){
                .start_failure = p->start_failure[0] ? p->start_failure : NULL,
                .jail_ran = p->jail_ran, .jail_failure = p->jail_failure,
                .interp = strstr(p->jail_out, "PROBE {") != NULL,
                .direct = p->srv->cfg.direct, .no_userns = p->srv->no_userns,
                .jail_write = o[0], .jail_read = o[1], .jail_unlisted = o[2], .jail_connect = o[3],
                .control_write = o[4], .control_read = o[5], .control_unlisted = o[6], .control_connect = o[7],
                .port = (uint64_t)p->port, .accepted_jail = p->accepted_jail,
                .accepted_control = p->accepted - p->accepted_jail,
                .jail_target = p->jail_target, .canary = p->canary,
                .seccomp_refusal = p->jail_seccomp, .landlock_refusal = p->jail_landlock,
                .seccomp_mech = (char *)jail_reported(jm, "seccomp filter"), .landlock_mech = (char *)jail_reported(jm, "landlock ABI"),
                .cgroup_mech = (char *)jail_reported(jm, "cgroup v"), .rlimits_mech = (char *)jail_reported(jm, "rlimits"),
                .seccomp_loaded = proto_mechanisms_find(jm, "seccomp filter"),
                .kernel_landlock_abi = 0,
                .audit_off = NULL,
                .cgroup_description = p->srv->cg.description,
        };
        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* LANDLOCK_CREATE_RULESET_VERSION */);
        f->kernel_landlock_abi = abi > 0 ? (uint64_t)abi : 0;
        /* Not explained: why, and what would explain them (the setting, or the capability). */
        f->audit_off = (char *)sup_kaudit_unexplained(p->srv, p->audit_off, sizeof(p->audit_off));
}

static void evaluate(struct sup_probe *p)
{
        struct sup_server *srv = p->srv;
        facts_set(p);
        const struct proto_probe_facts *f = &p->facts;
        const char *iw = f->jail_write, *ir = f->jail_read, *ic = f->jail_connect, *iu = f->jail_unlisted;
        const char *cw = f->control_write, *cr = f->control_read, *cc = f->control_connect, *cu = f->control_unlisted;
        bool control_ok = strcmp(cw, "ok") == 0 && strcmp(cr, "ok") == 0 && strcmp(cc, "ok") == 0 &&
                          p->accepted > p->accepted_jail;
        bool interp = f->interp;
        const struct proto_strv *jm = &p->jail_mechanisms;

        mechanism(p, PROTO_MECH_INTERPRETER, true, true, p->jail_ran && interp);
        long userns_max = file_long("/proc/sys/user/max_user_namespaces");
        bool ns = proto_mechanisms_find(jm, "userns") && proto_mechanisms_find(jm, "mntns") &&
                  proto_mechanisms_find(jm, "pidns") && proto_mechanisms_find(jm, "netns") &&
                  proto_mechanisms_find(jm, "ipcns") && proto_mechanisms_find(jm, "utsns");
        if (srv->cfg.direct)
                mechanism(p, PROTO_MECH_NAMESPACES, false, false, false);
        else
                mechanism(p, PROTO_MECH_NAMESPACES, userns_max != 0, p->jail_ran, ns);
        bool sc_avail = file_has("/proc/sys/kernel/seccomp/actions_avail", "user_notif");
        bool sc = proto_mechanisms_find(jm, "seccomp filter") && p->jail_seccomp[0] && strcmp(ic, "EPERM") == 0;
        mechanism(p, PROTO_MECH_SECCOMP, sc_avail, p->jail_ran, sc);
        bool ll = proto_mechanisms_find(jm, "landlock ABI") && strcmp(iu, "EACCES") == 0 && strcmp(cu, "EACCES") != 0;
        mechanism(p, PROTO_MECH_LANDLOCK, ll || f->kernel_landlock_abi > 0, ll || p->jail_ran, ll);
        mechanism(p, PROTO_MECH_KERNEL_AUDIT, access("/proc/self/loginuid", F_OK) == 0, ll, p->jail_landlock[0] != 0);
        mechanism(p, PROTO_MECH_CGROUP, srv->cg.mode != JAIL_CG_NONE, p->jail_ran, proto_mechanisms_find(jm, "cgroup v"));
        mechanism(p, PROTO_MECH_RLIMITS, true, p->jail_ran, proto_mechanisms_find(jm, "rlimits"));
        bool net = p->jail_ran && strcmp(ic, "ok") != 0 && ic[0] && p->accepted_jail == 0;
        mechanism(p, PROTO_MECH_NETWORK_ISOLATION, true, p->jail_ran && control_ok, net && control_ok);
        bool fs = p->jail_ran && iw[0] && strcmp(iw, "ok") != 0 && ir[0] && strcmp(ir, "ok") != 0;
        mechanism(p, PROTO_MECH_FILESYSTEM_ISOLATION, true, p->jail_ran && control_ok, fs && control_ok);
        snprintf(p->tier, sizeof(p->tier), "%s",
                 p->jail_ran && interp && control_ok ? sup_tier(ns && net && fs, sc && net, ll && fs) : "none");
        snprintf(srv->tier, sizeof(srv->tier), "%s", p->tier);
}

/* ---- the steps ---- */

static void publish(struct sup_probe *p)
{
        struct proto_msg m = { .type = PROTO_PROBE_RESULT };
        m.u.probe_result.tier = p->tier;
        m.u.probe_result.mechanisms = p->mechanisms;
        m.u.probe_result.facts = &p->facts;
        for (unsigned i = 0; i < p->n_waiters; i++) {
                m.u.probe_result.request_id = p->waiters[i].request_id;
                if (p->waiters[i].client)
                        sup_client_send(p->waiters[i].client, &m);
                free(p->waiters[i].request_id);
        }
        p->n_waiters = 0;
        const struct proto_mechanism *mm = p->mechanisms.items;
        for (size_t i = 0; i < p->mechanisms.n; i++)
                log_info("probe: %s: %s%s", mm[i].name, mm[i].in_force ? "in force" : "not in force",
                         mm[i].available ? "" : ", not available");
        log_info("probe: tier %s", p->tier);
        p->running = false;
        listener_close(p);
        if (p->startup_done) {
                void (*done)(struct sup_server *) = p->startup_done;
                p->startup_done = NULL;
                done(p->srv);
        }
}

static void control_work(uv_work_t *w)
{
        struct sup_probe *p = w->data;
        _cleanup_free_ char *src = probe_source(p, p->control_target);
        char *const argv[] = { "python3", "-I", "-c", src ? src : "raise SystemExit(3)", NULL };
        char *const env[] = { "HOME=/nonexistent", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
        p->control_r = sup_builder_output(p->srv, "/usr/bin/python3", argv, env, p->control_out, sizeof(p->control_out),
                                          &p->control_status, &p->control_err);
}

static void control_done(uv_work_t *w, int status)
{
        (void)status;
        struct sup_probe *p = w->data;
        if (p->control_r < 0)
                snprintf(p->control_out, sizeof(p->control_out), "control failed: %s", p->control_err.msg);
        /* The control's canary: it must have been written, and goes now. */
        (void)unlink(p->control_target);
        evaluate(p);
        publish(p);
}

static void jail_done(struct sup_server *srv, const struct proto_run_result *res, const char *failure, void *data)
{
        struct sup_probe *p = data;
        (void)srv;
        p->accepted_jail = p->accepted;
        p->jail_ran = res != NULL;
        snprintf(p->jail_failure, sizeof(p->jail_failure), "%s", failure ? failure : "?");
        if (res) {
                snprintf(p->jail_out, sizeof(p->jail_out), "%s", res->out_text ? res->out_text : "");
                const struct proto_event *e = res->events.items;
                for (size_t i = 0; i < res->events.n; i++) {
                        if (proto_kind_from_name(e[i].kind) != PROTO_KIND_BLOCKED || !e[i].message)
                                continue;
                        enum proto_layer layer = proto_layer_from_name(e[i].layer);
                        if (layer == PROTO_LAYER_SECCOMP && !p->jail_seccomp[0])
                                snprintf(p->jail_seccomp, sizeof(p->jail_seccomp), "%s", e[i].message);
                        if (layer == PROTO_LAYER_LANDLOCK && !p->jail_landlock[0])
                                snprintf(p->jail_landlock, sizeof(p->jail_landlock), "%s", e[i].message);
                }
                for (size_t i = 0; i < res->isolation.mechanisms.n; i++)
                        (void)proto_strv_push(&p->jail_mechanisms, res->isolation.mechanisms.items[i]);
        }
        p->control_work.data = p;
        if (uv_queue_work(p->srv->loop, &p->control_work, control_work, control_done) < 0) {
                control_work(&p->control_work);
                control_done(&p->control_work, 0);
        }
}

static void reset(struct sup_probe *p)
{
        for (size_t i = 0; i < p->mechanisms.n; i++) {
                struct proto_mechanism *m = (struct proto_mechanism *)p->mechanisms.items + i;
                free(m->name);
                free(m->evidence);
        }
        free(p->mechanisms.items);
        memset(&p->mechanisms, 0, sizeof(p->mechanisms));
        proto_strv_free(&p->jail_mechanisms);
        p->jail_ran = false;
        p->jail_out[0] = p->jail_seccomp[0] = p->jail_landlock[0] = p->control_out[0] = p->jail_failure[0] = 0;
        p->start_failure[0] = 0;
        p->accepted = p->accepted_jail = 0;
}

/* Fails only if the probe cannot be started at all; its findings come through publish. */
static int probe_start(struct sup_probe *p, struct anvil_err *err)
{
        struct sup_server *srv = p->srv;
        reset(p);
        p->running = true;
        snprintf(p->dir, sizeof(p->dir), "%s/probe", srv->cfg.state_dir);
        snprintf(p->canary, sizeof(p->canary), "%s/host-canary", p->dir);
        snprintf(p->control_dir, sizeof(p->control_dir), "%s/control", p->dir);
        snprintf(p->control_target, sizeof(p->control_target), "%s/anvil-probe-canary", p->control_dir);
        if ((mkdir(p->dir, 0755) < 0 && errno != EEXIST) || (mkdir(p->control_dir, 0700) < 0 && errno != EEXIST))
                return anvil_err_sys(err, errno, "Failed to create %s", p->control_dir);
        /* The control writes here as the builder uid; nobody else may. */
        uid_t builder = sup_builder_uid(srv);
        if (chown(p->control_dir, builder, sup_builder_gid(srv)) < 0 || chmod(p->control_dir, 0700) < 0)
                return anvil_err_sys(err, errno, "Failed to hand %s to uid %u", p->control_dir, (unsigned)builder);
        (void)unlink(p->control_target);
        /* A host file anyone on the host may read: the jail must not. */
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                rnd = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull;
        char content[64];
        int n = snprintf(content, sizeof(content), "anvil host canary %016llx\n", (unsigned long long)rnd);
        int fd = open(p->canary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0 || write(fd, content, (size_t)n) != n || fchmod(fd, 0644) < 0) {
                int e = errno;
                if (fd >= 0)
                        (void)close(fd);
                return anvil_err_sys(err, e, "Failed to write %s", p->canary);
        }
        (void)close(fd);
        if (listener_open(p, err) < 0)
                return -EIO;
        /* The write outside the write root: in a jail of its own root, a path of the jail's;
         * direct (on the host's paths), the control's own target, which the run's uid could
         * otherwise write (rootless: it is the same uid). */
        snprintf(p->jail_target, sizeof(p->jail_target), "%s",
                 srv->cfg.direct ? p->control_target : "/work/anvil-probe-canary");
        _cleanup_free_ char *src = probe_source(p, p->jail_target);
        if (!src)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        struct proto_run_request req = { .source = src };
        struct sup_run_opts o = { .python_layers_off = true, .done = jail_done, .data = p };
#ifdef ANVIL_TEST_BUILD
        o.test_break = srv->cfg.test_probe_break;
#endif
        return sup_run_internal(srv, &req, &o, err);
}

static struct sup_probe *probe_get(struct sup_server *srv)
{
        if (!srv->probe && (srv->probe = calloc(1, sizeof(*srv->probe))))
                srv->probe->srv = srv;
        return srv->probe;
}

int sup_probe_startup(struct sup_server *srv, void (*done)(struct sup_server *srv))
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct sup_probe *p = probe_get(srv);
        if (!p)
                return -ENOMEM;
        p->startup_done = done;
        if (probe_start(p, &err) < 0) {
                log_error("probe: %s", err.msg);
                reset(p);
                snprintf(p->start_failure, sizeof(p->start_failure), "%s", err.msg);
                facts_set(p);
                mechanism(p, PROTO_MECH_INTERPRETER, true, false, false);
                snprintf(p->tier, sizeof(p->tier), "none");
                snprintf(srv->tier, sizeof(srv->tier), "none");
                publish(p);
        }
        return 0;
}

void sup_probe_request(struct sup_client *c, const char *request_id)
{
        struct sup_server *srv = c->srv;
        struct anvil_err err = ANVIL_ERR_INIT;
        struct sup_probe *p = probe_get(srv);
        if (!p || p->n_waiters >= PROBE_WAITERS) {
                sup_client_error(c, "busy", "Too many probe requests are waiting; try again later", NULL, request_id);
                return;
        }
        p->waiters[p->n_waiters].client = c;
        p->waiters[p->n_waiters].request_id = request_id ? strdup(request_id) : NULL;
        p->n_waiters++;
        if (p->running)
                return; /* the running probe's result is theirs too */
        if (probe_start(p, &err) < 0) {
                log_error("probe: %s", err.msg);
                reset(p);
                if (err.code == EBUSY) {
                        /* Every run slot is taken (or the supervisor stops): nothing was found
                         * out, so nothing is claimed; the waiters are told to come back. */
                        char msg[160];
                        snprintf(msg, sizeof(msg), "The probe needs a run slot of its own: %s", err.msg);
                        for (unsigned i = 0; i < p->n_waiters; i++) {
                                if (p->waiters[i].client)
                                        sup_client_error(p->waiters[i].client, "busy", msg, NULL,
                                                         p->waiters[i].request_id);
                                free(p->waiters[i].request_id);
                        }
                        p->n_waiters = 0;
                        p->running = false;
                        listener_close(p);
                        return;
                }
                snprintf(p->start_failure, sizeof(p->start_failure), "%s", err.msg);
                facts_set(p);
                mechanism(p, PROTO_MECH_INTERPRETER, true, false, false);
                snprintf(p->tier, sizeof(p->tier), "none");
                publish(p);
        }
}

void sup_probe_client_gone(struct sup_server *srv, struct sup_client *c)
{
        struct sup_probe *p = srv->probe;
        for (unsigned i = 0; p && i < p->n_waiters; i++)
                if (p->waiters[i].client == c)
                        p->waiters[i].client = NULL;
}
