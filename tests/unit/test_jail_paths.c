/* Unit tests for the table of the jail's paths (policy/jail_paths.h) and the views generated
 * from it: the mount setup's order (a directory before what is in it), the Landlock rights
 * (jail/landlock.c's jail_landlock_rights), the audit hook's roots (pol_jail_roots, judged
 * by pol_path_verdict as the runner judges them) and the blast radius's lines. The views must
 * agree: every path the audit hook lets the tool read, Landlock lets be read; every path it
 * lets be written, Landlock lets be written (but the data-free devices, whose writes Landlock
 * refuses on its own); every path Landlock lets be read is mounted, and is in the blast radius
 * unless the table says why not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jail/compat.h"
#include "jail/jail.h"
#include "lib/cleanup.h"
#include "policy/jail_paths.h"
#include "policy/rules.h"

static bool audit_reads(enum pol_jp_audit a)
{
        return a == POL_JP_AUDIT_SYSTEM || a == POL_JP_AUDIT_DEVICE || a == POL_JP_AUDIT_READ_ROOT ||
               a == POL_JP_AUDIT_WRITE_ROOT || a == POL_JP_AUDIT_SCRATCH;
}

static bool audit_writes(enum pol_jp_audit a)
{
        return a == POL_JP_AUDIT_DEVICE || a == POL_JP_AUDIT_WRITE_ROOT || a == POL_JP_AUDIT_SCRATCH;
}

static bool mounted_dir(const struct pol_jail_path *e)
{
        return e->kind == POL_JP_TREE && (e->mount == POL_JP_MOUNT_DIR || e->mount == POL_JP_MOUNT_DEV_TMPFS ||
                                          e->mount == POL_JP_MOUNT_TMPFS);
}

/* The mount view: each path's parent is the root or a directory of the table that the mount
 * setup (mountns.c, in table order) makes before it; each synthetic file has contents; the
 * jail's named paths are the table's. */
static void test_mount_order(void **state)
{
        (void)state;
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                assert_true(e->path[0] == '/');
                char parent[256];
                snprintf(parent, sizeof(parent), "%s", e->path);
                *strrchr(parent, '/') = 0;
                if (parent[0]) {
                        const struct pol_jail_path *p = pol_jail_path_find(parent);
                        if (!p || p >= e || !mounted_dir(p))
                                fail_msg("%s: its parent %s is not a directory made before it", e->path, parent);
                }
                if (e->mount == POL_JP_MOUNT_SYNTH && !jail_mountns_synthetic(e->path))
                        fail_msg("%s: synthetic, with no contents in mountns.c", e->path);
                for (size_t k = 0; k < i; k++)
                        assert_string_not_equal(pol_jail_paths[k].path, e->path);
        }
        static const struct {
                const char *path;
                enum pol_jp_mount mount;
        } named[] = {
                { JAIL_WORKDIR, POL_JP_MOUNT_DIR },         { JAIL_INPUTS, POL_JP_MOUNT_INPUTS },
                { JAIL_ARTIFACTS, POL_JP_MOUNT_ARTIFACTS }, { JAIL_TMP, POL_JP_MOUNT_TMPFS },
                { JAIL_RUNNER, POL_JP_MOUNT_RUNNER },
        };
        for (size_t i = 0; i < ELEMENTSOF(named); i++) {
                const struct pol_jail_path *e = pol_jail_path_find(named[i].path);
                assert_non_null(e);
                assert_int_equal(e->mount, named[i].mount);
        }
        assert_null(pol_jail_path_find("/etc/shadow"));
}

