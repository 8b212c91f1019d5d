/* Unit tests for policy/paths.c and policy/audit.c: path resolution against a tiny in-memory
 * file system (existing paths and symlinks, so '../' and a link out of the roots are tested
 * without touching the host), roots both ways, how roots are shown to a tool, the audit hook's
 * event table (every event, and the events it leaves alone), who-asks pass-through modules, and
 * the globals an unpickler may not load. */
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

#include "lib/cleanup.h"
#include "policy/rules.h"

#define NONE POL_WHY_NONE

/* ---- a fake realpath(3) ---- */

/* Existing paths; a target makes the entry a symlink (absolute, or relative to its directory). */
struct fs_entry {
        const char *path;
        const char *target;
};

static const struct fs_entry fake_fs[] = {
        { "/work", NULL },
        { "/work/inputs", NULL },
        { "/work/inputs/a", NULL },
        { "/work/inputs/sales.csv", NULL },
        { "/work/inputs/link", "/etc/passwd" }, /* a link out of the roots */
        { "/work/inputs/etc", "/etc" },         /* a directory link out */
        { "/work/inputs2", NULL },
        { "/work/artifacts", NULL },
        { "/work/artifacts/up", "/work" },              /* a link up, then back down */
        { "/work/artifacts/rel", "../inputs" },         /* a relative link inside */
        { "/work/artifacts/loop", "loop" },             /* ELOOP */
        { "/work/artifacts/dangling", "/etc/newfile" }, /* a link to what does not exist yet */
        { "/tmp", NULL },
        { "/etc", NULL },
        { "/etc/passwd", NULL },
};

struct fake_ctx {
        unsigned calls;
        bool relative_seen; /* pol_path_resolve must only ask about absolute paths */
};

static const struct fs_entry *fs_find(const char *path)
{
        for (size_t i = 0; i < ELEMENTSOF(fake_fs); i++)
                if (strcmp(fake_fs[i].path, path) == 0)
                        return &fake_fs[i];
        return NULL;
}

/* realpath(3) on fake_fs: every component must exist; symlinks are followed, 8 deep at most. */
static int fs_realpath(const char *path, char *out, size_t size, int depth)
{
        if (depth > 8)
                return -ELOOP;
        char cur[PATH_MAX] = "/", copy[PATH_MAX], next[PATH_MAX];
        if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy))
                return -ENAMETOOLONG;
        char *save = NULL;
        for (char *comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
                if (strcmp(comp, ".") == 0)
                        continue;
                if (strcmp(comp, "..") == 0) {
                        char *s = strrchr(cur, '/');
                        if (s == cur)
                                cur[1] = 0;
                        else
                                *s = 0;
                        continue;
                }
                snprintf(next, sizeof(next), "%s%s%s", cur, strcmp(cur, "/") == 0 ? "" : "/", comp);
                const struct fs_entry *e = fs_find(next);
                if (!e)
                        return -ENOENT;
                if (!e->target) {
                        strcpy(cur, next);
                        continue;
                }
                char t[PATH_MAX];
                if (e->target[0] == '/')
                        snprintf(t, sizeof(t), "%s", e->target);
                else
                        snprintf(t, sizeof(t), "%s/%s", cur, e->target);
                int r = fs_realpath(t, cur, sizeof(cur), depth + 1);
                if (r < 0)
                        return r;
        }
        if (strlen(cur) >= size)
                return -ENAMETOOLONG;
        strcpy(out, cur);
        return 0;
}

static int fake_realpath(const char *path, char *out, size_t size, void *ctx)
{
        struct fake_ctx *c = ctx;
        c->calls++;
        if (path[0] != '/')
                c->relative_seen = true;
        return fs_realpath(path, out, size, 0);
}

/* The fake itself, so the cases below test paths.c and not it. */
static void test_fake_realpath(void **state)
{
        (void)state;
        char out[PATH_MAX];
        assert_int_equal(fs_realpath("/work/inputs/link", out, sizeof(out), 0), 0);
        assert_string_equal(out, "/etc/passwd");
        assert_int_equal(fs_realpath("/work/artifacts/rel/a", out, sizeof(out), 0), 0);
        assert_string_equal(out, "/work/inputs/a");
        assert_int_equal(fs_realpath("/work/artifacts/up/inputs", out, sizeof(out), 0), 0);
        assert_string_equal(out, "/work/inputs");
        assert_int_equal(fs_realpath("/work/nothing", out, sizeof(out), 0), -ENOENT);
        assert_int_equal(fs_realpath("/work/artifacts/dangling", out, sizeof(out), 0), -ENOENT);
        assert_int_equal(fs_realpath("/work/artifacts/loop", out, sizeof(out), 0), -ELOOP);
}

/* ---- pol_path_resolve ---- */

