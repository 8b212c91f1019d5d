/* R6: the kernel layer the runner installs itself, seccomp, and the fail-closed checks of
 * what the jail promises (DESIGN §6), before the runner reads a byte of the request's (its
 * variables, R6a; its source, R6b) and so before the tool's first line. Nothing here trusts
 * what it was told: each promise is looked up in what the kernel reports for this process.
 * A promise not kept refuses the run ("refused: <layer> not in force (<evidence>)"); no
 * tool code runs, and the supervisor reports the sandbox's failure, not the tool's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail/jail.h"
#include "runner/runner.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/lines.h"

static int namespaces_seen(char *layer, size_t layer_size, char *evidence, size_t size)
{
        char buf[4096], host[64];
        const char *missing = NULL;
        unsigned long inside, outside, count;
        if (fd_read_small("/proc/self/uid_map", buf, sizeof(buf), FD_READ_PREFIX, NULL) <= 0 ||
            sscanf(buf, "%lu %lu %lu", &inside, &outside, &count) != 3 ||
            (inside == 0 && outside == 0 && count == 4294967295ul)) {
                missing = "user namespace";
                snprintf(evidence, size, "/proc/self/uid_map is the initial identity map");
        } else if (getppid() != 1) {
                missing = "pid namespace";
                snprintf(evidence, size, "the runner's parent is pid %d, not the jail's pid 1", (int)getppid());
        } else if (gethostname(host, sizeof(host)) < 0 || strcmp(host, JAIL_HOSTNAME) != 0) {
                missing = "uts namespace";
                snprintf(evidence, size, "the hostname is '%.40s', not the jail's", host);
        } else if (fd_read_small("/proc/net/dev", buf, sizeof(buf), FD_READ_PREFIX, NULL) <= 0) {
                missing = "network namespace";
                snprintf(evidence, size, "/proc/net/dev cannot be read");
        } else {
                /* Two header lines, then one line an interface: only "lo:" may be there. */
                struct lines it = lines_of_str(buf);
                const char *l;
                size_t len;
                for (int i = 0; lines_next(&it, &l, &len); i++) {
                        if (i < 2)
                                continue;
                        size_t sp = strspn(l, " ");
                        const char *name = l + (sp < len ? sp : len);
                        if (!line_starts(name, len - (size_t)(name - l), "lo:")) {
                                missing = "network namespace";
                                snprintf(evidence, size, "an interface besides lo: %.*s", (int)strcspn(name, ":\n"),
                                         name);
                                break;
                        }
                }
        }
        if (!missing)
                return 0;
        snprintf(layer, layer_size, "%s", missing);
        return -1;
}

int inforce_kernel_layers(const struct proto_run_spec *spec, char *seen, size_t seen_size, char *layer,
                          size_t layer_size, char *evidence, size_t size)
{
        seen[0] = 0;
        struct anvil_err err = ANVIL_ERR_INIT;
        int listener = -1;
        int r;
#ifdef ANVIL_TEST_BUILD
        /* A test build's probe tests: a layer left out on purpose, to show the probe sees it
         * missing. */
        if (spec->test_break && strcmp(spec->test_break, "seccomp") == 0)
                r = anvil_err_set(&err, ENOSYS, "left out on purpose (a test build's --test-probe-break)");
        else
#endif
                /* seccomp: the filter, and its listener to the supervisor through pid 1; a run
                 * granted network gets TCP sockets besides (the relay's path, jail/seccomp.c) */
                r = jail_seccomp_install(runner_network_granted(spec), &listener, &err);
        static const char byte = 'L';
        if (r == 0 && (r = fd_send_fds(JAIL_FD_NOTIFY, &byte, 1, &listener, 1, NULL)) < 0)
                snprintf(err.msg, sizeof(err.msg), "its listener could not be sent: %s", strerror(-r));
        if (listener >= 0)
                (void)close(listener);
        /* The supervisor's word, through pid 1, that it sees the filter and watches its
         * listener (S6a); without it the tool does not start. */
        if (r == 0) {
                char ack = 0;
                ssize_t n;
                do
                        n = recv(JAIL_FD_NOTIFY, &ack, 1, 0);
                while (n < 0 && errno == EINTR);
                if (n != 1) {
                        r = -EPIPE;
                        snprintf(err.msg, sizeof(err.msg), "the supervisor did not confirm it");
                }
        }
        (void)close(JAIL_FD_NOTIFY);
        /* Refused only where the tier promises it: the probe, which finds out what holds,
         * goes on without it, and a tier without seccomp never promised it. */
        if (r < 0 && spec->expect_seccomp) {
                snprintf(layer, layer_size, "seccomp");
                snprintf(evidence, size, "%s", err.msg);
                return -1;
        }
        bool filtered = r == 0; /* loaded, and the supervisor saw it in force */
        /* The promises, as the kernel reports them. */
        /* Asked of the kernel with prctl, not read from /proc: a direct jail has no /proc. */
        long nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        if (nnp != 1) {
                snprintf(layer, layer_size, "no_new_privs");
                snprintf(evidence, size, "prctl(PR_GET_NO_NEW_PRIVS) says %ld", nnp);
                return -1;
        }
        if (spec->expect_seccomp && mode != 2) {
                snprintf(layer, layer_size, "seccomp");
                snprintf(evidence, size, "prctl(PR_GET_SECCOMP) says %ld, not 2 (filter)", mode);
                return -1;
        }
        /* The namespaces, as far as they can be seen from inside (the supervisor compared their
         * inodes with its own before GO; this is the jail's own look): a user namespace (our
         * uid map is not the initial identity map), a pid namespace (our parent is its pid 1),
         * a uts namespace (the jail's hostname), a network namespace (no interface but lo). */
        if (!spec->direct && namespaces_seen(layer, layer_size, evidence, size) < 0)
                return -1;
        /* Only the runner's own fds: the spec (now /dev/null), stdout, stderr, events. */
        struct rlimit rl;
        long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
        for (long fd = 4; fd < max; fd++)
                if (fcntl((int)fd, F_GETFD) >= 0) {
                        char link[64], target[256] = "?";
                        snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
                        ssize_t n = readlink(link, target, sizeof(target) - 1);
                        if (n > 0)
                                target[n] = 0;
                        snprintf(layer, layer_size, "fd isolation");
                        snprintf(evidence, size, "fd %ld is open (%s); only 0-3 may be", fd, target);
                        return -1;
                }
        snprintf(seen, seen_size, "%sno_new_privs, %sonly fds 0-3",
                 filtered ? "the seccomp filter (seen by the supervisor), " : "",
                 spec->direct ? "" : "user, pid, uts and network namespaces, ");
        return 0;
}
