/* seccomp (DESIGN §5): the runner's filter, built with libseccomp from policy/seccomp_rules.c's
 * table. Where each part lives, and why:
 *   the rules        policy/seccomp_rules.c: pure, and needed on both sides: the runner builds
 *                    the filter from them, the supervisor matches a notification to its rule
 *   building, install this file, linked into anvil-py (not the supervisor): a filter binds
 *                    the process that installs it and its children, so the runner installs it
 *                    on itself (R6), after its interpreter's start-up
 *   checking         from outside: the supervisor reads the runner's /proc status (Seccomp,
 *                    Seccomp_filters, NoNewPrivs) before the tool starts (supervisor/notify.c)
 *   explaining       the supervisor's, outside the jail where the tool cannot reach the
 *                    record: each notification decoded and answered (supervisor/notify.c, with
 *                    policy/seccomp_rules.c's pol_sc_describe)
 * It lives in jail/ beside the other mechanisms though root never runs it. Installed by anvil-py after the interpreter's start-up and before it reads any of
 * the request's bytes (R6, runner/main.c: before the variables are decoded and the
 * source is parsed by the pre-check), so it binds that parsing, the tool and everything the
 * tool starts (threads only: see the table), and none of the interpreter's start-up.
 *
 * Refused calls are not answered in the filter: they go to the supervisor as user
 * notifications (SECCOMP_RET_USER_NOTIF), and the supervisor, outside the jail, records
 * the call with its decoded arguments and answers EPERM. The tool cannot suppress that
 * record: it is written by a process it cannot reach. The listener fd travels runner ->
 * pid 1 -> supervisor (jail/pid1.c) and no copy is left in the jail. If the supervisor never
 * gets it, the kernel answers every notification ENOSYS: refused all the same.
 *
 * Non-native ABIs (i386, x32) are notified too (libseccomp's bad-arch action), and the
 * supervisor kills the run on the first one, after recording it. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "jail/jail.h"
#include "policy/seccomp_rules.h"

static int add_rule(scmp_filter_ctx ctx, const struct pol_sc_rule *r)
{
        uint32_t action = r->cond == POL_SC_ENOSYS ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_NOTIFY;
        switch (r->cond) {
        case POL_SC_ALWAYS:
        case POL_SC_ENOSYS: return seccomp_rule_add_exact(ctx, action, r->nr, 0);
        case POL_SC_NOT_UNIX: return seccomp_rule_add_exact(ctx, action, r->nr, 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
        case POL_SC_NO_THREAD:
                return seccomp_rule_add_exact(ctx, action, r->nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
        case POL_SC_ARG1_EQ32:
                return seccomp_rule_add_exact(ctx, action, r->nr, 1,
                                              SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, r->value));
        case POL_SC_ARG0_NE: return seccomp_rule_add_exact(ctx, action, r->nr, 1, SCMP_A0(SCMP_CMP_NE, r->value));
        }
        return -EINVAL;
}

/* A run granted network: socket() is refused for every family but AF_UNIX and AF_INET, and
 * for AF_INET every type but SOCK_STREAM (no UDP, no raw socket): what the relay path needs,
 * a TCP connection to 127.0.0.1:JAIL_EGRESS_PORT. The address is not the filter's to judge
 * (connect's is a pointer): the supervisor's notification handler refuses and records every
 * other address (supervisor/notify.c), and the jail's namespace (lo alone) and Landlock (the
 * relay's port alone) hold whatever the handler was shown. Type values from socket(2). */
static int add_socket_egress(scmp_filter_ctx ctx, const struct pol_sc_rule *r)
{
        static const unsigned not_stream[] = { 0,          SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, 6 /* DCCP */,
                                               SOCK_PACKET };
        int e = seccomp_rule_add_exact(ctx, SCMP_ACT_NOTIFY, r->nr, 1, SCMP_A0(SCMP_CMP_LT, AF_UNIX));
        if (e == 0)
                e = seccomp_rule_add_exact(ctx, SCMP_ACT_NOTIFY, r->nr, 1, SCMP_A0(SCMP_CMP_GT, AF_INET));
        for (unsigned i = 0; e == 0 && i < sizeof(not_stream) / sizeof(not_stream[0]); i++)
                e = seccomp_rule_add_exact(ctx, SCMP_ACT_NOTIFY, r->nr, 2, SCMP_A0(SCMP_CMP_EQ, AF_INET),
                                           SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, not_stream[i]));
        return e;
}

int jail_seccomp_install(bool egress, int *listener, struct anvil_err *err)
{
        *listener = -1;
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return anvil_err_set(err, ENOMEM, "Failed to create a seccomp filter");
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_NOTIFY);
        if (r < 0) {
                anvil_err_set(err, -r, "Failed to set the seccomp filter's action for other ABIs: %s", strerror(-r));
                goto out;
        }
        /* no_new_privs is already set (pid 1 inherited it from the jail child, C9); the
         * filter may not turn it on behind our back either. */
        (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        for (size_t i = 0; i < pol_sc_n_rules; i++)
                if ((r = egress && pol_sc_rules[i].nr == __NR_socket ? add_socket_egress(ctx, &pol_sc_rules[i])
                                                                     : add_rule(ctx, &pol_sc_rules[i])) < 0) {
                        anvil_err_set(err, -r, "Failed to add the seccomp rule for %s: %s", pol_sc_rules[i].name,
                                      strerror(-r));
                        goto out;
                }
        if ((r = seccomp_load(ctx)) < 0) {
                anvil_err_set(err, -r, "Failed to load the seccomp filter: %s", strerror(-r));
                goto out;
        }
        /* Ours from here: libseccomp remembers the number but closes it only in
         * seccomp_reset(), which nothing calls. */
        *listener = seccomp_notify_fd(ctx);
        if (*listener < 0) {
                r = *listener;
                anvil_err_set(err, -r, "The seccomp filter has no notification fd: %s", strerror(-r));
        }
out:
        seccomp_release(ctx);
        return r < 0 ? r : 0;
}