static const struct {
        const char *path;
        const char *cwd;
        const char *resolved;
} resolve_cases[] = {
        /* ".." where the path does not exist yet: applied as written */
        { "./artifacts/../outside.txt", "/work", "/work/outside.txt" },
        { "artifacts/../../etc/shadow", "/work", "/etc/shadow" },
        { "../../../etc/passwd", "/work", "/etc/passwd" },
        { "../../../../../../../etc/passwd", "/work/inputs", "/etc/passwd" },
        /* components that do not exist yet are kept */
        { "artifacts/new/x.csv", "/work", "/work/artifacts/new/x.csv" },
        { "artifacts/new/../x.csv", "/work", "/work/artifacts/x.csv" },
        { "artifacts/out.png", "/work", "/work/artifacts/out.png" },
        { "/work/outside.txt", "/tmp", "/work/outside.txt" },
        /* symlinks followed where they exist */
        { "./inputs/link", "/work", "/etc/passwd" },
        { "inputs/etc/shadow", "/work", "/etc/shadow" },
        { "/work/artifacts/up/inputs/a", "/work", "/work/inputs/a" },
        { "/work/artifacts/up/outside.txt", "/", "/work/outside.txt" },
        { "artifacts/rel/sales.csv", "/work", "/work/inputs/sales.csv" },
        /* ".." after a symlink is the link target's parent, as the kernel sees it */
        { "/work/artifacts/up/../x", "/work", "/x" },
        { "inputs/etc/../work/inputs/a", "/work", "/work/inputs/a" },
        /* dots and slashes */
        { "/..", "/work", "/" },
        { "/../..", "/work", "/" },
        { "/", "/work", "/" },
        { ".", "/work", "/work" },
        { "", "/work", "/work" },
        { "./", "/work", "/work" },
        { "//work///inputs//a/", "/", "/work/inputs/a" },
        { "inputs/./a", "/work", "/work/inputs/a" },
        { "a", "/work/inputs", "/work/inputs/a" },
        { "..", "/work/inputs", "/work" },
        { "...", "/work", "/work/..." }, /* a name, not a dot component */
        { "..a/b", "/work", "/work/..a/b" },
        /* a symlink loop does not resolve: kept as written (the open fails with ELOOP) */
        { "artifacts/loop", "/work", "/work/artifacts/loop" },
        { "/tmp/scratch.bin", "/work", "/tmp/scratch.bin" },
};

static void test_path_resolve(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(resolve_cases); i++) {
                struct fake_ctx ctx = { 0 };
                char out[PATH_MAX];
                memset(out, 'X', sizeof(out));
                int r = pol_path_resolve(resolve_cases[i].path, resolve_cases[i].cwd, fake_realpath, &ctx, out,
                                         sizeof(out));
                if (r != 0)
                        fail_msg("pol_path_resolve(\"%s\", cwd %s): %d", resolve_cases[i].path, resolve_cases[i].cwd,
                                 r);
                if (strcmp(out, resolve_cases[i].resolved) != 0)
                        fail_msg("pol_path_resolve(\"%s\", cwd %s): \"%s\", want \"%s\"", resolve_cases[i].path,
                                 resolve_cases[i].cwd, out, resolve_cases[i].resolved);
                assert_false(ctx.relative_seen);
        }
}

static void test_path_resolve_lengths(void **state)
{
        (void)state;
        struct fake_ctx ctx = { 0 };
        char out[PATH_MAX];
        /* A path that does not fit the resolver's buffer. */
        char *big = malloc(5000);
        assert_non_null(big);
        memset(big, 'a', 4999);
        big[4999] = 0;
        assert_int_equal(pol_path_resolve(big, "/work", fake_realpath, &ctx, out, sizeof(out)), -ENAMETOOLONG);
        big[0] = '/';
        assert_int_equal(pol_path_resolve(big, "/work", fake_realpath, &ctx, out, sizeof(out)), -ENAMETOOLONG);
        /* Relative: fits alone, not with the cwd before it. */
        memset(big, 'a', 4094);
        big[4094] = 0;
        assert_int_equal(pol_path_resolve(big, "/work", fake_realpath, &ctx, out, sizeof(out)), -ENAMETOOLONG);
        /* Many short components: the written length counts, not the resolved one. */
        for (size_t i = 0; i + 2 < 4999; i += 2)
                memcpy(big + i, "./", 2);
        big[4998] = 0;
        assert_int_equal(pol_path_resolve(big, "/work", fake_realpath, &ctx, out, sizeof(out)), -ENAMETOOLONG);
        free(big);

        /* The output buffer: exactly enough, and one byte short. */
        char small[sizeof("/work/inputs/a")];
        assert_int_equal(pol_path_resolve("inputs/a", "/work", fake_realpath, &ctx, small, sizeof(small)), 0);
        assert_string_equal(small, "/work/inputs/a");
        assert_int_equal(pol_path_resolve("inputs/a", "/work", fake_realpath, &ctx, small, sizeof(small) - 1),
                         -ENAMETOOLONG);
        /* A symlink's target is what must fit, not the path as written. */
        char tiny[sizeof("/etc/passwd")];
        assert_int_equal(pol_path_resolve("/work/inputs/link", "/", fake_realpath, &ctx, tiny, sizeof(tiny)), 0);
        assert_string_equal(tiny, "/etc/passwd");
}

/* ---- pol_path_under ---- */

