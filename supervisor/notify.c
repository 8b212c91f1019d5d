/* seccomp user notifications (S6a in main.c): the runner's filter (jail/seccomp.c) hands
 * every refused call to us, outside the jail, where the tool cannot reach the record.
 *
 * For each notification: the call is matched to its rule of policy/seccomp_rules.c; pointer
 * arguments (a path, a socket address) are read from the caller's memory with
 * process_vm_readv, and kept only if the notification is still valid afterwards (the caller
 * may have died and its pid been reused: what we read would then be another process's);
 * the call is answered EPERM and recorded as an event of layer "seccomp"; a call of a
 * non-native ABI is recorded and the run killed. One exception, let through with
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE: connect() to an AF_UNIX address. That decision does not
 * rest on the address we read (which the caller could change after we read it): every
 * socket in a jail is AF_UNIX, because socket() of any other family is refused in the
 * filter itself, and an AF_UNIX socket reaches nothing outside the jail (policy/seccomp_rules.h).
 * A run granted network: connect() to 127.0.0.1:JAIL_EGRESS_PORT too, the relay's, on the
 * same footing (its namespace has lo alone, Landlock allows that port alone); any other
 * address is refused and recorded.
 *
 * We never block: the listener is polled by libuv, and each callback takes one
 * notification. The caller waits in the kernel meanwhile; if the run ends first, its
 * notifications end with it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "policy/seccomp_rules.h"
#include "supervisor/run.h"

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

/* Refusals recorded per run; beyond it they are counted, and one event says how many. */
#define KERNEL_EVENTS_MAX 200

struct reader {
        pid_t pid;
};

static long read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
        struct reader *rd = ctx;
        struct iovec local = { .iov_base = buf, .iov_len = len };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
        ssize_t n = process_vm_readv(rd->pid, &local, 1, &remote, 1, 0);
        return n < 0 ? -1 : (long)n;
}

static void respond(int fd, uint64_t id, int error, uint32_t flags)
{
        struct seccomp_notif_resp resp = { .id = id, .error = error, .flags = flags };
        /* ENOENT: the caller is gone (killed, or the run is ending). */
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
                log_warn("seccomp: answering a notification failed: %s, ignoring", strerror(errno));
}

static void record(struct sup_run *run, const char *op, enum pol_why why)
{
        if (run->kernel_refusals++ >= KERNEL_EVENTS_MAX)
                return;
        char msg[512];
        POL_REASON(msg, sizeof(msg), KERNEL_BLOCKED, op, pol_why_text(why));
        sup_run_event(run, "seccomp", "blocked", op, pol_why_text(why), msg);
}

static void handle(struct sup_run *run)
{
        int fd = run->notify_fd;
        struct seccomp_notif req;
        memset(&req, 0, sizeof(req)); /* the kernel refuses a request that is not zeroed */
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
                if (errno != ENOENT && errno != EINTR) /* ENOENT: the caller died meanwhile */
                        sup_notify_stop(run);
                return;
        }
        char op[400];
        if (pol_sc_foreign(req.data.arch, req.data.nr)) {
                pol_sc_describe_foreign(req.data.arch, req.data.nr, op, sizeof(op));
                record(run, op, POL_WHY_SECCOMP_ABI);
                /* Never answered: the caller waits in the kernel until the run's end kills it. */
                sup_run_kill_for(run, POL_KILLED_FOREIGN_ABI, "seccomp", 0);
                return;
        }
        uint64_t args[6];
        for (int i = 0; i < 6; i++)
                args[i] = req.data.args[i];
        const struct pol_sc_rule *rule = pol_sc_rule_for(req.data.nr, args);
        struct reader rd = { .pid = (pid_t)req.pid };
        if (rule && (pol_sc_let_through(rule, args, read_mem, &rd) ||
                     (run->egress && pol_sc_let_through_inet(rule, args, read_mem, &rd, JAIL_EGRESS_PORT)))) {
                respond(fd, req.id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
                return;
        }
        /* Recorded before it is answered: when the call returns, the refusal is on the record. */
        if (!rule) {
                /* The filter sends only what the table names; anything else is refused. */
                snprintf(op, sizeof(op), "syscall %d", req.data.nr);
                record(run, op, POL_WHY_SECCOMP_KERNEL);
                respond(fd, req.id, -EPERM, 0);
                return;
        }
        pol_sc_describe(rule, args, read_mem, &rd, op, sizeof(op));
        /* What was read is the caller's only if the notification is still pending now. */
        if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) < 0)
                pol_sc_describe(rule, args, NULL, NULL, op, sizeof(op));
        record(run, op, rule->why);
        respond(fd, req.id, -EPERM, 0);
}

