#include "runner/runner.h"

#include <stdlib.h>
#include <string.h>

#include "jail/jail.h"
#include "lib/fd.h"
#include "lib/utf8.h"

/* text, or a copy in buf cut to max bytes on a character boundary and ending "...": what a
 * tool controls (a path of 3000 bytes in op and message) must not make its event malformed,
 * which the supervisor would take as the runner's fault and end the run. */
static const char *fit(const char *text, size_t max, char *buf)
{
        if (!text || strlen(text) <= max)
                return text;
        size_t n = utf8_prefix_len(text, max - 3);
        memcpy(buf, text, n);
        memcpy(buf + n, "...", 4);
        return buf;
}

void runner_event(struct runner *r, const char *layer, const char *kind, const char *op, const char *reason,
                  const char *message, long line, long col, const char *traceback)
{
        char op_buf[PROTO_EV_OP_MAX + 1], reason_buf[PROTO_REASON_MAX + 1], message_buf[PROTO_EV_MESSAGE_MAX + 1],
                tb_buf[PROTO_EV_TRACEBACK_MAX + 1];
        struct proto_msg m = { .type = PROTO_RUNNER_EVENT };
        struct proto_event *e = &m.u.runner_event.event;
        e->t_ms = now_ms() - r->t0;
        e->layer = (char *)layer;
        e->kind = (char *)kind;
        e->op = (char *)fit(op, PROTO_EV_OP_MAX, op_buf);
        e->reason = (char *)fit(reason, PROTO_REASON_MAX, reason_buf);
        e->message = (char *)fit(message, PROTO_EV_MESSAGE_MAX, message_buf);
        traceback = fit(traceback, PROTO_EV_TRACEBACK_MAX, tb_buf);
        if (line > 0) {
                e->line.set = true;
                e->line.v = line;
        }
        if (col > 0) {
                e->col.set = true;
                e->col.v = col;
        }
        e->traceback = (char *)traceback;
        (void)proto_write_msg(JAIL_FD_EVENTS, &m, NULL);
}

void runner_send(struct runner *r, struct proto_msg *m)
{
        m->u.runner_event.event.t_ms = now_ms() - r->t0;
        (void)proto_write_msg(JAIL_FD_EVENTS, m, NULL);
}

int runner_realpath(const char *path, char *out, size_t size, void *ctx)
{
        (void)ctx;
        char buf[PATH_MAX];
        if (!realpath(path, buf))
                return -errno;
        if (strlen(buf) >= size)
                return -ENAMETOOLONG;
        strcpy(out, buf);
        return 0;
}

static int resolve(const char *in, char *out)
{
        return pol_path_resolve(in, "/", runner_realpath, NULL, out, PATH_MAX);
}

int runner_policy_init(struct runner *r, const struct proto_run_spec *spec)
{
        if (resolve(spec->workdir, r->workdir) < 0 || spec->read_roots.n > POL_ROOTS_MAX ||
            spec->write_roots.n > POL_ROOTS_MAX)
                return -EINVAL;
        r->roots.workdir = r->workdir;
        for (size_t i = 0; i < spec->read_roots.n; i++) {
                if (resolve(spec->read_roots.items[i], r->read[i]) < 0)
                        return -EINVAL;
                r->roots.read[r->roots.n_read++] = r->read[i];
        }
        for (size_t i = 0; i < spec->write_roots.n; i++) {
                if (resolve(spec->write_roots.items[i], r->write[i]) < 0)
                        return -EINVAL;
                r->roots.write[r->roots.n_write++] = r->write[i];
        }
        if (spec->scratch) {
                if (resolve(spec->scratch, r->scratch) < 0)
                        return -EINVAL;
                r->roots.scratch = r->scratch;
        }
        r->roots.system = pol_jail_system_root(); /* the jail's table: /usr */
        for (size_t i = 0; i < spec->capabilities_granted.n; i++) {
                int c = pol_cap_from_name(spec->capabilities_granted.items[i]);
                if (c >= 0)
                        r->caps.granted[c] = true;
        }
        /* Granted network, the one way out: the relay on the jail's loopback (jail/relay.c),
         * named for every HTTP client the tool may use, before the interpreter starts (R4) so
         * that os.environ has it from the first line. */
        if (r->caps.granted[POL_CAP_NETWORK]) {
                static const char *const names[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy" };
                for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                        if (setenv(names[i], JAIL_EGRESS_PROXY, 1) < 0)
                                return -errno;
                (void)unsetenv("NO_PROXY");
                (void)unsetenv("no_proxy");
        }
        return 0;
}

bool runner_network_granted(const struct proto_run_spec *spec)
{
        for (size_t i = 0; i < spec->capabilities_granted.n; i++)
                if (strcmp(spec->capabilities_granted.items[i], "network") == 0)
                        return true;
        return false;
}
