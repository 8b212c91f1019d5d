/* Unit tests for jail/cgroup.c and jail/cgroup-setup.c, the parts that need no privilege:
 * finding hierarchies in /proc/self/mountinfo and /proc/self/cgroup texts (this machine's
 * hybrid layout, a systemd host's v2-only one, co-mounted v1 controllers, a bind-mounted
 * subtree), where on v2 the supervisor may create cgroups, the parsers, and the v2 and v1
 * file tables exercised against directories of plain files laid out as each version's
 * cgroupfs: what set_limits writes, what read_limits and read take from where, and that
 * prepare and sweep leave nothing of theirs behind on failure. The kernel's own behaviour
 * (membership, limits enforced, OOM kills, removal) is the end-to-end tests' (t_cgroup_*). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/cgroup-fs.h"
#include "jail/cgroup.h"
#include "lib/cleanup.h"

/* ---- hierarchies ---- */

/* This machine (Debian 12 in a VM, kernel 6.18): v1 controllers each on its own, v2 beside. */
static const char hybrid_mountinfo[] =
        "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
        "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char hybrid_cgroup[] = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/faace63d\n"
                                    "2:cpuacct:/\n1:cpu:/\n0::/\n";

/* A systemd host on cgroup v2 alone, the supervisor a service. */
static const char unified_mountinfo[] =
        "24 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
        "rw,nsdelegate,memory_recursiveprot\n";
static const char unified_cgroup[] = "0::/system.slice/anvil-supervisor.service\n";

/* systemd's legacy layout: cpu and cpuacct co-mounted, and a bind-mounted subtree as old
 * container runtimes show them; a mount point with a space, as mountinfo escapes it. */
static const char legacy_mountinfo[] =
        "35 25 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:15 - cgroup cgroup rw,cpu,cpuacct\n"
        "36 25 0:32 / /sys/fs/cgroup/net_cls,net_prio rw,nosuid shared:16 - cgroup cgroup rw,net_cls,net_prio\n"
        "37 25 0:33 /docker/abc /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
        "38 25 0:34 / /mnt/my\\040pids rw,nosuid - cgroup cgroup rw,pids\n";
static const char legacy_cgroup[] = "5:pids:/a\n4:memory:/docker/abc/x\n3:net_cls,net_prio:/\n2:cpu,cpuacct:/foo\n";

static void check_mount(const char *mi, const char *ctrl, const char *mnt, const char *root)
{
        char m[PATH_MAX], r[PATH_MAX];
        if (!mnt) {
                assert_false(jail_cgroup_find_mount(mi, ctrl, m, sizeof(m), r, sizeof(r)));
                return;
        }
        if (!jail_cgroup_find_mount(mi, ctrl, m, sizeof(m), r, sizeof(r)))
                fail_msg("no mount found for '%s'", ctrl);
        assert_string_equal(m, mnt);
        assert_string_equal(r, root);
}

static void test_find_mount(void **state)
{
        (void)state;
        check_mount(hybrid_mountinfo, "memory", "/sys/fs/cgroup/memory", "");
        check_mount(hybrid_mountinfo, "cpu", "/sys/fs/cgroup/cpu", "");
        check_mount(hybrid_mountinfo, "cpuacct", "/sys/fs/cgroup/cpuacct", "");
        check_mount(hybrid_mountinfo, "", "/sys/fs/cgroup/unified", "");
        check_mount(hybrid_mountinfo, "systemd", NULL, NULL); /* name=systemd is not a controller */
        check_mount(hybrid_mountinfo, "io", NULL, NULL);
        check_mount(unified_mountinfo, "", "/sys/fs/cgroup", "");
        check_mount(unified_mountinfo, "memory", NULL, NULL);
        check_mount(legacy_mountinfo, "cpu", "/sys/fs/cgroup/cpu,cpuacct", "");
        check_mount(legacy_mountinfo, "cpuacct", "/sys/fs/cgroup/cpu,cpuacct", "");
        check_mount(legacy_mountinfo, "net", NULL, NULL); /* whole tokens only */
        check_mount(legacy_mountinfo, "memory", "/sys/fs/cgroup/memory", "/docker/abc");
        check_mount(legacy_mountinfo, "pids", "/mnt/my pids", "");
        check_mount(legacy_mountinfo, "", NULL, NULL);
}

