/* broker/render.c: the prose a result carries, written from the supervisor's facts, is what the
 * supervisor wrote itself before it moved out of the root daemon: the expected texts below are
 * today's clients' output, verbatim (a run and a probe of the test suite's supervisor, in a
 * jail and direct). The facts are dropped once rendered, and a message without them is left
 * as it is (a broker's, which anvilctl renders again). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/render.h"

static struct proto_msg run_msg(bool direct)
{
        struct proto_msg m = { .type = PROTO_RUN_RESULT };
        struct proto_run_result *r = &m.u.run_result;
        assert_int_equal(proto_strv_push(&r->blast_radius.read, "/usr"), 0);
        r->blast_radius.network = strdup("");
        r->blast_radius.processes = strdup("");
        r->blast_radius.limits.files_bytes = 67108864;
        r->blast_radius.limits.pids = 64;
        struct proto_blast_facts *f = calloc(1, sizeof(*f));
        assert_non_null(f);
        *f = (struct proto_blast_facts){ .direct = direct, .inputs = 1, .inputs_bytes = 8, .landlock_abi = 7,
                                         .seccomp_verified = true, .netns = !direct, .pidns = !direct };
        f->workdir = strdup(direct ? "/s/runs/R/jail" : "/work");
        f->tmp = strdup(direct ? "/s/runs/R/jail/tmp" : "/tmp");
        r->blast_facts = f;
        return m;
}

static void test_blast_jail(void **state)
{
        (void)state;
        struct proto_msg m = run_msg(false);
        assert_int_equal(bro_render(&m), 0);
        const struct proto_blast_radius *b = &m.u.run_result.blast_radius;
        assert_null(m.u.run_result.blast_facts);
        assert_int_equal(b->read.n, 4);
        assert_string_equal(b->read.items[0], "/usr");
        assert_string_equal(b->read.items[1], "/work/inputs (read-only: 1 file, 8 bytes)");
        assert_string_equal(b->read.items[2], "/work/artifacts");
        assert_string_equal(b->read.items[3], "/tmp (private)");
        assert_int_equal(b->write.n, 2);
        assert_string_equal(b->write.items[0], "/work/artifacts (at most 67108864 bytes)");
        assert_string_equal(b->write.items[1], "/tmp (private tmpfs, at most 67108864 bytes, discarded)");
        assert_string_equal(b->network, "none: seccomp refused every socket but AF_UNIX (verified for this run); a "
                                        "network namespace of its own with no interface up; TCP bind and connect "
                                        "denied by landlock");
        assert_string_equal(b->processes, "threads only: seccomp refused fork, vfork, clone of a process and exec "
                                          "(verified for this run); at most 64 threads, in a pid namespace of its own");
        /* Rendered once: a second pass (anvilctl on a broker's result) changes nothing. */
        assert_int_equal(bro_render(&m), 0);
        assert_int_equal(m.u.run_result.blast_radius.read.n, 4);
        proto_msg_free(&m);
}

/* A run granted network (blast_facts.egress): the network line says through what, from what
 * was verified; a fact missing drops its part, never claims it. */
static void test_blast_egress(void **state)
{
        (void)state;
        struct proto_msg m = run_msg(false);
        m.u.run_result.blast_facts->egress = true;
        assert_int_equal(bro_render(&m), 0);
        assert_string_equal(m.u.run_result.blast_radius.network,
                            "granted, only through the run's egress proxy (anvil-egress, at 127.0.0.1:3128 in the "
                            "jail): seccomp refused every socket but AF_UNIX and TCP, and every connect but the "
                            "relay's (verified for this run); a network namespace of its own with lo alone up; TCP "
                            "bind denied and connect allowed to port 3128 alone by landlock");
        proto_msg_free(&m);
        m = run_msg(false);
        m.u.run_result.blast_facts->egress = true;
        m.u.run_result.blast_facts->seccomp_verified = false;
        m.u.run_result.blast_facts->landlock_abi = 3;
        assert_int_equal(bro_render(&m), 0);
        assert_string_equal(m.u.run_result.blast_radius.network,
                            "granted, only through the run's egress proxy (anvil-egress, at 127.0.0.1:3128 in the "
                            "jail): a network namespace of its own with lo alone up");
        proto_msg_free(&m);
}

static void test_blast_direct(void **state)
{
        (void)state;
        struct proto_msg m = run_msg(true);
        struct proto_run_result *r = &m.u.run_result;
        r->blast_facts->inputs = 2;
        r->blast_facts->seccomp_verified = false;
        r->blast_facts->landlock_abi = 0;
        assert_int_equal(bro_render(&m), 0);
        const struct proto_blast_radius *b = &r->blast_radius;
        assert_string_equal(b->read.items[1], "/s/runs/R/jail/inputs (read-only: 2 files, 8 bytes)");
        assert_string_equal(b->write.items[0],
                            "/s/runs/R/jail/artifacts (each file at most 67108864 bytes; their total not bounded)");
        assert_string_equal(b->write.items[1],
                            "/s/runs/R/jail/tmp (each file at most 67108864 bytes; their total not bounded)");
        assert_string_equal(b->network, "not isolated by this run's verified mechanisms");
        assert_string_equal(b->processes, "at most 64 processes and threads");
        proto_msg_free(&m);
}

