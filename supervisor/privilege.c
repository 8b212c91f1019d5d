/* The supervisor's capabilities after start-up (issue 11): one table, each capability with
 * why; the systemd unit's CapabilityBoundingSet= lists the same (every row, start-up's
 * included: systemd bounds the process before it starts), and t_sup_caps checks both.
 *
 * Start-up (main.c) does what needs more than the runs do: the open-file limit raised,
 * the kernel's audit switched on and its multicast group joined. Then, before any thread
 * exists (capabilities and no_new_privs are per thread; libuv's pool threads, started by
 * the first probe, inherit the calling thread's) and before the first probe (so that the
 * probe's jails are built with exactly what every later run has), sup_privilege_drop keeps
 * the rows marked KEEP (and DIRECT on the direct rung) in the effective and permitted sets,
 * drops every other capability from them and from the inheritable and bounding sets,
 * clears the ambient set, sets no_new_privs, and reads /proc/self/status back: a set that
 * is not what was asked stops the start.
 *
 * Rootless (an ordinary user): it holds no capability; no_new_privs alone is set. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "supervisor/supervisor.h"

enum when {
        KEEP,   /* every run needs it */
        DIRECT, /* kept only on the direct rung (no user namespace) */
        START,  /* start-up only: dropped with the rest */
};

static const struct {
        cap_value_t cap;
        enum when when;
        const char *why;
} sup_caps[] = {
        /* Each found needed by dropping it alone (--test-cap-withhold, a test build) and
         * running a run, an artifact of mode 000, a wall-clock kill and a refused call, with
         * user namespaces and on the direct rung: the failure it caused is quoted. */
        { CAP_SYS_ADMIN, KEEP, "each run's artifacts tmpfs, made in the initial user namespace (\"Failed to open a tmpfs context\")" },
        { CAP_SETUID, KEEP, "each jail's uid map to its per-run host uid (\"Failed to write /proc/PID/uid_map\"); the builder's children; direct: the run's uid" },
        { CAP_SETGID, KEEP, "each jail's gid map (\"Failed to write /proc/PID/gid_map\"); the builder's children" },
        { CAP_CHOWN, KEEP, "the socket's group; the probe's control directory handed to the builder; direct runs' tmp/ and artifacts/" },
        { CAP_FOWNER, KEEP, "the probe's control directory chmod'd once it is the builder's (\"Failed to hand .../probe/control\")" },
        { CAP_DAC_READ_SEARCH, KEEP, "the artifacts tmpfs (its root 0700, the run's uid's) and what the tool made mode 000, copied out" },
        { CAP_AUDIT_CONTROL, KEEP, "AUDIT_GET for every run: audit on, records lost (without it runs say audit is off); AUDIT_SET at start" },
        { CAP_DAC_OVERRIDE, KEEP, "the probe's canary removed from its control directory (0700, the builder's; t_probe); direct: a run's tmp/ written and emptied" },
        { CAP_AUDIT_WRITE, KEEP, "the drain marker through the audit queue, S9 (\"the drain marker could not be sent\")" },

        { CAP_KILL, DIRECT, "SIGKILL by pidfd to a direct jail's pid 1, of a host uid not ours (a wall-clock kill waits otherwise)" },
        { CAP_SYS_PTRACE, DIRECT, "a direct runner's refused call's arguments read (process_vm_readv: \"chroot(?)\" otherwise)" },
        { CAP_SETPCAP, DIRECT, "the bounding set emptied by each direct jail's child, C9 (and at start-up, for this drop)" },
        { CAP_SYS_RESOURCE, START, "the open-file limit raised over its hard limit (raise_nofile)" },
        { CAP_AUDIT_READ, START, "the audit multicast group joined (the kernel checks it at bind only)" },
        /* Namespaced jails need neither CAP_KILL nor CAP_SYS_PTRACE: the supervisor owns
         * their user namespaces, and the kernel grants a namespace's owner those over its
         * processes whatever its effective set. */
};

static uint64_t kept_mask(const struct sup_server *srv)
{
        uint64_t m = 0;
        for (size_t i = 0; i < ELEMENTSOF(sup_caps); i++)
                if (sup_caps[i].when == KEEP || (sup_caps[i].when == DIRECT && srv->cfg.direct))
                        m |= 1ull << sup_caps[i].cap;
#ifdef ANVIL_TEST_BUILD
        for (unsigned i = 0; i < srv->cfg.test_cap_withhold_n; i++)
                m &= ~(1ull << srv->cfg.test_cap_withhold[i]);
#endif
        return m;
}

static void names(uint64_t mask, char *buf, size_t size)
{
        size_t n = 0;
        buf[0] = 0;
        for (int c = 0; c < 64 && n < size; c++)
                if (mask & (1ull << c)) {
                        char *s = cap_to_name((cap_value_t)c);
                        n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? " " : "", s ? s : "?");
                        cap_free(s);
                }
}