static void check_own(const char *pc, const char *ctrl, const char *want)
{
        char own[PATH_MAX];
        if (!want) {
                assert_false(jail_cgroup_find_own(pc, ctrl, own, sizeof(own)));
                return;
        }
        if (!jail_cgroup_find_own(pc, ctrl, own, sizeof(own)))
                fail_msg("no line found for '%s'", ctrl);
        assert_string_equal(own, want);
}

static void test_find_own(void **state)
{
        (void)state;
        check_own(hybrid_cgroup, "memory", "/process_api/faace63d");
        check_own(hybrid_cgroup, "pids", "");
        check_own(hybrid_cgroup, "", "");
        check_own(hybrid_cgroup, "systemd", NULL);
        check_own(unified_cgroup, "", "/system.slice/anvil-supervisor.service");
        check_own(unified_cgroup, "memory", NULL);
        check_own(legacy_cgroup, "cpuacct", "/foo");
        check_own(legacy_cgroup, "cpu", "/foo");
        check_own(legacy_cgroup, "net", NULL);
        check_own(legacy_cgroup, "memory", "/docker/abc/x");
        check_own(legacy_cgroup, "", NULL); /* no v2 line */
}

/* Where the supervisor may create cgroups in a v2 hierarchy (cgroup-setup.c's comment). */
static void test_v2_place(void **state)
{
        (void)state;
        static const struct {
                const char *own;
                bool real_root, marked, assume;
                enum jail_cg_v2_place want;
        } cases[] = {
                { "", true, false, false, JAIL_CG_V2_AT_ROOT },           /* no systemd: this machine */
                { "", true, true, true, JAIL_CG_V2_AT_ROOT },             /* the real root is never a leaf's parent */
                { "", false, false, false, JAIL_CG_V2_DELEGATED },        /* a cgroup namespace's root */
                { "/system.slice/anvil.service", false, true, false, JAIL_CG_V2_DELEGATED }, /* Delegate=yes */
                { "/system.slice/anvil.service", false, false, true, JAIL_CG_V2_DELEGATED }, /* --cgroup delegated */
                { "/system.slice/anvil.service", false, false, false, JAIL_CG_V2_NOT_OURS }, /* no Delegate= */
                { "/user.slice/user-0.slice/session-3.scope", false, false, false, JAIL_CG_V2_NOT_OURS },
        };
        for (unsigned i = 0; i < ELEMENTSOF(cases); i++)
                if (jail_cgroup_v2_place(cases[i].own, cases[i].real_root, cases[i].marked, cases[i].assume) !=
                    cases[i].want)
                        fail_msg("case %u ('%s'): wrong place", i, cases[i].own);
}

static void test_parsers(void **state)
{
        (void)state;
        uint64_t q, p, v;
        assert_true(jail_cgroup_parse_cpu_max("50000 100000\n", &q, &p));
        assert_int_equal(q, 50000);
        assert_int_equal(p, 100000);
        assert_true(jail_cgroup_parse_cpu_max("max 100000\n", &q, &p));
        assert_int_equal(q, 0);
        assert_int_equal(p, 100000);
        assert_false(jail_cgroup_parse_cpu_max("", &q, &p));
        assert_false(jail_cgroup_parse_cpu_max("-1 100000", &q, &p));
        assert_false(jail_cgroup_parse_cpu_max("5x 100000", &q, &p));
        assert_false(jail_cgroup_parse_cpu_max("50000 0", &q, &p));

        const char *events = "max.imposed 7\nmax 3\n";
        assert_true(jail_cgroup_kv(events, "max", &v));
        assert_int_equal(v, 3);
        assert_true(jail_cgroup_kv("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n", "oom_kill", &v));
        assert_int_equal(v, 1);
        assert_false(jail_cgroup_kv("oom_kill_disable 0\nunder_oom 0\n", "oom_kill", &v));
        assert_false(jail_cgroup_kv("anon \n", "anon", &v));
}