static void on_notify(uv_poll_t *p, int status, int events)
{
        struct sup_run *run = p->data;
        if (status < 0 || (events & UV_DISCONNECT)) {
                sup_notify_stop(run);
                return;
        }
        handle(run);
}

int sup_notify_start(struct sup_run *run, int fd, struct anvil_err *err)
{
        if (run->notify_fd >= 0) {
                (void)close(fd);
                return anvil_err_set(err, EEXIST, "The jail's pid 1 sent a second seccomp listener");
        }
        run->notify_fd = fd;
        int r = uv_poll_init(run->srv->loop, &run->notify_poll, fd);
        if (r < 0)
                return anvil_err_set(err, -r, "Failed to watch the seccomp listener: %s", uv_strerror(r));
        sup_run_track(run, (uv_handle_t *)&run->notify_poll);
        (void)uv_poll_start(&run->notify_poll, UV_READABLE | UV_DISCONNECT, on_notify);
        return 0;
}

int sup_notify_verify(struct sup_run *run, struct anvil_err *err)
{
        char path[96], buf[4096], msg[256];
        /* The runner is pid 1's only child, waiting for our word: it can be neither gone nor
         * reaped, so its pid is its own. */
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)run->jp.pid, (int)run->jp.pid);
        long runner = fd_read_small(path, buf, sizeof(buf), FD_READ_PREFIX, NULL) > 0 ? strtol(buf, NULL, 10) : -1;
        if (runner <= 0) {
                POL_REASON(msg, sizeof(msg), REFUSED_NOT_IN_FORCE, "seccomp", "the runner is not to be found");
                return anvil_err_set(err, EPERM, "%s", msg);
        }
        snprintf(path, sizeof(path), "/proc/%ld/status", runner);
        long mode = -1, filters = -1, nnp = -1;
        if (fd_read_small(path, buf, sizeof(buf), 0, NULL) > 0) {
                mode = proc_status_long(buf, "Seccomp");
                filters = proc_status_long(buf, "Seccomp_filters");
                nnp = proc_status_long(buf, "NoNewPrivs");
        }
        char evidence[160];
        snprintf(evidence, sizeof(evidence),
                 "the runner's /proc status: Seccomp %ld, Seccomp_filters %ld, NoNewPrivs %ld", mode, filters, nnp);
        if (mode != 2 || filters < 1 || nnp != 1) {
                POL_REASON(msg, sizeof(msg), REFUSED_NOT_IN_FORCE, "seccomp", evidence);
                return anvil_err_set(err, EPERM, "%s", msg);
        }
        char mech[256];
        snprintf(mech, sizeof(mech), "seccomp filter, refusals explained by the supervisor (%s)", evidence);
        (void)proto_strv_push(&run->mechanisms, mech);
        run->seccomp_verified = true;
        /* On the record, with its time: the runner reads nothing of the request's before it
         * has our answer (R6), so every later event of its comes after this one. */
        sup_run_event(run, "supervisor", "seccomp_verified", NULL, NULL,
                      POL_REASON(msg, sizeof(msg), SECCOMP_VERIFIED, evidence));
        return 0;
}

void sup_notify_stop(struct sup_run *run)
{
        if (run->notify_poll.data && !uv_is_closing((uv_handle_t *)&run->notify_poll))
                (void)uv_poll_stop(&run->notify_poll);
}

/* At the end of a run: what is pending is answered (the run is over: nothing more waits on
 * it), and the count of refusals not recorded is said once. */
void sup_notify_finish(struct sup_run *run)
{
        sup_notify_stop(run);
        if (run->kernel_refusals > KERNEL_EVENTS_MAX) {
                char msg[160];
                POL_REASON(msg, sizeof(msg), KERNEL_DROPPED,
                           (unsigned long long)(run->kernel_refusals - KERNEL_EVENTS_MAX), (unsigned)KERNEL_EVENTS_MAX);
                sup_run_event(run, "seccomp", "dropped", NULL, NULL, msg);
        }
}
