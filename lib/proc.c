#include "lib/proc.h"
#include "lib/lines.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

bool proc_status_get(const char *status, const char *key, char *out, size_t size)
{
        size_t kn = strlen(key);
        struct lines it = lines_of_str(status);
        const char *l;
        size_t len;
        while (lines_next(&it, &l, &len))
                if (line_starts(l, len, key) && len > kn && l[kn] == ':') {
                        const char *v = l + kn + 1, *end = l + len;
                        while (v < end && (*v == ' ' || *v == '\t'))
                                v++;
                        size_t n = (size_t)(end - v);
                        if (n >= size)
                                n = size - 1;
                        memcpy(out, v, n);
                        out[n] = 0;
                        return true;
                }
        return false;
}

long proc_status_long(const char *status, const char *key)
{
        char v[32];
        return proc_status_get(status, key, v, sizeof(v)) ? strtol(v, NULL, 10) : -1;
}

int anvil_reset_signals(void)
{
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        (void)sigemptyset(&dfl.sa_mask);
        /* SIGKILL and SIGSTOP cannot be changed (EINVAL, ignoring). A handler is reset by the
         * exec anyway; an ignored signal is not. glibc's sigaction() refuses the two real-time
         * signals it keeps for itself (32 and 33, EINVAL), yet a process may inherit one of
         * them ignored (seen under make: SigIgn bit 31) and pass it on across every exec: those
         * two are reset with the system call itself. Safe here, just before an exec in a
         * process of one thread: nothing sends them, and the new program's libc installs its
         * own. SIG_DFL needs no restorer. */
        for (int sig = 1; sig < NSIG; sig++)
                if (sigaction(sig, &dfl, NULL) < 0 && errno == EINVAL && sig >= 32 && sig < SIGRTMIN) {
                        struct {
                                void (*handler)(int);
                                unsigned long flags;
                                void (*restorer)(void);
                                uint64_t mask;
                        } k = { .handler = SIG_DFL };
                        (void)syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof(k.mask));
                }
        sigset_t none;
        (void)sigemptyset(&none);
        return sigprocmask(SIG_SETMASK, &none, NULL) < 0 ? -errno : 0;
}