/* ---- the file tables, against plain files ---- */

struct fake {
        char root[64];
};

static void put(const char *dir, const char *file, const char *text)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", dir, file);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static char *get(const char *dir, const char *file)
{
        static char buf[256];
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", dir, file);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n > 0 ? n : 0] = 0;
        return buf;
}

static void unlink_in(const char *dir, const char *file)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", dir, file);
        assert_int_equal(unlink(p), 0);
}

static void mk(const char *dir)
{
        assert_int_equal(mkdir(dir, 0755), 0);
}

static int setup(void **state)
{
        struct fake *f = calloc(1, sizeof(*f));
        snprintf(f->root, sizeof(f->root), "/tmp/anvil-test-cgroup.XXXXXX");
        if (!mkdtemp(f->root))
                return -1;
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fake *f = *state;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
        (void)!system(cmd);
        free(f);
        return 0;
}

/* A run's cgroup on v2: one directory for every controller. */
static void test_v2_files(void **state)
{
        struct fake *f = *state;
        struct jail_cgroup cg = { .mode = JAIL_CG_V2, .cpu_quota_us = 50000 };
        for (unsigned c = 0; c < JAIL_CG_CPUACCT; c++) {
                snprintf(cg.dir[c], sizeof(cg.dir[c]), "%s", f->root);
                cg.v2[c] = true;
        }
        static const char *const knobs[] = { "memory.max", "memory.swap.max", "pids.max", "cpu.max" };
        for (unsigned i = 0; i < ELEMENTSOF(knobs); i++)
                put(f->root, knobs[i], "");
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(jail_cgroup_set_limits(&cg, 671088640, 64, &err), 0);
        assert_string_equal(get(f->root, "memory.max"), "671088640");
        assert_string_equal(get(f->root, "memory.swap.max"), "0");
        assert_string_equal(get(f->root, "pids.max"), "64");
        assert_string_equal(get(f->root, "cpu.max"), "50000 100000");
        assert_int_equal(cg.want.memory_max, 671088640);
        assert_int_equal(cg.want.pids_max, 64);
        assert_int_equal(cg.want.cpu_quota_us, 50000);
        assert_int_equal(cg.want.cpu_period_us, 100000);

        /* What the kernel shows: numbers with a newline, "max" for none. */
        put(f->root, "memory.max", "671088640\n");
        put(f->root, "pids.max", "64\n");
        put(f->root, "cpu.max", "50000 100000\n");
        struct jail_cgroup_limits lim;
        assert_int_equal(jail_cgroup_read_limits(&cg, &lim), 0);
        assert_int_equal(lim.memory_max, 671088640);
        assert_int_equal(lim.pids_max, 64);
        assert_int_equal(lim.cpu_quota_us, 50000);
        assert_int_equal(lim.cpu_period_us, 100000);
        put(f->root, "memory.max", "max\n");
        put(f->root, "pids.max", "max\n");
        put(f->root, "cpu.max", "max 100000\n");
        assert_int_equal(jail_cgroup_read_limits(&cg, &lim), 0);
        assert_int_equal(lim.memory_max, 0);
        assert_int_equal(lim.pids_max, 0);
        assert_int_equal(lim.cpu_quota_us, 0);
        assert_int_equal(lim.cpu_period_us, 0);

        put(f->root, "memory.stat", "anon 104857600\nfile 4096\nkernel 8192\nshmem 1048576\n");
        put(f->root, "memory.peak", "110604288\n");
        put(f->root, "memory.events", "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\noom_group_kill 0\n");
        put(f->root, "pids.peak", "64\n");
        put(f->root, "pids.events", "max 18874\n");
        put(f->root, "cpu.stat", "usage_usec 1094000\nuser_usec 1000000\nsystem_usec 94000\nnr_periods 21\n"
                                 "nr_throttled 20\nthrottled_usec 1049000\n");
        struct jail_cgroup_stats st;
        assert_int_equal(jail_cgroup_read(&cg, &st), 0);
        assert_int_equal(st.mem_bytes, 104857600 + 1048576);
        assert_true(st.has_peak && st.peak_bytes == 110604288);
        assert_true(st.has_oom && st.oom_kills == 1);
        assert_true(st.has_pids_peak && st.pids_peak == 64);
        assert_true(st.has_forks_refused && st.forks_refused == 18874);
        assert_true(st.has_cpu && st.cpu_us == 1094000);
        assert_true(st.has_throttled && st.throttled_us == 1049000);

        /* A kernel without memory.peak (before 5.19) or pids.peak (before 6.1): unknown, not 0. */
        unlink_in(f->root, "memory.peak");
        unlink_in(f->root, "pids.peak");
        assert_int_equal(jail_cgroup_read(&cg, &st), 0);
        assert_false(st.has_peak);
        assert_false(st.has_pids_peak);
        assert_true(st.has_oom);
}

