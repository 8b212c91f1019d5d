/* Unit tests for lib/lines.h, the bounded line walk, and lib/proc.c, its first user: the
 * edges (no text, no trailing newline, empty lines, CRLF, a length shorter than the text, a
 * NUL inside), and /proc status lookups that must not match a longer key or run past a line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/lines.h"
#include "lib/proc.h"

/* The lines of buf[0..len) joined with '|', each in brackets: "[a]|[]|[b]". */
static const char *walk(const char *buf, size_t len)
{
        static char out[256];
        out[0] = 0;
        struct lines it = lines_of(buf, len);
        const char *l;
        size_t n;
        while (lines_next(&it, &l, &n))
                snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s[%.*s]", out[0] ? "|" : "", (int)n, l);
        return out;
}

#define WALK(s) walk(s, sizeof(s) - 1)

static void test_lines_edges(void **state)
{
        (void)state;
        assert_string_equal(WALK(""), "");
        assert_string_equal(walk(NULL, 0), "");
        assert_string_equal(WALK("a"), "[a]");
        assert_string_equal(WALK("a\n"), "[a]");
        assert_string_equal(WALK("\n"), "[]");
        assert_string_equal(WALK("a\n\nb"), "[a]|[]|[b]");
        assert_string_equal(WALK("a\nb\n\n"), "[a]|[b]|[]");
        /* CRLF: the '\r' is the caller's, and line_trim_cr takes it off. */
        assert_string_equal(WALK("a\r\nb\r\n"), "[a\r]|[b\r]");
        struct lines it = lines_of_str("key\r\n");
        const char *l;
        size_t n;
        assert_true(lines_next(&it, &l, &n));
        assert_int_equal(line_trim_cr(l, n), 3);
        assert_int_equal(line_trim_cr("", 0), 0);
        assert_false(lines_next(&it, &l, &n));
        assert_false(lines_next(&it, &l, &n)); /* and stays at the end */
}

static void test_lines_bounded(void **state)
{
        (void)state;
        /* Nothing past len: the walk stops inside the text, and needs no NUL. */
        const char text[] = { 'a', 'b', '\n', 'c', 'd', 'X', 'X' };
        assert_string_equal(walk(text, 5), "[ab]|[cd]");
        assert_string_equal(walk(text, 2), "[ab]");
        assert_string_equal(walk(text, 3), "[ab]");
        /* A NUL inside is a byte like any other. */
        struct lines it = lines_of("a\0b\nc", 5);
        const char *l;
        size_t n;
        assert_true(lines_next(&it, &l, &n));
        assert_int_equal(n, 3);
        assert_true(lines_next(&it, &l, &n));
        assert_int_equal(n, 1);
        assert_false(lines_next(&it, &l, &n));
}

static void test_line_starts(void **state)
{
        (void)state;
        assert_true(line_starts("Seccomp:\t2", 10, "Seccomp:"));
        assert_true(line_starts("Seccomp:", 8, "Seccomp:"));
        assert_false(line_starts("Seccomp:", 7, "Seccomp:")); /* the line is shorter than it */
        assert_false(line_starts("Secco", 5, "Seccomp"));
        assert_true(line_starts("x", 1, ""));
}

static void test_proc_status(void **state)
{
        (void)state;
        static const char status[] = "Name:\tpython3\nSeccomp_filters:\t3\nSeccomp:\t2\nUid:\t1 2 3 4\nNoNewPrivs:\t1";
        char v[32];
        assert_true(proc_status_get(status, "Name", v, sizeof(v)));
        assert_string_equal(v, "python3");
        /* Not the longer key that starts the same. */
        assert_int_equal(proc_status_long(status, "Seccomp"), 2);
        assert_int_equal(proc_status_long(status, "Seccomp_filters"), 3);
        /* The last line, with no newline after it. */
        assert_int_equal(proc_status_long(status, "NoNewPrivs"), 1);
        assert_true(proc_status_get(status, "Uid", v, sizeof(v)));
        assert_string_equal(v, "1 2 3 4");
        /* Cut to the caller's size. */
        char small[4];
        assert_true(proc_status_get(status, "Name", small, sizeof(small)));
        assert_string_equal(small, "pyt");
        assert_int_equal(proc_status_long(status, "CapEff"), -1);
        assert_int_equal(proc_status_long("", "Seccomp"), -1);
        /* A key at the very end, with nothing after its colon. */
        assert_true(proc_status_get("A:\t1\nB:", "B", v, sizeof(v)));
        assert_string_equal(v, "");
        /* A key's name inside another line's value is not the key. */
        assert_int_equal(proc_status_long("Name:\tSeccomp: 9\n", "Seccomp"), -1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lines_edges),
                cmocka_unit_test(test_lines_bounded),
                cmocka_unit_test(test_line_starts),
                cmocka_unit_test(test_proc_status),
        };
        return cmocka_run_group_tests_name("lines", tests, NULL, NULL);
}
