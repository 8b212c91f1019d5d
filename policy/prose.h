/* Part of the catalog of every string Anvil reports (policy/reasons.h): the prose of a
 * result, which the supervisor sends as facts. One list, formatted by broker/render.c (the
 * broker, and anvilctl for a supervisor it talks to directly), asserted verbatim by
 * tests/unit/test_render.c and the e2e tests. The root daemon never includes this file. */
#pragma once

#include "policy/reasons.h"

/* ---- what a result says in prose (broker/render.c): the blast radius's lines and the probe's
 * evidence ---- The supervisor sends facts (proto.h: proto_blast_facts, proto_probe_facts); the
 * broker, and anvilctl for a supervisor it talks to directly, write these from them, so that
 * the root daemon carries no prose. Asserted verbatim by test_policy.c and the e2e tests. */
#define POL_PROSE(X)                                                                            \
        /* the inputs' directory, files (unsigned long long), "s" or "", bytes (unsigned long long) */ \
        X(BLAST_INPUTS, "%s (read-only: %llu file%s, %llu bytes)")                             \
        /* /tmp as the tool sees it */                                                          \
        X(BLAST_TMP_READ, "%s (private)")                                                       \
        /* direct: a directory, RLIMIT_FSIZE (unsigned long long) */                            \
        X(BLAST_WRITE_DIRECT, "%s (each file at most %llu bytes; their total not bounded)")     \
        /* the artifacts' directory, the files cap (unsigned long long) */                      \
        X(BLAST_WRITE_ARTIFACTS, "%s (at most %llu bytes)")                                     \
        /* /tmp, the files cap (unsigned long long) */                                          \
        X(BLAST_WRITE_TMP, "%s (private tmpfs, at most %llu bytes, discarded)")                 \
        /* The network line: NET_NONE then what isolates it, or NET_NOT_ISOLATED */             \
        X(BLAST_NET_NONE, "none: ")                                                             \
        X(BLAST_NET_NOT_ISOLATED, "not isolated by this run's verified mechanisms")             \
        X(BLAST_NET_SECCOMP, "seccomp refused every socket but AF_UNIX (verified for this run)") \
        X(BLAST_NET_NETNS, "a network namespace of its own with no interface up")               \
        X(BLAST_NET_LANDLOCK, "; TCP bind and connect denied by landlock")                      \
        /* A run granted network: EGRESS then what holds the rest */                           \
        X(BLAST_NET_EGRESS, "granted, only through the run's egress proxy (anvil-egress, at 127.0.0.1:3128 in the jail): ") \
        X(BLAST_NET_EGRESS_SECCOMP, "seccomp refused every socket but AF_UNIX and TCP, and every connect but the relay's (verified for this run)") \
        X(BLAST_NET_EGRESS_NETNS, "a network namespace of its own with lo alone up")            \
        X(BLAST_NET_EGRESS_LANDLOCK, "; TCP bind denied and connect allowed to port 3128 alone by landlock") \
        /* The processes line */                                                                \
        X(BLAST_PROC_THREADS_UNBOUNDED, "threads only: seccomp refused fork, vfork, clone of a process and exec " \
                                        "(verified for this run); their number not bounded (no pids cgroup, and " \
                                        "RLIMIT_NPROC would count the supervisor's own uid)")   \
        /* threads (unsigned long long), BLAST_PIDNS or "" */                                   \
        X(BLAST_PROC_THREADS, "threads only: seccomp refused fork, vfork, clone of a process and exec (verified " \
                              "for this run); at most %llu threads%s")                          \
        /* processes and threads (unsigned long long), BLAST_PIDNS or "" */                     \
        X(BLAST_PROC_PROCESSES, "at most %llu processes and threads%s")                         \
        X(BLAST_PIDNS, ", in a pid namespace of its own")                                       \
        /* The probe's evidence, mechanism by mechanism (supervisor/probe.c decides in force). */ \
        /* the supervisor's error */                                                            \
        X(PROBE_START_FAILED, "the probe could not be started: %s")                             \
        /* the supervisor's error, or "?" */                                                    \
        X(PROBE_JAIL_FAILED, "the probe's jail failed: %s")                                     \
        X(PROBE_INTERP_OK, "the probe ran in a jail and reported")                              \
        X(PROBE_INTERP_SILENT, "the probe ran but reported nothing")                            \
        /* why no user namespace */                                                             \
        X(PROBE_NS_DIRECT, "no user namespace can be made here (%s): jails run on the host's paths") \
        X(PROBE_NS_OK, "user, mount, pid, net, ipc, uts and cgroup namespaces of the probe's jail read back " \
                       "from /proc, each differing from the supervisor's")             \
        X(PROBE_NS_PARTIAL, "the probe's jail did not show all of them")                        \
        /* the seccomp refusal, the filter as the jail reported it */                           \
        X(PROBE_SC_IN_FORCE, "%s; %s")                                                          \
        X(PROBE_SC_NOTHING, "the filter was loaded but refused nothing")                        \
        X(PROBE_SC_NOT_LOADED, "the probe's runner did not load the filter")                    \
        /* ": " or "", the denial explained or "", the control's read (SUCCEEDED or its errno), \
         * the Landlock ABI as the jail reported it */                                          \
        X(PROBE_LL_IN_FORCE, "in the jail a read of /etc/hostname (there, but not a read root) failed (EACCES)%s%s; " \
                             "outside, the control's read %s; %s")                             \
        X(PROBE_LL_OFFERED, "the kernel offers it")                                             \
        X(PROBE_LL_NONE, "this kernel has none (ABI 0)")                                        \
        /* the read's outcome, or NO_ANSWER */                                                  \
        X(PROBE_LL_JAIL_READ, "; in the jail a read of /etc/hostname: %s")                      \
        X(PROBE_AUDIT_EXPLAINED, "the probe's Landlock denial was explained from the kernel's audit records") \
        X(PROBE_AUDIT_NO_RECORD, "Landlock's denials are refused but not explained: the probe's denial left no " \
                                 "audit record")                                                \
        X(PROBE_RL_NOT_SEEN, "not seen in force")                                               \
        /* port, the jail's connect, connections counted (unsigned long long each but the \
         * outcomes), the control's connect, its connections */                                 \
        X(PROBE_NET, "in the jail a connect to 127.0.0.1:%llu failed (%s) and the listener counted %llu connections; " \
                     "outside, the control's connect %s (the listener counted %llu)")           \
        /* the write's target, its outcome, the canary, the read's outcome, the control's write \
         * and read (SUCCEEDED or the errno) */                                                 \
        X(PROBE_FS, "in the jail a write to %s failed (%s) and a read of the host's %s failed (%s); outside, the " \
                    "control's write %s and read %s")                                           \
        X(PROBE_SUCCEEDED, "succeeded")                                                         \
        X(PROBE_NO_ANSWER, "no answer")

enum pol_prose {
#define X(id, fmt) POL_PROSE_##id,
        POL_PROSE(X)
#undef X
        _POL_PROSE_MAX
};

/* Formatted by the broker and anvilctl alone (broker/render.c), checked by the compiler as the
 * rest of the catalog is (policy/reasons.h, POL_WITH_ID): BRO_PROSE(buf, size, ID, ...). */
#define POL__PICK_PROSE(id, fmt) __builtin_choose_expr(pol__want == (int)POL_PROSE_##id, fmt,
#define POL_PROSE_FMT POL_PROSE(POL__PICK_PROSE) "" POL_PROSE(POL__PICK_END)
#define BRO_PROSE(buf, size, ID, ...) \
        POL_WITH_ID(POL_PROSE_##ID, pol_format((buf), (size), POL_PROSE_FMT, ##__VA_ARGS__))