static const struct {
        const char *resolved;
        const char *root;
        bool under;
} under_cases[] = {
        { "/work/inputs", "/work/inputs", true },
        { "/work/inputs/x", "/work/inputs", true },
        { "/work/inputs/x/y/z.csv", "/work/inputs", true },
        { "/work/inputs2", "/work/inputs", false },
        { "/work/inputs2/x", "/work/inputs", false },
        { "/work/input", "/work/inputs", false },
        { "/work", "/work/inputs", false },
        { "/", "/work/inputs", false },
        { "/etc/passwd", "/work/inputs", false },
        { "/workx/inputs", "/work", false },
        { "/work/inputs", "/", true },
        { "/etc/passwd", "/", true },
        { "/", "/", true },
        { "/tmp/x", "/tmp", true },
        { "/tmpx", "/tmp", false },
};

static void test_path_under(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(under_cases); i++)
                if (pol_path_under(under_cases[i].resolved, under_cases[i].root) != under_cases[i].under)
                        fail_msg("pol_path_under(\"%s\", \"%s\"): want %s", under_cases[i].resolved,
                                 under_cases[i].root, under_cases[i].under ? "true" : "false");
}

/* ---- pol_path_verdict ---- */

static const struct pol_roots roots = {
        .workdir = "/work",
        .read = { "/work/inputs", "/work/artifacts" },
        .n_read = 2,
        .write = { "/work/artifacts" },
        .n_write = 1,
        .scratch = "/tmp",
        .system = "/usr", /* the jail's table's SYSTEM entry: test_jail_paths.c */
};