/* What /proc/self/status says of this thread, against what was asked. */
static int check(uint64_t keep, struct anvil_err *err)
{
        uint8_t *text;
        size_t len;
        int r = fd_read_file("/proc/thread-self/status", 1u << 16, &text, &len, err);
        if (r < 0)
                return r;
        static const char *const keys[] = { "CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb" };
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                uint64_t want = i < 3 ? keep : 0;
                char v[32];
                if (!proc_status_get((const char *)text, keys[i], v, sizeof(v)) || strtoull(v, NULL, 16) != want) {
                        r = anvil_err_set(err, EPERM, "%s is %s after the drop, not %016llx", keys[i], v,
                                          (unsigned long long)want);
                        goto out;
                }
        }
        if (proc_status_long((const char *)text, "NoNewPrivs") != 1)
                r = anvil_err_set(err, EPERM, "NoNewPrivs is not 1 after the drop");
out:
        free(text);
        return r;
}

int sup_privilege_drop(struct sup_server *srv, struct anvil_err *err)
{
#ifdef ANVIL_TEST_BUILD
        if (srv->cfg.test_no_cap_drop) {
                log_warn("TEST MODE: every capability kept, no_new_privs not set (--test-no-cap-drop)");
                return 0;
        }
#endif
        /* Per thread: every thread but this one would keep what it has. */
        uint8_t *text;
        size_t len;
        int r = fd_read_file("/proc/self/status", 1u << 16, &text, &len, err);
        if (r < 0)
                return r;
        long threads = proc_status_long((const char *)text, "Threads");
        free(text);
        if (threads != 1)
                return anvil_err_set(err, EBUSY, "%ld threads at the capability drop: it must come before any", threads);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return anvil_err_sys(err, errno, "Failed to set no_new_privs");
        if (srv->cfg.rootless) {
                log_info("capabilities: none held (rootless); no_new_privs set");
                return 0;
        }
        uint64_t keep = kept_mask(srv);
        /* The bounding set first, while CAP_SETPCAP is still ours (systemd may have taken
         * some already: only those still there are dropped). */
        for (int c = 0; c <= CAP_LAST_CAP; c++)
                if (!(keep & (1ull << c)) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1 &&
                    prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
                        return anvil_err_sys(err, errno, "Failed to drop %s from the bounding set",
                                             cap_to_name((cap_value_t)c));
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return anvil_err_sys(err, errno, "Failed to clear the ambient capabilities");
        cap_t caps = cap_init(); /* all three sets empty */
        if (!caps)
                return anvil_err_sys(err, errno, "Failed to allocate a capability set");
        for (int c = 0; c <= CAP_LAST_CAP; c++) {
                cap_value_t v = c;
                if ((keep & (1ull << c)) &&
                    (cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0 ||
                     cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) < 0)) {
                        cap_free(caps);
                        return anvil_err_sys(err, errno, "Failed to build the capability set");
                }
        }
        r = cap_set_proc(caps);
        int saved = errno;
        cap_free(caps);
        if (r < 0)
                return anvil_err_sys(err, saved, "Failed to set the capabilities kept after start-up");
        if ((r = check(keep, err)) < 0)
                return r;
        char kept[512];
        names(keep, kept, sizeof(kept));
        log_info("capabilities after start-up: %s; no_new_privs set", kept);
        return 0;
}

/* Every row, with why: the first line is the unit's CapabilityBoundingSet= (t_sup_caps
 * compares them). */
void sup_privilege_describe(const struct sup_server *srv)
{
        if (srv->cfg.rootless)
                return;
        uint64_t all = 0;
        for (size_t i = 0; i < ELEMENTSOF(sup_caps); i++)
                all |= 1ull << sup_caps[i].cap;
        char buf[512];
        names(all, buf, sizeof(buf));
        log_info("capabilities at start-up (the unit's bounding set): %s", buf);
        static const char *const when[] = { [KEEP] = "kept", [DIRECT] = "kept on the direct rung", [START] = "start-up only" };
        for (size_t i = 0; i < ELEMENTSOF(sup_caps); i++) {
                char *s = cap_to_name(sup_caps[i].cap);
                log_info("  %s (%s): %s", s ? s : "?", when[sup_caps[i].when], sup_caps[i].why);
                cap_free(s);
        }
}

#ifdef ANVIL_TEST_BUILD
int sup_privilege_withhold(struct sup_config *cfg, const char *name)
{
        cap_value_t c;
        if (cap_from_name(name, &c) < 0 || c < 0 || c > 63 || cfg->test_cap_withhold_n >= ELEMENTSOF(cfg->test_cap_withhold))
                return -EINVAL;
        cfg->test_cap_withhold[cfg->test_cap_withhold_n++] = (int)c;
        return 0;
}
#endif
