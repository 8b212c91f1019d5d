/* Unit tests for lib/fd.c's fd-relative removal (fd_rm_tree_at), on real directories below a
 * fresh mkdtemp: a tree holding symlinks to a directory and a file outside it (the link is
 * removed, the target survives: what a tool's uid could plant in a direct run's tmp/), a
 * symlink given as the top, a name with a '/' (refused: an earlier component would be
 * followed), deep nesting removed whole, and nesting far past the bound on open fds (moved
 * up and removed, nothing outside touched). Each "survives" check has its control: before the removal the outside
 * target is reachable through the link, so a removal that followed it would have found it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"

struct fx {
        char base[64];
        int fd; /* base */
};

static void put(int dfd, const char *name, const char *text)
{
        _cleanup_close_ int f = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(f >= 0);
        assert_int_equal(write(f, text, strlen(text)), (ssize_t)strlen(text));
}

static bool exists(int dfd, const char *path)
{
        struct stat st;
        return fstatat(dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int setup(void **state)
{
        struct fx *f = calloc(1, sizeof(*f));
        snprintf(f->base, sizeof(f->base), "/tmp/anvil-test-fd-XXXXXX");
        assert_non_null(mkdtemp(f->base));
        f->fd = open(f->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->fd >= 0);
        /* outside/: what must survive. */
        assert_int_equal(mkdirat(f->fd, "outside", 0755), 0);
        assert_int_equal(mkdirat(f->fd, "outside/keep", 0755), 0);
        put(f->fd, "outside/precious", "keep me\n");
        put(f->fd, "outside/keep/deep", "keep me too\n");
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fx *f = *state;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf --one-file-system '%s'", f->base);
        assert_int_equal(system(cmd), 0);
        (void)close(f->fd);
        free(f);
        return 0;
}

static void outside_intact(const struct fx *f)
{
        assert_true(exists(f->fd, "outside/precious"));
        assert_true(exists(f->fd, "outside/keep/deep"));
}

static void test_links_to_outside(void **state)
{
        struct fx *f = *state;
        char target[128];
        assert_int_equal(mkdirat(f->fd, "tree", 0755), 0);
        assert_int_equal(mkdirat(f->fd, "tree/sub", 0755), 0);
        assert_int_equal(mkdirat(f->fd, "tree/sub/empty", 0700), 0);
        put(f->fd, "tree/file", "x");
        put(f->fd, "tree/sub/file", "y");
        snprintf(target, sizeof(target), "%s/outside", f->base);
        /* A symlink where a directory would be (absolute and relative), and to a file. */
        assert_int_equal(symlinkat(target, f->fd, "tree/sub/dirlink"), 0);
        assert_int_equal(symlinkat("../../outside/keep", f->fd, "tree/sub/rellink"), 0);
        snprintf(target, sizeof(target), "%s/outside/precious", f->base);
        assert_int_equal(symlinkat(target, f->fd, "tree/filelink"), 0);
        /* Control: through the links, the targets are there to be removed. */
        assert_true(exists(f->fd, "tree/sub/dirlink/precious"));
        assert_true(exists(f->fd, "tree/sub/rellink/deep"));
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(fd_rm_tree_at(f->fd, "tree", 16, &err), 0);
        assert_false(exists(f->fd, "tree"));
        outside_intact(f);
        /* Gone already: still 0. */
        assert_int_equal(fd_rm_tree_at(f->fd, "tree", 16, &err), 0);
}

static void test_top_is_a_link(void **state)
{
        struct fx *f = *state;
        assert_int_equal(symlinkat("outside", f->fd, "toplink"), 0);
        assert_true(exists(f->fd, "toplink/precious")); /* control */
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(fd_rm_tree_at(f->fd, "toplink", 16, &err), 0);
        assert_false(exists(f->fd, "toplink"));
        outside_intact(f);
}

static void test_name_with_a_slash(void **state)
{
        struct fx *f = *state;
        assert_int_equal(symlinkat("outside", f->fd, "via"), 0);
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(fd_rm_tree_at(f->fd, "via/keep", 16, &err), -EINVAL);
        assert_string_equal(err.msg, "Refusing to remove \"via/keep\": not one entry's name");
        assert_int_equal(fd_rm_tree_at(f->fd, "..", 16, &err), -EINVAL);
        outside_intact(f);
}

static void nest(int dfd, const char *top, unsigned levels)
{
        assert_int_equal(mkdirat(dfd, top, 0755), 0);
        int fd = openat(dfd, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        for (unsigned i = 0; i < levels; i++) {
                put(fd, "f", "z");
                assert_int_equal(symlinkat("/", fd, "root"), 0);
                assert_int_equal(mkdirat(fd, "d", 0700), 0);
                int n = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                assert_true(n >= 0);
                (void)close(fd);
                fd = n;
        }
        (void)close(fd);
}

static void test_deep(void **state)
{
        struct fx *f = *state;
        nest(f->fd, "deep", 200);
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(fd_rm_tree_at(f->fd, "deep", 256, &err), 0);
        assert_false(exists(f->fd, "deep"));
        outside_intact(f);
}

/* Deeper than the bound on open fds: the deep part is moved up to the top (.anvil-rm-N) and
 * removed from there, so a tool's tree of any depth goes (a bound that refused it would
 * leave the run's directory behind for ever: the next sweep would fail on it too). */
static void test_too_deep(void **state)
{
        struct fx *f = *state;
        nest(f->fd, "deeper", 2000);
        struct anvil_err err = ANVIL_ERR_INIT;
        assert_int_equal(fd_rm_tree_at(f->fd, "deeper", 8, &err), 0);
        assert_false(exists(f->fd, "deeper"));
        outside_intact(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_links_to_outside, setup, teardown),
                cmocka_unit_test_setup_teardown(test_top_is_a_link, setup, teardown),
                cmocka_unit_test_setup_teardown(test_name_with_a_slash, setup, teardown),
                cmocka_unit_test_setup_teardown(test_deep, setup, teardown),
                cmocka_unit_test_setup_teardown(test_too_deep, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