static const struct {
        const char *path;
        enum pol_access access;
        enum pol_why why;
} verdict_cases[] = {
        { "/work/inputs/a", POL_ACCESS_READ, NONE },
        { "/work/inputs", POL_ACCESS_READ, NONE },
        { "/work/inputs/sub/b.csv", POL_ACCESS_READ, NONE },
        { "/work/inputs/a", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/work/inputs", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/work/artifacts/out.csv", POL_ACCESS_READ, NONE },
        { "/work/artifacts/out.csv", POL_ACCESS_WRITE, NONE },
        { "/work/artifacts/new/x.csv", POL_ACCESS_WRITE, NONE },
        { "/work/artifacts", POL_ACCESS_WRITE, NONE },
        { "/tmp/x", POL_ACCESS_WRITE, NONE },
        { "/tmp/x", POL_ACCESS_READ, NONE },
        { "/tmp", POL_ACCESS_WRITE, NONE },
        { "/etc/passwd", POL_ACCESS_READ, POL_WHY_READ },
        { "/etc/passwd", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/work/outside.txt", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/work/outside.txt", POL_ACCESS_READ, POL_WHY_READ },
        { "/work/artifactsX", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/work/artifactsX", POL_ACCESS_READ, POL_WHY_READ },
        { "/work/inputs2/a", POL_ACCESS_READ, POL_WHY_READ },
        { "/tmpx", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/", POL_ACCESS_READ, POL_WHY_READ },
        { "/", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/usr/share/zoneinfo/Europe/Berlin", POL_ACCESS_READ, NONE },
        { "/usr", POL_ACCESS_READ, NONE },
        { "/usr/share/zoneinfo/Europe/Berlin", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/usr/lib/x", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "/usrx/a", POL_ACCESS_READ, POL_WHY_READ },
};

static void test_path_verdict(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(verdict_cases); i++) {
                enum pol_why got = pol_path_verdict(verdict_cases[i].path, verdict_cases[i].access, &roots);
                if (got != verdict_cases[i].why)
                        fail_msg("pol_path_verdict(\"%s\", %s): got %s, want %s", verdict_cases[i].path,
                                 verdict_cases[i].access == POL_ACCESS_WRITE ? "write" : "read", pol_why_text(got),
                                 pol_why_text(verdict_cases[i].why));
        }
        /* Without a scratch directory /tmp is outside like anything else. */
        struct pol_roots no_tmp = roots;
        no_tmp.scratch = NULL;
        assert_int_equal(pol_path_verdict("/tmp/x", POL_ACCESS_WRITE, &no_tmp), POL_WHY_WRITE);
        assert_int_equal(pol_path_verdict("/tmp/x", POL_ACCESS_READ, &no_tmp), POL_WHY_READ);
        assert_int_equal(pol_path_verdict("/work/artifacts/x", POL_ACCESS_WRITE, &no_tmp), NONE);
        /* Without the system root /usr is outside too. */
        struct pol_roots no_usr = roots;
        no_usr.system = NULL;
        assert_int_equal(pol_path_verdict("/usr/share/zoneinfo/UTC", POL_ACCESS_READ, &no_usr), POL_WHY_READ);
        /* No roots at all: everything outside. */
        const struct pol_roots empty = { .workdir = "/work" };
        assert_int_equal(pol_path_verdict("/work/inputs/a", POL_ACCESS_READ, &empty), POL_WHY_READ);
        assert_int_equal(pol_path_verdict("/work/artifacts/a", POL_ACCESS_WRITE, &empty), POL_WHY_WRITE);
}

/* Resolution and verdict together, as the pre-check runs them: the escapes of issue 3 and their
 * legitimate neighbours. */
static const struct {
        const char *path;
        enum pol_access access;
        enum pol_why why;
} escape_cases[] = {
        { "./artifacts/../outside.txt", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "./inputs/link", POL_ACCESS_READ, POL_WHY_READ },
        { "inputs/etc/passwd", POL_ACCESS_READ, POL_WHY_READ },
        { "../../../etc/passwd", POL_ACCESS_READ, POL_WHY_READ },
        { "/etc/passwd", POL_ACCESS_READ, POL_WHY_READ },
        { "artifacts/up/outside.txt", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "artifacts/up/inputs/a", POL_ACCESS_WRITE, POL_WHY_WRITE },
        { "artifacts/up/inputs/a", POL_ACCESS_READ, NONE },
        { "artifacts/rel/a", POL_ACCESS_READ, NONE },
        { "inputs/sales.csv", POL_ACCESS_READ, NONE },
        { "./inputs/../inputs/sales.csv", POL_ACCESS_READ, NONE },
        { "/work/inputs/sales.csv", POL_ACCESS_READ, NONE },
        { "artifacts/chart.png", POL_ACCESS_WRITE, NONE },
        { "artifacts/new/deep/x.csv", POL_ACCESS_WRITE, NONE },
        { "/work/artifacts/report.md", POL_ACCESS_WRITE, NONE },
        { "/tmp/cache.json", POL_ACCESS_WRITE, NONE },
};

static void test_path_escapes(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(escape_cases); i++) {
                struct fake_ctx ctx = { 0 };
                char out[PATH_MAX];
                assert_int_equal(pol_path_resolve(escape_cases[i].path, "/work", fake_realpath, &ctx, out, sizeof(out)),
                                 0);
                enum pol_why got = pol_path_verdict(out, escape_cases[i].access, &roots);
                if (got != escape_cases[i].why)
                        fail_msg("%s '%s' (resolved %s): got %s, want %s",
                                 escape_cases[i].access == POL_ACCESS_WRITE ? "write" : "read", escape_cases[i].path,
                                 out, pol_why_text(got), pol_why_text(escape_cases[i].why));
        }
}

/* ---- pol_roots_display ---- */

static void test_roots_display(void **state)
{
        (void)state;
        char buf[256];
        pol_roots_display(&roots, false, buf, sizeof(buf));
        assert_string_equal(buf, "./inputs, ./artifacts");
        pol_roots_display(&roots, true, buf, sizeof(buf));
        assert_string_equal(buf, "./artifacts");

        /* A root outside the workdir is shown absolute; so is one that only shares a prefix. */
        const struct pol_roots other = {
                .workdir = "/work",
                .read = { "/work/inputs", "/data/shared", "/workshop/x" },
                .n_read = 3,
                .write = { "/srv/out" },
                .n_write = 1,
        };
        pol_roots_display(&other, false, buf, sizeof(buf));
        assert_string_equal(buf, "./inputs, /data/shared, /workshop/x");
        pol_roots_display(&other, true, buf, sizeof(buf));
        assert_string_equal(buf, "/srv/out");

        /* No workdir: every root absolute. No roots: nothing. */
        struct pol_roots nowd = roots;
        nowd.workdir = NULL;
        pol_roots_display(&nowd, false, buf, sizeof(buf));
        assert_string_equal(buf, "/work/inputs, /work/artifacts");
        const struct pol_roots empty = { .workdir = "/work" };
        memset(buf, 'X', sizeof(buf));
        pol_roots_display(&empty, true, buf, sizeof(buf));
        assert_string_equal(buf, "");

        /* A buffer too small: cut and terminated, never overrun. */
        char small[12];
        memset(small, 'X', sizeof(small));
        pol_roots_display(&roots, false, small, 10);
        assert_string_equal(small, "./inputs,");
        assert_int_equal(small[10], 'X');
        assert_int_equal(small[11], 'X');
        /* size 0: nothing written, not even the terminator */
        pol_roots_display(&roots, false, small, 0);
        assert_int_equal(small[0], '.');
}

/* ---- pol_audit_rule ---- */

/* Every event of policy/audit.c's table, copied, in the order bsearch needs. */
#define P_NONE POL_PASS_NONE
static const struct pol_audit_rule audit_expected[] = {
        { "_posixsubprocess.fork_exec", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "code.__new__", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, P_NONE, NULL, { -1, -1 } },
        { "compile", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, P_NONE, NULL, { -1, -1 } },
        { "ctypes.addressof", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "ctypes.call_function", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "ctypes.cdata", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "ctypes.cdata/buffer", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "ctypes.dlopen", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "ctypes.dlsym", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "ctypes.dlsym/handle", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "ctypes.string_at", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "ctypes.wstring_at", POL_AUDIT_DENY_TOOL, POL_WHY_NATIVE, POL_PASS_NATIVE, NULL, { -1, -1 } },
        { "exec", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, P_NONE, NULL, { -1, -1 } },
        { "gc.get_objects", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, P_NONE, NULL, { -1, -1 } },
        { "gc.get_referents", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, P_NONE, NULL, { -1, -1 } },
        { "gc.get_referrers", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, P_NONE, NULL, { -1, -1 } },
        { "import", POL_AUDIT_IMPORT, POL_WHY_NONE, POL_PASS_IMPORT, NULL, { -1, -1 } },
        { "marshal.load", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, P_NONE, NULL, { -1, -1 } },
        { "marshal.loads", POL_AUDIT_DENY_TOOL, POL_WHY_DYNAMIC, P_NONE, NULL, { -1, -1 } },
        { "mmap.__new__", POL_AUDIT_MMAP, POL_WHY_READ, POL_PASS_FILES, NULL, { -1, -1 } },
        { "object.__getattr__", POL_AUDIT_ATTR, POL_WHY_INTROSPECTION, P_NONE, NULL, { -1, -1 } },
        { "open", POL_AUDIT_OPEN, POL_WHY_NONE, POL_PASS_FILES, NULL, { -1, -1 } },
        { "os.chmod", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { 2, -1 } },
        { "os.chown", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { 3, -1 } },
        { "os.exec", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "os.fork", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "os.forkpty", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "os.kill", POL_AUDIT_DENY, POL_WHY_SIGNAL, P_NONE, NULL, { -1, -1 } },
        { "os.killpg", POL_AUDIT_DENY, POL_WHY_SIGNAL, P_NONE, NULL, { -1, -1 } },
        { "os.link", POL_AUDIT_LINK, POL_WHY_LINK, P_NONE, NULL, { 2, 3 } },
        { "os.listdir", POL_AUDIT_FS_READ, POL_WHY_READ, POL_PASS_FILES, NULL, { -1, -1 } },
        { "os.mkdir", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { 2, -1 } },
        { "os.posix_spawn", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "os.remove", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { 1, -1 } },
        { "os.removexattr", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { -1, -1 } },
        { "os.rename", POL_AUDIT_FS_WRITE2, POL_WHY_WRITE, P_NONE, NULL, { 2, 3 } },
        { "os.rmdir", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { 1, -1 } },
        { "os.scandir", POL_AUDIT_FS_READ, POL_WHY_READ, POL_PASS_FILES, NULL, { -1, -1 } },
        { "os.setxattr", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { -1, -1 } },
        { "os.spawn", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "os.symlink", POL_AUDIT_LINK, POL_WHY_LINK, P_NONE, NULL, { -1, 2 } },
        { "os.system", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "os.truncate", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { -1, -1 } },
        { "os.utime", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { 3, -1 } },
        { "pickle.find_class", POL_AUDIT_UNPICKLE, POL_WHY_UNPICKLE, P_NONE, NULL, { -1, -1 } },
        { "pty.spawn", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "shutil.rmtree", POL_AUDIT_FS_WRITE, POL_WHY_WRITE, P_NONE, NULL, { 1, -1 } },
        { "signal.pthread_kill", POL_AUDIT_DENY, POL_WHY_SIGNAL, P_NONE, NULL, { -1, -1 } },
        { "socket.__new__", POL_AUDIT_SOCKET, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "socket.bind", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "socket.connect", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "socket.getaddrinfo", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "socket.gethostbyaddr", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "socket.gethostbyname", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "socket.getnameinfo", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "socket.sendmsg", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "socket.sendto", POL_AUDIT_DENY, POL_WHY_NETWORK_CAP, P_NONE, NULL, { -1, -1 } },
        { "sqlite3.connect", POL_AUDIT_SQLITE, POL_WHY_WRITE, P_NONE, NULL, { -1, -1 } },
        { "sqlite3.enable_load_extension", POL_AUDIT_DENY, POL_WHY_NATIVE, P_NONE, NULL, { -1, -1 } },
        { "sqlite3.load_extension", POL_AUDIT_DENY, POL_WHY_NATIVE, P_NONE, NULL, { -1, -1 } },
        { "subprocess.Popen", POL_AUDIT_DENY, POL_WHY_PROCESS, P_NONE, NULL, { -1, -1 } },
        { "sys._current_frames", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_FRAME, NULL, { -1, -1 } },
        { "sys._getframe", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, POL_PASS_FRAME, NULL, { -1, -1 } },
        { "sys.setprofile", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, P_NONE, NULL, { -1, -1 } },
        { "sys.settrace", POL_AUDIT_DENY_TOOL, POL_WHY_INTROSPECTION, P_NONE, NULL, { -1, -1 } },
};

static void check_rule(const struct pol_audit_rule *got, const struct pol_audit_rule *want, const char *caps)
{
        if (!got)
                fail_msg("pol_audit_rule(\"%s\", %s): not found", want->event, caps);
        assert_string_equal(got->event, want->event);
        if (got->kind != want->kind || got->why != want->why || got->passthrough != want->passthrough ||
            got->dir_fd[0] != want->dir_fd[0] || got->dir_fd[1] != want->dir_fd[1] ||
            !((got->op == NULL && want->op == NULL) || (got->op && want->op && strcmp(got->op, want->op) == 0)))
                fail_msg("pol_audit_rule(\"%s\", %s): kind %d why %s pass %u, want kind %d why %s pass %u", want->event,
                         caps, (int)got->kind, pol_why_text(got->why), got->passthrough, (int)want->kind,
                         pol_why_text(want->why), want->passthrough);
}

static void test_audit_table(void **state)
{
        (void)state;
        static const struct pol_caps net = { { [POL_CAP_NETWORK] = true } };
        for (size_t i = 0; i < ELEMENTSOF(audit_expected); i++) {
                const struct pol_audit_rule *want = &audit_expected[i];
                /* The copy is sorted too: if it matches the table, bsearch finds every event. */
                if (i > 0 && strcmp(audit_expected[i - 1].event, want->event) >= 0)
                        fail_msg("audit events out of order: \"%s\" before \"%s\"", audit_expected[i - 1].event,
                                 want->event);
                check_rule(pol_audit_rule(want->event, NULL), want, "no caps");
                /* The network capability turns the network rules into the egress ones (the relay's
                 * address alone, runner/audit.c) and changes nothing else. */
                const struct pol_audit_rule *r = pol_audit_rule(want->event, &net);
                if (want->why == POL_WHY_NETWORK_CAP) {
                        if (!r || r->why != POL_WHY_NETWORK_EGRESS || strcmp(r->event, want->event) != 0)
                                fail_msg("pol_audit_rule(\"%s\", network granted): want its egress rule", want->event);
                        bool judged = strcmp(want->event, "socket.connect") == 0 ||
                                      strcmp(want->event, "socket.getaddrinfo") == 0;
                        enum pol_audit_kind k = judged                                       ? POL_AUDIT_EGRESS
                                                : strcmp(want->event, "socket.__new__") == 0 ? POL_AUDIT_SOCKET
                                                                                             : POL_AUDIT_DENY;
                        if (r->kind != k)
                                fail_msg("pol_audit_rule(\"%s\", network granted): kind %d, want %d", want->event,
                                         (int)r->kind, (int)k);
                } else
                        check_rule(r, want, "network granted");
        }
        static const struct pol_caps none = { { false } };
        assert_int_equal(pol_audit_rule("socket.connect", &net)->kind, POL_AUDIT_EGRESS);
        assert_non_null(pol_audit_rule("socket.connect", &none));
        assert_non_null(pol_audit_rule("socket.connect", NULL));
        assert_non_null(pol_audit_rule("os.fork", &net));
}

/* Not ruled on: allowed (DESIGN §5: deny the operation, not the module). */
static const char *const audit_unknown[] = {
        "os.listdirx",
        "os.chdir",
        "os.getxattr",
        "builtins.id",
        "builtins.input",
        "socket.__new__x",
        "socket.gethostname",
        "sys.addaudithook",
        "sys.excepthook",
        "sqlite3.enable_load_extensionx",
        "time.sleep",
        "object.__setattr__",
        "os.putenv",
        "glob.glob",
        "shutil.copyfile",
        "tempfile.mkstemp",
        "urllib.Request",
        /* near misses of the table's names, and either end of it */
        "",
        "a",
        "compil",
        "compilex",
        "zzz",
        "~",
        "sys._getframes",
        "sys._getfram",
        "os.forkx",
        "os.fork.",
        "open2",
        "opem",
        "socket.connectx",
        "socket.connect_ex",
        "subprocess.popen",
        "Import",
        "os.exec ",
        "ctypes.dlopen/x",
        "ctypes",
};

static void test_audit_unknown(void **state)
{
        (void)state;
        static const struct pol_caps net = { { [POL_CAP_NETWORK] = true } };
        for (size_t i = 0; i < ELEMENTSOF(audit_unknown); i++) {
                if (pol_audit_rule(audit_unknown[i], NULL))
                        fail_msg("pol_audit_rule(\"%s\"): want NULL (not ruled on)", audit_unknown[i]);
                assert_null(pol_audit_rule(audit_unknown[i], &net));
        }
}

/* ---- pol_passthrough_match ---- */

#define STDLIB "/usr/lib/python3.11"
static const struct {
        unsigned set;
        const char *file;
        const char *stdlib;
        bool match;
} passthrough_cases[] = {
        { POL_PASS_IMPORT, "<frozen importlib._bootstrap>", STDLIB, true },
        { POL_PASS_IMPORT, "<frozen importlib._bootstrap_external>", STDLIB, true },
        { POL_PASS_IMPORT, "<frozen importlib._bootstrap>", NULL, true },
        { POL_PASS_FRAME, "<frozen importlib._bootstrap>", STDLIB, false },
        { POL_PASS_NONE, "<frozen importlib._bootstrap>", STDLIB, false },
        { POL_PASS_IMPORT, STDLIB "/importlib/__init__.py", STDLIB, true },
        { POL_PASS_IMPORT, STDLIB "/importlib/util.py", STDLIB, true },
        { POL_PASS_IMPORT, STDLIB "/pkgutil.py", STDLIB, true },
        { POL_PASS_IMPORT, STDLIB "/runpy.py", STDLIB, true },
        { POL_PASS_IMPORT, STDLIB "/importlib/metadata/__init__.py", STDLIB, false },
        { POL_PASS_FRAME, STDLIB "/inspect.py", STDLIB, true },
        { POL_PASS_FRAME | POL_PASS_IMPORT, STDLIB "/inspect.py", STDLIB, true },
        { POL_PASS_IMPORT, STDLIB "/inspect.py", STDLIB, false },
        { POL_PASS_FRAME, STDLIB "/inspectx.py", STDLIB, false },
        { POL_PASS_FRAME, STDLIB "/xinspect.py", STDLIB, false },
        { POL_PASS_FRAME, STDLIB "/traceback.py", STDLIB, false },
        { POL_PASS_FRAME, "/work/inspect.py", STDLIB, false }, /* the tool's own inspect.py */
        { POL_PASS_FRAME, "inspect.py", STDLIB, false },
        { POL_PASS_FRAME, STDLIB "0/inspect.py", STDLIB, false },
        { POL_PASS_FRAME, STDLIB "-inspect.py", STDLIB, false }, /* the stdlib dir must end at a '/' */
        { POL_PASS_FRAME, STDLIB "/inspect.py", NULL, false },
        { POL_PASS_FRAME, "<tool>", STDLIB, false },
        { POL_PASS_NATIVE, STDLIB "/ctypes/__init__.py", STDLIB, true },
        { POL_PASS_NATIVE, STDLIB "/ctypes/util.py", STDLIB, true },
        { POL_PASS_NATIVE, STDLIB "/ctypes/_endian.py", STDLIB, true },
        { POL_PASS_NATIVE, "/usr/lib/python3/dist-packages/numpy/ctypeslib.py", STDLIB, false },
        { POL_PASS_FILES, STDLIB "/pathlib.py", STDLIB, true },
        { POL_PASS_FILES, STDLIB "/shutil.py", STDLIB, true },
        { POL_PASS_FILES, STDLIB "/codecs.py", STDLIB, true },
        { POL_PASS_FILES, "<frozen codecs>", STDLIB, true },
        { POL_PASS_FILES, STDLIB "/fileinput.py", STDLIB, true },
        { POL_PASS_FILES, "/usr/lib/python3/dist-packages/pathlib.py", STDLIB, false },
        { POL_PASS_FILES, STDLIB "/site-packages/pathlib.py", STDLIB, false },
        { POL_PASS_FILES, "/work/artifacts/shutil.py", STDLIB, false },
        { POL_PASS_FILES, "<frozen pathlib>", STDLIB, false },
        { POL_PASS_NATIVE, STDLIB "/pathlib.py", STDLIB, false },
        { POL_PASS_IMPORT | POL_PASS_FRAME | POL_PASS_NATIVE | POL_PASS_FILES, STDLIB "/shutil.py", STDLIB, true },
        { POL_PASS_IMPORT | POL_PASS_FRAME | POL_PASS_NATIVE | POL_PASS_FILES, "<tool>", STDLIB, false },
};

static void test_passthrough(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(passthrough_cases); i++)
                if (pol_passthrough_match(passthrough_cases[i].set, passthrough_cases[i].file,
                                          passthrough_cases[i].stdlib) != passthrough_cases[i].match)
                        fail_msg("pol_passthrough_match(%u, \"%s\", %s): want %s", passthrough_cases[i].set,
                                 passthrough_cases[i].file,
                                 passthrough_cases[i].stdlib ? passthrough_cases[i].stdlib : "NULL",
                                 passthrough_cases[i].match ? "true" : "false");
}

/* ---- pol_trampoline_match ---- */

static const struct {
        const char *file, *func, *stdlib;
        bool match;
} trampoline_cases[] = {
        { STDLIB "/threading.py", "run", STDLIB, true },
        { STDLIB "/threading.py", "_bootstrap_inner", STDLIB, true },
        { STDLIB "/threading.py", "_bootstrap", STDLIB, true },
        { STDLIB "/concurrent/futures/thread.py", "run", STDLIB, true },
        { STDLIB "/concurrent/futures/thread.py", "_worker", STDLIB, true },
        { STDLIB "/concurrent/futures/_base.py", "_invoke_callbacks", STDLIB, true },
        { STDLIB "/weakref.py", "__call__", STDLIB, true },
        { STDLIB "/contextlib.py", "_exit_wrapper", STDLIB, true },
        { STDLIB "/sched.py", "run", STDLIB, true },
        { STDLIB "/asyncio/events.py", "_run", STDLIB, true },
        /* a module's own work, not a trampoline: judged as the library's */
        { STDLIB "/threading.py", "start", STDLIB, false },
        { STDLIB "/threading.py", "invoke_excepthook", STDLIB, false },
        { STDLIB "/threading.py", "<module>", STDLIB, false },
        { STDLIB "/concurrent/futures/thread.py", "<module>", STDLIB, false },
        { STDLIB "/concurrent/futures/thread.py", "submit", STDLIB, false },
        { STDLIB "/weakref.py", "__init__", STDLIB, false },
        { STDLIB "/contextlib.py", "contextmanager", STDLIB, false },
        /* the same names elsewhere: the tool's own threading.py, a library's run */
        { "/work/threading.py", "run", STDLIB, false },
        { "/work/artifacts/concurrent/futures/thread.py", "run", STDLIB, false },
        { "/usr/lib/python3/dist-packages/pandas/core/apply.py", "run", STDLIB, false },
        { STDLIB "-threading.py", "run", STDLIB, false },
        { STDLIB "/threading.py", "run", NULL, false },
        { STDLIB "/threading.py", NULL, STDLIB, false },
        { "<tool>", "run", STDLIB, false },
};

static void test_trampoline(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(trampoline_cases); i++)
                if (pol_trampoline_match(trampoline_cases[i].file, trampoline_cases[i].func, trampoline_cases[i].stdlib) !=
                    trampoline_cases[i].match)
                        fail_msg("pol_trampoline_match(\"%s\", %s, %s): want %s", trampoline_cases[i].file,
                                 trampoline_cases[i].func ? trampoline_cases[i].func : "NULL",
                                 trampoline_cases[i].stdlib ? trampoline_cases[i].stdlib : "NULL",
                                 trampoline_cases[i].match ? "true" : "false");
}