static void mech(struct proto_probe_result *r, const char *name, bool in_force)
{
        struct proto_mechanism *m = proto_array_push(&r->mechanisms, sizeof(*m));
        assert_non_null(m);
        m->name = strdup(name);
        m->in_force = m->available = m->probed = in_force;
        m->evidence = strdup("");
}

static const char *evidence_of(const struct proto_probe_result *r, const char *name)
{
        const struct proto_mechanism *m = r->mechanisms.items;
        for (size_t i = 0; i < r->mechanisms.n; i++)
                if (strcmp(m[i].name, name) == 0)
                        return m[i].evidence;
        return NULL;
}

static void test_probe(void **state)
{
        (void)state;
        struct proto_msg m = { .type = PROTO_PROBE_RESULT };
        struct proto_probe_result *r = &m.u.probe_result;
        const char *names[] = { "interpreter", "namespaces", "seccomp", "landlock", "kernel audit", "cgroup",
                                "rlimits", "network isolation", "filesystem isolation" };
        for (unsigned i = 0; i < 9; i++)
                mech(r, names[i], true);
        static struct proto_probe_facts f = {
                .jail_ran = true, .jail_failure = "", .interp = true, .no_userns = "",
                .jail_write = "EROFS", .jail_read = "ENOENT", .jail_unlisted = "EACCES", .jail_connect = "EPERM",
                .control_write = "ok", .control_read = "ok", .control_unlisted = "ok", .control_connect = "ok",
                .port = 4242, .accepted_jail = 0, .accepted_control = 1,
                .jail_target = "/work/anvil-probe-canary", .canary = "/s/probe/host-canary",
                .seccomp_refusal = "blocked at kernel: socket(AF_INET, SOCK_STREAM)", .landlock_refusal = "blocked",
                .seccomp_mech = "seccomp filter", .landlock_mech = "landlock ABI 7",
                .cgroup_mech = "cgroup v1", .rlimits_mech = "rlimits (cpu)", .seccomp_loaded = true,
                .kernel_landlock_abi = 7, .cgroup_description = "none",
        };
        r->facts = malloc(sizeof(f));
        assert_non_null(r->facts);
        /* bro_render frees the facts' strings: give it its own copies. */
        memcpy(r->facts, &f, sizeof(f));
        char **s[] = { &r->facts->jail_failure, &r->facts->no_userns, &r->facts->jail_write, &r->facts->jail_read,
                       &r->facts->jail_unlisted, &r->facts->jail_connect, &r->facts->control_write,
                       &r->facts->control_read, &r->facts->control_unlisted, &r->facts->control_connect,
                       &r->facts->jail_target, &r->facts->canary, &r->facts->seccomp_refusal,
                       &r->facts->landlock_refusal, &r->facts->seccomp_mech, &r->facts->landlock_mech,
                       &r->facts->cgroup_mech, &r->facts->rlimits_mech, &r->facts->cgroup_description };
        for (unsigned i = 0; i < sizeof(s) / sizeof(s[0]); i++)
                *s[i] = strdup(*s[i]);
        assert_int_equal(bro_render(&m), 0);
        assert_null(r->facts);
        assert_string_equal(evidence_of(r, "interpreter"), "the probe ran in a jail and reported");
        assert_string_equal(evidence_of(r, "namespaces"),
                            "user, mount, pid, net, ipc, uts and cgroup namespaces of the probe's jail read back from "
                            "/proc, each differing from the supervisor's");
        assert_string_equal(evidence_of(r, "seccomp"), "blocked at kernel: socket(AF_INET, SOCK_STREAM); seccomp filter");
        assert_string_equal(evidence_of(r, "landlock"),
                            "in the jail a read of /etc/hostname (there, but not a read root) failed (EACCES): "
                            "blocked; outside, the control's read succeeded; landlock ABI 7");
        assert_string_equal(evidence_of(r, "kernel audit"),
                            "the probe's Landlock denial was explained from the kernel's audit records");
        assert_string_equal(evidence_of(r, "cgroup"), "cgroup v1");
        assert_string_equal(evidence_of(r, "rlimits"), "rlimits (cpu)");
        assert_string_equal(evidence_of(r, "network isolation"),
                            "in the jail a connect to 127.0.0.1:4242 failed (EPERM) and the listener counted 0 "
                            "connections; outside, the control's connect succeeded (the listener counted 1)");
        assert_string_equal(evidence_of(r, "filesystem isolation"),
                            "in the jail a write to /work/anvil-probe-canary failed (EROFS) and a read of the host's "
                            "/s/probe/host-canary failed (ENOENT); outside, the control's write succeeded and read "
                            "succeeded");
        proto_msg_free(&m);
}

