/* Unit tests for the runner's pre-check (runner/precheck.c), outside the jail: its AST walk is
 * C over an untrusted tool's source, and this is where it runs under ASan and LeakSanitizer
 * (make check SANITIZE=1; anvil-py itself, in the jail, gets UBSan alone: docs/testing.md).
 * Each case is a source and the number of findings the pre-check reports for it; the events
 * it writes on JAIL_FD_EVENTS go to /dev/null here. The sources reach the walk's edges: names
 * and strings longer than its buffers, more findings than it reports, deep nesting, aliases
 * of aliases, a source that does not parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jail/jail.h"
#include "policy/jail_paths.h"
#include "runner/runner.h"

/* LeakSanitizer's stacks through libpython (built without frame pointers) need the slow
 * unwinder, or tests/lsan.supp's PyType_Ready entry could not match; ASAN_OPTIONS from the
 * environment still adds to this. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
        return "fast_unwind_on_malloc=0";
}

static struct runner R;

static int setup(void **state)
{
        (void)state;
        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || dup2(fd, JAIL_FD_EVENTS) < 0)
                return -1;
        if (fd != JAIL_FD_EVENTS)
                (void)close(fd);
        Py_InitializeEx(0);
        snprintf(R.workdir, sizeof(R.workdir), "/tmp");
        R.roots.workdir = R.workdir;
        R.roots.system = pol_jail_system_root();
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        return Py_FinalizeEx() < 0 ? -1 : 0;
}

struct pc_case {
        const char *what;
        const char *source; /* NULL: built by the case's maker */
        int findings;       /* -2: at least one */
};

static char *repeat(const char *head, const char *unit, unsigned n, const char *tail)
{
        size_t len = strlen(head) + strlen(unit) * n + strlen(tail) + 1;
        char *s = malloc(len);
        assert_non_null(s);
        strcpy(s, head);
        for (unsigned i = 0; i < n; i++)
                strcat(s, unit);
        strcat(s, tail);
        return s;
}

static void check(const char *what, const char *source, int want)
{
        int got = precheck_run(&R, source);
        if (want == -2 ? got < 1 : got != want)
                fail_msg("%s: %d findings, wanted %s%d", what, got, want == -2 ? "at least " : "", want == -2 ? 1 : want);
}

static void test_sources(void **state)
{
        (void)state;
        static const struct pc_case cases[] = {
                { "a legitimate tool", "import json\nprint(json.dumps({'a': 1}))\n", 0 },
                { "a network import", "import socket\n", 1 },
                { "an alias of a refused call", "import os\nf = os.system\nf('id')\n", -2 },
                { "an alias of an alias", "import os as o\ng = o\ng.fork()\n", -2 },
                { "a path outside the roots", "open('/etc/shadow')\n", 1 },
                { "a name bound to that path", "p = '/etc/shadow'\nopen(p)\n", 1 },
                { "a string that is not a path", "raise ValueError('a/b')\n", 0 },
                { "a source that does not parse", "x = (\n", 0 },
                { "an empty source", "", 0 },
                { "non-ASCII names", "d\u00e9j\u00e0 = 1\nprint(d\u00e9j\u00e0)\n", 0 },
                { "a URL read: a network attempt", "import pandas as pd\npd.read_csv('http://127.0.0.1/x.csv')\n", 1 },
                { "a URL written", "import pandas as pd\npd.DataFrame().to_csv('s3://bucket/x.csv')\n", 1 },
                { "a file URL inside the roots", "import pandas as pd\npd.read_csv('file:///usr/share/x.csv')\n", 0 },
                { "a file URL outside them", "import pandas as pd\npd.read_csv('file:///etc/shadow')\n", 1 },
                { "a path with :// in it, no URL", "open('/usr/share/a://b')\n", 0 },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                check(cases[i].what, cases[i].source, cases[i].findings);
        /* With the network granted, a URL is no finding: the audit hook judges the fetch. */
        R.caps.granted[POL_CAP_NETWORK] = true;
        check("a URL read, network granted", "import pandas as pd\npd.read_csv('http://127.0.0.1/x.csv')\n", 0);
        check("a file URL outside the roots, network granted", "import pandas as pd\npd.read_csv('file:///etc/shadow')\n", 1);
        R.caps.granted[POL_CAP_NETWORK] = false;
}

static void test_edges(void **state)
{
        (void)state;
        char *s, *t;
        /* a module name far past the walk's 256-byte names */
        s = repeat("import socket", ".x", 400, "\n");
        check("a dotted name of 813 bytes", s, -2);
        free(s);
        /* a path string past PATH_MAX: not judged (the kernel refuses it, ENAMETOOLONG);
         * what is checked here is that the walk neither overruns nor stops */
        s = repeat("open('/etc/", "a", 5000, "')\nimport socket\n");
        check("a path of 5000 bytes, then an import", s, 1);
        free(s);
        /* a name the walk cannot hold: refused (an alias of os.system would pass unjudged);
         * one byte shorter, held and judged: a legitimate tool passes, os.system does not */
        s = repeat("from os import system as ", "r", 300, "\n");
        t = repeat(s, "r", 300, "('id')\n");
        check("os.system under an alias of 300 bytes", t, -2);
        free(s);
        free(t);
        s = repeat("", "v", 255, " = 1\n");
        check("a variable's name of 255 bytes", s, 0);
        free(s);
        s = repeat("", "v", 256, " = 1\n");
        check("a variable's name of 256 bytes", s, 1);
        free(s);
        s = repeat("from os import system as ", "r", 255, "\n");
        t = repeat(s, "r", 255, "('id')\n");
        check("os.system under an alias of 255 bytes", t, -2);
        free(s);
        free(t);
        /* more findings than are reported (100) */
        s = repeat("", "import socket\n", 150, "");
        check("150 refused imports", s, -2);
        free(s);
        /* deep nesting */
        s = repeat("x = ", "[", 80, "");
        t = repeat(s, "]", 80, "\n");
        check("80 nested lists", t, 0);
        free(s);
        free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sources),
                cmocka_unit_test(test_edges),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
