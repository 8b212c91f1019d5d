/* Jail children, and spares of them cloned ahead of time.
 *
 * Moving a process into a cgroup v1 hierarchy waits for an RCU grace period (the write side
 * of cgroup_threadgroup_rwsem: 10-15 ms on the machine this was measured on, more than it
 * takes to build a jail), and cloning into six new namespaces costs about a millisecond. A
 * spare has paid both before any run asks: it is cloned (C1), has closed everything it
 * inherited (C2), has its uid map, sits in its own cgroup, has built the run-independent part
 * of its root, and waits at C5 for GO. Nothing of
 * any run is in it before GO, and it runs no code but ours: taking one is taking a jail
 * that has not been built yet, only begun. A run that finds no spare clones its own child
 * the same way (the cold path), and waits for the attach in parallel with the child's work. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/log.h"
#include "policy/limits.h"
#include "supervisor/supervisor.h"

/* max_runs + spares + warm slots: each spare and each warm jail holds one, and each run one from its child's clone (or
 * the spare it took) until its teardown is done; run.c holds a run's place among max_runs
 * as long, so an admitted run or a spare never finds them all in use. */
static int alloc_slot(struct sup_server *srv)
{
        unsigned cap = srv->cfg.max_runs + srv->cfg.spares + srv->cfg.warm;
        for (unsigned i = 0; i < cap && i < SUP_MAX_SLOTS; i++)
                if (!srv->slots[i]) {
                        srv->slots[i] = true;
                        return (int)i;
                }
        return -1;
}

static void teardown_now(struct sup_jailproc *jp);

/* S0: a jail child cloned (C1) with its uid/gid maps and a cgroup of its own. */
int sup_jailproc_spawn(struct sup_server *srv, struct sup_jailproc *jp, struct anvil_err *err)
{
        memset(jp, 0, sizeof(*jp));
        jp->pidfd = jp->sync_fd = -1;
        for (unsigned i = 0; i < SUP_HELD_NS; i++)
                jp->ns_fds[i] = -1;
        jp->slot = alloc_slot(srv);
        if (jp->slot < 0)
                return anvil_err_set(err, EBUSY, "All %u jail slots are in use",
                                     srv->cfg.max_runs + srv->cfg.spares + srv->cfg.warm);
        /* Root: a host uid of the run's own. Rootless: ours, the only one we may map. */
        jp->uid = srv->cfg.rootless ? geteuid() : srv->cfg.uid_base + 1 + (uid_t)jp->slot;
        char name[32];
        snprintf(name, sizeof(name), "j%llu", (unsigned long long)++srv->jail_seq);
        /* The run's own limits replace these when it takes the child. */
        uint64_t mem = srv->cfg.limits.r[PROTO_LIMIT_MEMORY_MB].dflt << 20;
        int r = jail_cgroup_prepare(&srv->cg, name, mem + mem / 4, srv->cfg.limits.r[PROTO_LIMIT_PIDS].dflt, &jp->cg,
                                    err);
        if (r < 0)
                goto fail;
        int sy[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sy) < 0) {
                r = anvil_err_sys(err, errno, "Failed to create the sync socket");
                goto fail;
        }
        jp->sync_fd = sy[0];
        srv->jail.sync_fd = sy[1];
        r = jail_contain_clone(&srv->jail, &jp->pid, &jp->pidfd, err);
        (void)close(sy[1]);
        srv->jail.sync_fd = -1;
        if (r < 0)
                goto fail;
        /* Tearing down a mount namespace waits for a grace period, and the last process in it
         * pays, in its exit, before its parent hears of it; a network namespace's cleanup
         * takes a kernel worker milliseconds of CPU just as the run's result is being made.
         * The supervisor holds both, and lets go of them on the thread pool after the run.
         * Opened while the child waits at C3: a rootless supervisor may open them only while
         * the child is dumpable, which it is until MAPPED (C3); after, the open raced with it. */
        static const char *const held[SUP_HELD_NS] = { "mnt", "net", "ipc", "pid" };
        for (unsigned i = 0; i < SUP_HELD_NS; i++) {
                char p[64];
                snprintf(p, sizeof(p), "/proc/%d/ns/%s", (int)jp->pid, held[i]);
                jp->ns_fds[i] = open(p, O_RDONLY | O_CLOEXEC);
        }
        /* Direct: no map to write; the child takes the run's uid itself (as root), named here. */
        struct jail_msg mapped = { .kind = JAIL_MSG_MAPPED, .pid = (int32_t)jp->uid };
        if ((r = srv->cfg.direct ? 0 : jail_userns_parent(jp->pid, jp->uid, srv->cfg.rootless ? getegid() : jp->uid, err)) >= 0 &&
            send(jp->sync_fd, &mapped, sizeof(mapped), MSG_NOSIGNAL) != sizeof(mapped))
                r = anvil_err_sys(err, errno, "Failed to release the jail's child");
        if (r < 0) {
                sup_jailproc_discard(srv, jp);
                return r;
        }
        return 0;
fail:
        sup_jailproc_close(jp);
        teardown_now(jp);
        sup_jailproc_free_slot(srv, jp);
        return r;
}

void sup_jailproc_close(struct sup_jailproc *jp)
{
        close_reset(&jp->pidfd);
        close_reset(&jp->sync_fd);
}

/* Both of these wait for an RCU grace period: callers run it on the thread pool. A cgroup
 * that cannot be removed is reported; the next start-up sweep retries it. */
int sup_jailproc_teardown(struct sup_jailproc *jp, struct anvil_err *err)
{
        for (unsigned i = 0; i < SUP_HELD_NS; i++)
                close_reset(&jp->ns_fds[i]);
        return jail_cgroup_destroy(&jp->cg, err);
}