/* A run's cgroup on v1: a directory per hierarchy, cpuacct for CPU time. */
static void test_v1_files(void **state)
{
        struct fake *f = *state;
        struct jail_cgroup cg = { .mode = JAIL_CG_V1, .cpu_quota_us = 150000 };
        static const char *const sub[] = { "memory", "pids", "cpu", "cpuacct" };
        for (unsigned c = 0; c < _JAIL_CG_CTL_MAX; c++) {
                snprintf(cg.dir[c], sizeof(cg.dir[c]), "%s/%s", f->root, sub[c]);
                mk(cg.dir[c]);
        }
        const char *mem = cg.dir[JAIL_CG_MEMORY], *pids = cg.dir[JAIL_CG_PIDS], *cpu = cg.dir[JAIL_CG_CPU];
        put(mem, "memory.limit_in_bytes", "");
        put(mem, "memory.memsw.limit_in_bytes", "");
        put(pids, "pids.max", "");
        put(cpu, "cpu.cfs_period_us", "");
        put(cpu, "cpu.cfs_quota_us", "");
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(jail_cgroup_set_limits(&cg, 335544320, 128, &err), 0);
        assert_string_equal(get(mem, "memory.limit_in_bytes"), "335544320");
        assert_string_equal(get(mem, "memory.memsw.limit_in_bytes"), "335544320");
        assert_string_equal(get(pids, "pids.max"), "128");
        assert_string_equal(get(cpu, "cpu.cfs_period_us"), "100000");
        assert_string_equal(get(cpu, "cpu.cfs_quota_us"), "150000");

        put(mem, "memory.limit_in_bytes", "335544320\n");
        put(pids, "pids.max", "128\n");
        put(cpu, "cpu.cfs_quota_us", "150000\n");
        put(cpu, "cpu.cfs_period_us", "100000\n");
        struct jail_cgroup_limits lim;
        assert_int_equal(jail_cgroup_read_limits(&cg, &lim), 0);
        assert_int_equal(lim.memory_max, 335544320);
        assert_int_equal(lim.pids_max, 128);
        assert_int_equal(lim.cpu_quota_us, 150000);
        assert_int_equal(lim.cpu_period_us, 100000);
        put(cpu, "cpu.cfs_quota_us", "-1\n"); /* v1's "none" */
        assert_int_equal(jail_cgroup_read_limits(&cg, &lim), 0);
        assert_int_equal(lim.cpu_quota_us, 0);

        put(mem, "memory.stat", "cache 4096\nrss 209715200\nrss_huge 0\nshmem 0\nmapped_file 0\n");
        put(mem, "memory.max_usage_in_bytes", "351272960\n");
        put(mem, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
        put(pids, "pids.peak", "9\n");
        put(pids, "pids.events", "max 0\n");
        put(cg.dir[JAIL_CG_CPUACCT], "cpuacct.usage", "2500123456\n");
        put(cpu, "cpu.stat", "nr_periods 30\nnr_throttled 12\nthrottled_time 600000000\n");
        struct jail_cgroup_stats st;
        assert_int_equal(jail_cgroup_read(&cg, &st), 0);
        assert_int_equal(st.mem_bytes, 209715200);
        assert_true(st.has_peak && st.peak_bytes == 351272960);
        assert_true(st.has_oom && st.oom_kills == 2);
        assert_true(st.has_pids_peak && st.pids_peak == 9);
        assert_true(st.has_forks_refused && st.forks_refused == 0);
        assert_true(st.has_cpu && st.cpu_us == 2500123);
        assert_true(st.has_throttled && st.throttled_us == 600000);

        /* Without a quota written, no throttled time is claimed. */
        cg.want.cpu_quota_us = 0;
        assert_int_equal(jail_cgroup_read(&cg, &st), 0);
        assert_false(st.has_throttled);
}

/* prepare: co-mounted hierarchies share one directory (made once); a failure after the
 * directories were made (here: no limit files, as on a directory that is not a cgroup)
 * removes them all. */
static void test_prepare_unwinds(void **state)
{
        struct fake *f = *state;
        struct jail_cgroup_sys sys = { .mode = JAIL_CG_V1, .cpu_quota_us = 100000 };
        char mem[PATH_MAX], cpu[PATH_MAX];
        snprintf(mem, sizeof(mem), "%s/memory", f->root);
        snprintf(cpu, sizeof(cpu), "%s/cpu,cpuacct", f->root);
        mk(mem);
        mk(cpu);
        snprintf(sys.base[JAIL_CG_MEMORY], PATH_MAX, "%s", mem);
        snprintf(sys.base[JAIL_CG_CPU], PATH_MAX, "%s", cpu);
        snprintf(sys.base[JAIL_CG_CPUACCT], PATH_MAX, "%s", cpu);
        snprintf(sys.rel[JAIL_CG_MEMORY], PATH_MAX, "/anvil-x");
        struct jail_cgroup cg;
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(jail_cgroup_prepare(&sys, "j1", 1 << 28, 64, &cg, &err), -ENOENT);
        char want[PATH_MAX + 128];
        snprintf(want, sizeof(want), "Failed to set memory.limit_in_bytes in %s/j1: No such file or directory", mem);
        assert_string_equal(err.msg, want);
        struct stat st;
        char p[PATH_MAX + 8];
        snprintf(p, sizeof(p), "%s/j1", mem);
        assert_int_equal(stat(p, &st), -1);
        snprintf(p, sizeof(p), "%s/j1", cpu);
        assert_int_equal(stat(p, &st), -1);
        assert_string_equal(cg.dir[JAIL_CG_MEMORY], "");

        /* A name that exists (a leftover the sweep could not remove) is never reused. */
        snprintf(p, sizeof(p), "%s/j2", mem);
        mk(p);
        assert_int_equal(jail_cgroup_prepare(&sys, "j2", 1 << 28, 64, &cg, &err), -EEXIST);
        snprintf(want, sizeof(want), "Failed to create cgroup %s/j2: File exists", mem);
        assert_string_equal(err.msg, want);
        rmdir(p);
}

/* destroy and the start-up sweep: removed when empty; a directory that cannot be removed is
 * reported, never silently left. */
static void test_destroy_and_sweep(void **state)
{
        struct fake *f = *state;
        struct jail_cgroup cg = { .mode = JAIL_CG_V1 };
        snprintf(cg.dir[JAIL_CG_MEMORY], PATH_MAX, "%s/j1", f->root);
        mk(cg.dir[JAIL_CG_MEMORY]);
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(jail_cgroup_destroy(&cg, &err), 0);
        assert_string_equal(cg.dir[JAIL_CG_MEMORY], "");
        /* A cgroup already gone is removed. */
        snprintf(cg.dir[JAIL_CG_MEMORY], PATH_MAX, "%s/j1", f->root);
        assert_int_equal(jail_cgroup_destroy(&cg, &err), 0);
        snprintf(cg.dir[JAIL_CG_MEMORY], PATH_MAX, "%s/j1", f->root);
        mk(cg.dir[JAIL_CG_MEMORY]);
        put(cg.dir[JAIL_CG_MEMORY], "left", "x");
        assert_int_equal(jail_cgroup_destroy(&cg, &err), -ENOTEMPTY);
        char want[PATH_MAX + 64];
        snprintf(want, sizeof(want), "Failed to remove cgroup %s/j1: Directory not empty", f->root);
        assert_string_equal(err.msg, want);

        struct jail_cgroup_sys sys = { .mode = JAIL_CG_V1 };
        snprintf(sys.base[JAIL_CG_MEMORY], PATH_MAX, "%s", f->root);
        char p[PATH_MAX + 8];
        snprintf(p, sizeof(p), "%s/j7", f->root);
        mk(p);
        snprintf(p, sizeof(p), "%s/j8", f->root);
        mk(p);
        unsigned removed = 0;
        assert_int_equal(jail_cgroup_sys_sweep(&sys, &removed, &err), -ENOTEMPTY);
        assert_int_equal(removed, 2); /* j7 and j8; j1 holds a file */
        snprintf(p, sizeof(p), "%s/j1/left", f->root);
        unlink(p);
        assert_int_equal(jail_cgroup_sys_sweep(&sys, &removed, &err), 0);
        assert_int_equal(removed, 1);
}

/* Membership is read from /proc: a pid not in the run's cgroup refuses the run, in the
 * catalog's words. */
static void test_verify_refuses(void **state)
{
        struct fake *f = *state;
        struct jail_cgroup cg = { .mode = JAIL_CG_V1 };
        snprintf(cg.dir[JAIL_CG_MEMORY], PATH_MAX, "%s", f->root);
        snprintf(cg.rel[JAIL_CG_MEMORY], PATH_MAX, "/anvil-test/j1");
        char mech[160];
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(jail_cgroup_verify(&cg, getpid(), mech, sizeof(mech), &err), -EPERM);
        assert_string_equal(err.msg, "refused: cgroup not in force (pid 1 is not in the run's cgroup in every hierarchy)");
        assert_false(cg.verified);
        assert_false(jail_cgroup_contains(&cg, getpid()));
}

/* A write the kernel takes only in part is a failure, not a success with whatever errno held:
 * a file-size limit of 3 bytes cuts the write short (in a child, which keeps the limit). */
static void test_cg_write_short(void **state)
{
        (void)state;
        char dir[] = "/tmp/anvil-test-cgw-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char f[64];
        snprintf(f, sizeof(f), "%s/memory.max", dir);
        int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        (void)close(fd);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct rlimit rl = { 3, 3 };
                (void)signal(SIGXFSZ, SIG_IGN);
                if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
                        _exit(2);
                errno = 0;
                _exit(jail_cg_write(dir, "memory.max", "12345") == -EIO ? 0 : 1);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        (void)unlink(f);
        (void)rmdir(dir);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_find_mount),
                cmocka_unit_test(test_find_own),
                cmocka_unit_test(test_v2_place),
                cmocka_unit_test(test_parsers),
                cmocka_unit_test(test_cg_write_short),
                cmocka_unit_test_setup_teardown(test_v2_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_v1_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_prepare_unwinds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_destroy_and_sweep, setup, teardown),
                cmocka_unit_test_setup_teardown(test_verify_refuses, setup, teardown),
        };
        return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