static void test_probe_not_started(void **state)
{
        (void)state;
        struct proto_msg m = { .type = PROTO_PROBE_RESULT };
        struct proto_probe_result *r = &m.u.probe_result;
        mech(r, "interpreter", false);
        r->facts = calloc(1, sizeof(*r->facts));
        assert_non_null(r->facts);
        r->facts->start_failure = strdup("Every run slot is taken");
        assert_int_equal(bro_render(&m), 0);
        assert_string_equal(evidence_of(r, "interpreter"), "the probe could not be started: Every run slot is taken");
        proto_msg_free(&m);
}

/* The artifacts' hashes, which the supervisor leaves to its reader: a copy's sha256 (the value
 * sha256sum gives for "hello\n"), a link not followed (as the last component, or as a
 * directory on the way), a size not the one counted, a file gone: each but the first keeps ""
 * (no claim), and the first refused is said. Returns 0, or the number of the check that
 * failed (it runs in a child too, where cmocka's asserts cannot). */
static int hash_checks(void)
{
        char dir[] = "/tmp/anvil-test-render.XXXXXX";
        if (!mkdtemp(dir))
                return 1;
        char p[sizeof(dir) + 32];
        snprintf(p, sizeof(p), "%s/sub", dir);
        if (mkdir(p, 0755) < 0)
                return 2;
        snprintf(p, sizeof(p), "%s/sub/a.txt", dir);
        FILE *f = fopen(p, "w");
        if (!f)
                return 3;
        fputs("hello\n", f);
        fclose(f);
        snprintf(p, sizeof(p), "%s/link", dir);
        if (symlink("sub/a.txt", p) < 0)
                return 4;
        snprintf(p, sizeof(p), "%s/linkdir", dir);
        if (symlink("sub", p) < 0)
                return 5;
        struct proto_run_result r = { .artifacts_dir = dir };
        const char *paths[] = { "sub/a.txt", "link", "sub/a.txt", "gone", "linkdir/a.txt", "../x" };
        const uint64_t bytes[] = { 6, 6, 5, 1, 6, 1 };
        for (unsigned i = 0; i < 6; i++) {
                struct proto_artifact *a = proto_array_push(&r.artifacts, sizeof(*a));
                if (!a)
                        return 6;
                a->path = strdup(paths[i]);
                a->bytes = bytes[i];
                a->sha256 = strdup("");
        }
        char failed[512];
        int rc = 0;
        if (bro_hash_artifacts(&r, failed, sizeof(failed)) != 0)
                rc = 7;
        const struct proto_artifact *a = r.artifacts.items;
        if (!rc && strcmp(a[0].sha256, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03") != 0)
                rc = 8;
        for (unsigned i = 1; i < 6 && !rc; i++)
                if (strcmp(a[i].sha256, "") != 0)
                        rc = 10 + (int)i;
        char want[600];
        snprintf(want, sizeof(want), "%s/link: %s", dir, strerror(ELOOP));
        if (!rc && strcmp(failed, want) != 0) {
                fprintf(stderr, "failed: '%s', want '%s'\n", failed, want);
                rc = 9;
        }
        for (unsigned i = 0; i < 6; i++) {
                free(a[i].path);
                free(a[i].sha256);
        }
        free(r.artifacts.items);
        const char *names[] = { "link", "linkdir", "sub/a.txt", "sub" };
        for (unsigned i = 0; i < 4; i++) {
                snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
                (void)(i == 3 ? rmdir(p) : unlink(p));
        }
        (void)rmdir(dir);
        return rc;
}

static void test_hash(void **state)
{
        (void)state;
        assert_int_equal(hash_checks(), 0);
}

/* The same where openat2 is missing or filtered: in a child whose seccomp filter answers it
 * ENOSYS, as systemd's SystemCallFilter= did the broker's unit on Debian 12 (the VM test saw
 * every artifact unhashed). The walk one component at a time must give the same answers. The
 * control: in that child openat2 really is ENOSYS. */
static void test_hash_without_openat2(void **state)
{
        (void)state;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
                if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) < 0 ||
                    seccomp_load(ctx) < 0)
                        _exit(100);
                struct open_how how = { .flags = O_RDONLY };
                if (syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how)) >= 0 || errno != ENOSYS)
                        _exit(101);
                _exit(hash_checks());
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_blast_jail),
                cmocka_unit_test(test_blast_egress),
                cmocka_unit_test(test_blast_direct),
                cmocka_unit_test(test_probe),
                cmocka_unit_test(test_probe_not_started),
                cmocka_unit_test(test_hash),
                cmocka_unit_test(test_hash_without_openat2),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