/* The Landlock view against the audit view, entry by entry. */
static void test_audit_within_landlock(void **state)
{
        (void)state;
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                uint64_t ll = jail_landlock_rights(e->landlock);
                bool ll_read = (ll & LANDLOCK_ACCESS_FS_READ_FILE) || (ll & LANDLOCK_ACCESS_FS_READ_DIR);
                assert_int_equal(ll_read, pol_jail_ll_reads(e->landlock));
                assert_int_equal((ll & LANDLOCK_ACCESS_FS_WRITE_FILE) != 0, pol_jail_ll_writes(e->landlock));
                if (audit_reads(e->audit) && !(ll & LANDLOCK_ACCESS_FS_READ_FILE))
                        fail_msg("%s: the audit hook lets it be read, Landlock does not", e->path);
                if (e->audit == POL_JP_AUDIT_WORKDIR && !(ll & LANDLOCK_ACCESS_FS_READ_DIR))
                        fail_msg("%s: the audit hook lets it be listed, Landlock does not", e->path);
                /* The devices are the one exception, and only for writes: Landlock refuses the
                 * writes to zero and urandom itself (t_landlock.sh). */
                if (audit_writes(e->audit) && e->audit != POL_JP_AUDIT_DEVICE && !(ll & LANDLOCK_ACCESS_FS_WRITE_FILE))
                        fail_msg("%s: the audit hook lets it be written, Landlock does not", e->path);
                if (e->kind == POL_JP_TREE && (ll & LANDLOCK_ACCESS_FS_READ_FILE) &&
                    e->landlock != POL_JP_LL_READ && !(ll & LANDLOCK_ACCESS_FS_READ_DIR))
                        fail_msg("%s: a tree read but not listed, not by a READ grant", e->path);
        }
        /* The disagreement this table ended: /etc/alternatives, a tree whose files are read
         * through its links and which is listed by nobody, in the jail and directly alike (one
         * rule now; jail/landlock.c had R_FILE in one list, R_TREE in the other). */
        const struct pol_jail_path *alt = pol_jail_path_find("/etc/alternatives");
        assert_non_null(alt);
        assert_int_equal(alt->kind, POL_JP_TREE);
        assert_int_equal(alt->direct, POL_JP_DIRECT_HOST);
        assert_true(jail_landlock_rights(alt->landlock) & LANDLOCK_ACCESS_FS_READ_FILE);
        assert_false(jail_landlock_rights(alt->landlock) & LANDLOCK_ACCESS_FS_READ_DIR);
}

static int no_realpath(const char *path, char *out, size_t size, void *ctx)
{
        (void)path, (void)out, (void)size, (void)ctx;
        return -ENOENT;
}

/* The audit hook's verdicts, from the roots the supervisor sends (pol_jail_roots) and the
 * runner's system root and devices, as runner/audit.c asks them: each entry's path (and a
 * file below each tree) is readable by the tool iff the table's audit column says so, and
 * then Landlock lets it be read too. In the jail and directly, where the paths move. */
static void check_verdicts(const char *run_dir)
{
        _cleanup_free_ struct pol_jail_roots *jr = malloc(sizeof(*jr));
        assert_non_null(jr);
        assert_int_equal(pol_jail_roots(run_dir, jr), 0);
        struct pol_roots roots = { .workdir = jr->workdir, .n_read = jr->n_read, .n_write = jr->n_write,
                                   .scratch = jr->scratch, .system = pol_jail_system_root() };
        memcpy(roots.read, jr->read, sizeof(jr->read));
        memcpy(roots.write, jr->write, sizeof(jr->write));
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                char where[PATH_MAX], p[PATH_MAX + 8], resolved[PATH_MAX];
                if (pol_jail_path_where(e, run_dir, "/opt/anvil/anvil-py", where, sizeof(where)) < 0) {
                        assert_int_equal(e->direct, POL_JP_DIRECT_NONE);
                        continue;
                }
                for (int below = 0; below < (e->kind == POL_JP_TREE ? 2 : 1); below++) {
                        snprintf(p, sizeof(p), "%s%s", where, below ? "/x" : "");
                        assert_int_equal(pol_path_resolve(p, "/", no_realpath, NULL, resolved, sizeof(resolved)), 0);
                        bool read = pol_jail_device(p) || pol_path_verdict(resolved, POL_ACCESS_READ, &roots) == POL_WHY_NONE;
                        bool write = pol_jail_device(p) || pol_path_verdict(resolved, POL_ACCESS_WRITE, &roots) == POL_WHY_NONE;
                        bool want_read = audit_reads(e->audit) || (e->audit == POL_JP_AUDIT_WORKDIR && !below);
                        if (read != want_read)
                                fail_msg("%s: the audit hook %s it, the table says %s", p, read ? "reads" : "refuses",
                                         want_read ? "read" : "refused");
                        if (write != audit_writes(e->audit))
                                fail_msg("%s: the audit hook %s it, against the table", p, write ? "writes" : "refuses writing");
                        if (read && !pol_jail_ll_reads(e->landlock))
                                fail_msg("%s: the audit hook lets it be read, Landlock does not", p);
                }
        }
}

static void test_audit_verdicts(void **state)
{
        (void)state;
        check_verdicts(NULL);
        check_verdicts("/var/lib/anvil/runs/7/jail");
        _cleanup_free_ struct pol_jail_roots *jr = malloc(sizeof(*jr));
        assert_int_equal(pol_jail_roots(NULL, jr), 0);
        assert_string_equal(jr->workdir, "/work");
        assert_int_equal(jr->n_read, 2);
        assert_string_equal(jr->read[0], "/work/inputs");
        assert_string_equal(jr->read[1], "/work/artifacts");
        assert_int_equal(jr->n_write, 1);
        assert_string_equal(jr->write[0], "/work/artifacts");
        assert_string_equal(jr->scratch, "/tmp");
        assert_int_equal(pol_jail_roots("/r", jr), 0);
        assert_string_equal(jr->workdir, "/r");
        assert_string_equal(jr->read[0], "/r/inputs");
        assert_string_equal(jr->read[1], "/r/artifacts");
        assert_string_equal(jr->write[0], "/r/artifacts");
        assert_string_equal(jr->scratch, "/r/tmp");
        assert_string_equal(pol_jail_system_root(), "/usr");
        assert_true(pol_jail_device("/dev/null"));
        assert_false(pol_jail_device("/dev/tty"));
        assert_false(pol_jail_device("/etc/passwd"));
}

