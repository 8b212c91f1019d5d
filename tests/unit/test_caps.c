/* Unit test for jail/caps.c's jail_caps_drop_bounding, the one capability drop the jail's
 * child (jail_caps_child) and the direct rung (contain.c direct_take_uid) share: in a child
 * process, so this one keeps its sets. As root the bounding and ambient sets are then empty
 * (read back from /proc/self/status); without CAP_SETPCAP it fails with the message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/jail.h"
#include "lib/fd.h"
#include "lib/proc.h"

static bool have_setpcap(void)
{
        cap_t c = cap_get_proc();
        cap_flag_value_t v = CAP_CLEAR;
        if (c)
                (void)cap_get_flag(c, CAP_SETPCAP, CAP_EFFECTIVE, &v);
        cap_free(c);
        return v == CAP_SET;
}

/* What the child saw: 0 if as expected, else a line number. */
static int in_child(void)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        if (have_setpcap()) {
                /* An ambient capability to clear: it must be inheritable first. */
                cap_t c = cap_get_proc();
                cap_value_t one[] = { CAP_NET_BIND_SERVICE };
                if (!c || cap_set_flag(c, CAP_INHERITABLE, 1, one, CAP_SET) < 0 || cap_set_proc(c) < 0 ||
                    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) < 0 ||
                    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE, 0, 0) != 1)
                        return __LINE__;
                cap_free(c);
        }
        int r = jail_caps_drop_bounding(&err);
        if (!have_setpcap())
                return r == -EPERM && strcmp(err.msg, "Failed to drop capability 0 from the bounding set: Operation not permitted") == 0
                               ? 0
                               : __LINE__;
        if (r != 0)
                return __LINE__;
        char status[8192], v[64];
        if (fd_read_small("/proc/self/status", status, sizeof(status), 0, NULL) <= 0)
                return __LINE__;
        if (!proc_status_get(status, "CapBnd", v, sizeof(v)) || strtoull(v, NULL, 16) != 0)
                return __LINE__;
        if (!proc_status_get(status, "CapAmb", v, sizeof(v)) || strtoull(v, NULL, 16) != 0)
                return __LINE__;
        /* Only those two: the effective set is still what it was (caps.c clears it next). */
        if (!proc_status_get(status, "CapEff", v, sizeof(v)) || strtoull(v, NULL, 16) == 0)
                return __LINE__;
        for (int c = 0; c <= CAP_LAST_CAP; c++)
                if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 0)
                        return __LINE__;
        return 0;
}

static void test_drop_bounding(void **state)
{
        (void)state;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(in_child());
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        if (WEXITSTATUS(st) != 0)
                fail_msg("the child failed at test_caps.c:%d (%s)", WEXITSTATUS(st),
                         have_setpcap() ? "with CAP_SETPCAP" : "without CAP_SETPCAP");
        /* This process kept its own. */
        if (have_setpcap())
                assert_int_equal(prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0), 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_drop_bounding),
        };
        return cmocka_run_group_tests_name("caps", tests, NULL, NULL);
}