/* ---- pol_unpickle_denied ---- */

static const struct {
        const char *module;
        const char *name;
        bool denied;
} unpickle_cases[] = {
        { "os", "system", true },
        { "posix", "system", true },
        { "nt", "system", true },
        { "os.path", "join", true }, /* below os */
        { "subprocess", "Popen", true },
        { "subprocess", "check_output", true },
        { "builtins", "eval", true },
        { "builtins", "exec", true },
        { "builtins", "compile", true },
        { "builtins", "__import__", true },
        { "builtins", "getattr", false }, /* every Enum member's pickle: getattr(Class, 'NAME') */
        { "builtins", "setattr", true },
        { "builtins", "open", true },
        { "builtins", "breakpoint", true },
        { "__builtin__", "eval", true },
        { "ctypes", "CDLL", true },
        { "ctypes.util", "find_library", true },
        { "_ctypes", "dlopen", true },
        { "socket", "socket", true },
        { "_socket", "socket", true },
        { "importlib", "import_module", true },
        { "importlib.util", "spec_from_file_location", true },
        { "sys", "modules", true },
        { "shutil", "rmtree", true },
        { "pty", "spawn", true },
        { "multiprocessing", "Process", true },
        { "marshal", "loads", true },
        { "pickle", "loads", true },
        { "_pickle", "loads", true },
        { "runpy", "run_path", true },
        { "code", "InteractiveInterpreter", true },
        { "operator", "attrgetter", true },
        { "functools", "partial", true },
        { "io", "open", true },
        { "signal", "pthread_kill", true },
        { "gc", "get_objects", true },
        { "tempfile", "mkdtemp", true },
        /* a tool's own data */
        { "collections", "OrderedDict", false },
        { "collections", "defaultdict", false },
        { "builtins", "set", false },
        { "builtins", "list", false },
        { "builtins", "dict", false },
        { "builtins", "frozenset", false },
        { "builtins", "complex", false },
        { "builtins", "bytearray", false },
        { "builtins", "slice", false },
        { "builtins", "range", false },
        { "builtins", "evaluate", false },
        { "datetime", "datetime", false },
        { "datetime", "timezone", false },
        { "decimal", "Decimal", false },
        { "fractions", "Fraction", false },
        { "uuid", "UUID", false },
        { "copyreg", "_reconstructor", false },
        { "numpy", "dtype", false },
        { "numpy.core.multiarray", "_reconstruct", false },
        { "numpy.core.multiarray", "scalar", false },
        { "pandas.core.frame", "DataFrame", false },
        { "pandas.core.internals.managers", "BlockManager", false },
        { "pandas._libs.tslibs.timestamps", "_unpickle_timestamp", false },
        /* a denied name as a prefix, not at a dot boundary */
        { "osx", "y", false },
        { "os_utils", "system", false },
        { "posixpath", "join", false },
        { "sysconfig", "get_paths", false },
        { "iox", "StringIO", false },
        { "gzip", "open", true }, /* a name that is a denied builtin, in any module */
        { "codecs", "encode", false },
        { "mymodule.os", "system", false },
        { "builtinsx", "evaluate", false },
        /* protocol 4 dotted names, followed with getattr by the unpickler */
        { "pandas.io.common", "os.system", true },
        { "pandas.io.common", "os", true }, /* the os module, and getattr is allowed */
        { "somelib", "subprocess", true },
        { "numpy", "ctypeslib.ctypes.CDLL", true },
        { "somelib", "helper.__globals__", true },
        { "builtins", "object.__subclasses__", true },
        { "builtins", "__builtins__", true },
        { "builtins", "delattr", true },
        { "builtins", "vars", true },
        { "mylib", "sub.eval", true },
        { "mymodule", "Outer.Inner", false }, /* a nested class */
        { "pandas.core.arrays.categorical", "Categorical", false },
        { "enum", "Enum", false },
        { "pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked", false }, /* Cython's, no dunder */
        { "somelib", "__dict__", true },
};

static void test_unpickle(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(unpickle_cases); i++)
                if (pol_unpickle_denied(unpickle_cases[i].module, unpickle_cases[i].name) != unpickle_cases[i].denied)
                        fail_msg("pol_unpickle_denied(\"%s\", \"%s\"): want %s", unpickle_cases[i].module,
                                 unpickle_cases[i].name, unpickle_cases[i].denied ? "true" : "false");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fake_realpath),
                cmocka_unit_test(test_path_resolve),
                cmocka_unit_test(test_path_resolve_lengths),
                cmocka_unit_test(test_path_under),
                cmocka_unit_test(test_path_verdict),
                cmocka_unit_test(test_path_escapes),
                cmocka_unit_test(test_roots_display),
                cmocka_unit_test(test_audit_table),
                cmocka_unit_test(test_audit_unknown),
                cmocka_unit_test(test_passthrough),
                cmocka_unit_test(test_trampoline),
                cmocka_unit_test(test_unpickle),
        };
        return cmocka_run_group_tests_name("rules_paths", tests, NULL, NULL);
}