struct lines {
        char text[16][512];
        size_t n;
};

static void push(void *ctx, const char *line)
{
        struct lines *l = ctx;
        assert_true(l->n < ELEMENTSOF(l->text));
        snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", line);
}

static bool all_exist(const char *path)
{
        (void)path;
        return true;
}

static bool no_matplotlibrc(const char *path)
{
        return strcmp(path, "/etc/matplotlibrc") != 0;
}

static void expect_lines(bool direct, bool ll, bool (*exists)(const char *), const char *const *want, size_t n)
{
        struct lines l = { .n = 0 };
        pol_jail_blast_lines(direct, ll, exists, push, &l);
        for (size_t i = 0; i < n && i < l.n; i++)
                assert_string_equal(l.text[i], want[i]);
        assert_int_equal(l.n, n);
}

/* The blast radius's path lines, verbatim as the RunResult has carried them (t_blast.sh), and
 * against the Landlock view: each path a jail line names (but after "; not") is Landlock-
 * readable, and each Landlock-readable entry is in a line unless the table says why not. */
static void test_blast_lines(void **state)
{
        (void)state;
        static const char *const jail_ll[] = {
                "/usr",
                "/etc/alternatives",
                "/etc/ld.so.cache",
                "/etc/matplotlibrc",
                "/etc (synthetic: passwd, group, hosts, nsswitch.conf; not hostname)",
                "/proc (the jail's own processes)",
                "/dev/null, /dev/zero, /dev/urandom",
        };
        expect_lines(false, true, all_exist, jail_ll, ELEMENTSOF(jail_ll));
        static const char *const jail_no_ll[] = {
                "/usr",
                "/etc/alternatives",
                "/etc/ld.so.cache",
                "/etc (synthetic: passwd, group, hosts, hostname, nsswitch.conf)",
                "/proc (the jail's own processes)",
                "/dev/null, /dev/zero, /dev/urandom",
        };
        expect_lines(false, false, no_matplotlibrc, jail_no_ll, ELEMENTSOF(jail_no_ll));
        static const char *const direct_ll[] = {
                "/usr (landlock)",
                "/etc/alternatives, /etc/ld.so.cache, /etc/matplotlibrc (landlock)",
                "/dev/null, /dev/zero, /dev/urandom (landlock)",
        };
        expect_lines(true, true, all_exist, direct_ll, ELEMENTSOF(direct_ll));
        static const char *const direct_no_ll[] = { "the host's file system (no landlock in force)" };
        expect_lines(true, false, all_exist, direct_no_ll, 1);

        struct lines l = { .n = 0 };
        pol_jail_blast_lines(false, true, all_exist, push, &l);
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                const char *name = e->blast == POL_JP_BLAST_SYNTH ? strrchr(e->path, '/') + 1 : e->path;
                bool named = false, refused = false;
                for (size_t k = 0; k < l.n; k++) {
                        const char *s = strstr(l.text[k], name), *not = strstr(l.text[k], "; not ");
                        if (s) {
                                named = true;
                                refused = not && s > not;
                        }
                }
                if (e->blast == POL_JP_BLAST_NONE || e->blast == POL_JP_BLAST_RUN)
                        continue; /* not shown, or the run's own lines (result.c) */
                if (!named)
                        fail_msg("%s: shown, in no line", e->path);
                if (!refused && !pol_jail_ll_reads(e->landlock))
                        fail_msg("%s: shown readable, Landlock refuses it", e->path);
                if (refused && pol_jail_ll_reads(e->landlock))
                        fail_msg("%s: shown refused, Landlock reads it", e->path);
        }
        /* What Landlock lets be read and the blast radius does not show: the directories of the
         * root, and Anvil's own runner. Named here so that a new entry must say. */
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                if (e->blast == POL_JP_BLAST_NONE && pol_jail_ll_reads(e->landlock) &&
                    strcmp(e->path, JAIL_WORKDIR) != 0 && strcmp(e->path, JAIL_RUNNER) != 0)
                        fail_msg("%s: Landlock lets it be read, the blast radius does not show it", e->path);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mount_order),
                cmocka_unit_test(test_audit_within_landlock),
                cmocka_unit_test(test_audit_verdicts),
                cmocka_unit_test(test_blast_lines),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