/* The same, on the loop, for a child that never ran a tool. */
static void teardown_now(struct sup_jailproc *jp)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        if (sup_jailproc_teardown(jp, &err) < 0)
                log_warn("jail child: %s (the next start-up sweep retries)", err.msg);
}

void sup_jailproc_free_slot(struct sup_server *srv, struct sup_jailproc *jp)
{
        if (jp->slot >= 0)
                srv->slots[jp->slot] = false;
        jp->slot = -1;
}

void sup_jailproc_discard(struct sup_server *srv, struct sup_jailproc *jp)
{
        if (jp->pidfd >= 0) {
                siginfo_t si;
                (void)pidfd_send_signal(jp->pidfd, SIGKILL, NULL, 0);
                while (waitid(P_PIDFD, (id_t)jp->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                        ;
        }
        sup_jailproc_close(jp);
        teardown_now(jp);
        sup_jailproc_free_slot(srv, jp);
}

int sup_jailproc_attach(struct sup_jailproc *jp, struct anvil_err *err)
{
        return jail_cgroup_parent(&jp->cg, jp->pid, err);
}

/* ---- spares ---- */

static void spare_attach_work(uv_work_t *w)
{
        struct sup_spare *sp = w->data;
        sp->attach_r = sup_jailproc_attach(&sp->jp, &sp->attach_err);
}

static void spare_attach_done(uv_work_t *w, int status)
{
        struct sup_spare *sp = w->data;
        if (status < 0 || sp->attach_r < 0 || sp->srv->stopping) {
                if (sp->attach_r < 0)
                        log_warn("spare jail: %s", sp->attach_err.msg);
                sup_jailproc_discard(sp->srv, &sp->jp);
                sp->state = SPARE_EMPTY;
                return;
        }
        sp->state = SPARE_READY;
}

static void refill(uv_timer_t *t)
{
        struct sup_server *srv = t->data;
        struct anvil_err err = ANVIL_ERR_INIT;
        for (unsigned i = 0; i < srv->cfg.spares && !srv->stopping; i++) {
                struct sup_spare *sp = &srv->spares[i];
                if (sp->state != SPARE_EMPTY)
                        continue;
                if (sup_jailproc_spawn(srv, &sp->jp, &err) < 0) {
                        log_warn("spare jail: %s", err.msg); /* retried at the next take */
                        return;
                }
                if (sp->jp.cg.mode == JAIL_CG_NONE) {
                        sp->state = SPARE_READY;
                        continue;
                }
                sp->srv = srv;
                sp->work.data = sp;
                sp->state = SPARE_ATTACHING;
                if (uv_queue_work(srv->loop, &sp->work, spare_attach_work, spare_attach_done) < 0) {
                        sup_jailproc_discard(srv, &sp->jp);
                        sp->state = SPARE_EMPTY;
                }
        }
}

bool sup_pool_take(struct sup_server *srv, struct sup_jailproc *jp)
{
        for (unsigned i = 0; i < srv->cfg.spares; i++) {
                struct sup_spare *sp = &srv->spares[i];
                if (sp->state != SPARE_READY)
                        continue;
                sp->state = SPARE_EMPTY;
                siginfo_t si;
                memset(&si, 0, sizeof(si));
                if (waitid(P_PIDFD, (id_t)sp->jp.pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid != 0) {
                        /* It died while waiting (killed from outside): never used. */
                        log_warn("spare jail: pid %d ended while waiting", (int)sp->jp.pid);
                        sup_jailproc_close(&sp->jp);
                        teardown_now(&sp->jp);
                        sup_jailproc_free_slot(srv, &sp->jp);
                        continue;
                }
                /* Its root may still be in the making (GO then waits in the socket); if
                 * making it failed, it says so here, and is not handed to a run. */
                struct jail_msg m;
                ssize_t n = recv(sp->jp.sync_fd, &m, sizeof(m), MSG_DONTWAIT);
                if (n > 0 && (n != (ssize_t)sizeof(m) || m.kind != JAIL_MSG_PREPARED)) {
                        m.msg[sizeof(m.msg) - 1] = 0;
                        log_warn("spare jail: %s", n == (ssize_t)sizeof(m) ? m.msg : "malformed record");
                        sup_jailproc_discard(srv, &sp->jp);
                        continue;
                }
                *jp = sp->jp;
                /* The next one is cloned on the next turn of the loop, after this run's GO. */
                (void)uv_timer_start(&srv->refill_timer, refill, 0, 0);
                return true;
        }
        if (srv->cfg.spares)
                (void)uv_timer_start(&srv->refill_timer, refill, 0, 0);
        return false;
}

void sup_pool_start(struct sup_server *srv)
{
        uv_timer_init(srv->loop, &srv->refill_timer);
        srv->refill_timer.data = srv;
        for (unsigned i = 0; i < SUP_MAX_SPARES; i++)
                srv->spares[i].srv = srv;
        if (srv->cfg.spares)
                (void)uv_timer_start(&srv->refill_timer, refill, 0, 0);
}

/* Ready spares go now; attaching ones in their done callback (srv->stopping). */
void sup_pool_stop(struct sup_server *srv)
{
        (void)uv_timer_stop(&srv->refill_timer);
        uv_close((uv_handle_t *)&srv->refill_timer, NULL);
        for (unsigned i = 0; i < srv->cfg.spares; i++)
                if (srv->spares[i].state == SPARE_READY) {
                        sup_jailproc_discard(srv, &srv->spares[i].jp);
                        srv->spares[i].state = SPARE_EMPTY;
                }
}
