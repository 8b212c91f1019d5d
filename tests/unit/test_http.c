/* broker/http_route.c: the web UI's routes, the paths of its static files, the types its
 * artifacts are served with and its address, each table-driven and both ways (what is
 * served, and what is refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "broker/http_int.h"

static void test_routes(void **state)
{
        (void)state;
        static const struct {
                const char *method, *url;
                int rc;
                enum http_route_kind kind;
                const char *id, *name;
        } cases[] = {
                { "GET", "/", 0, HR_STATIC, "", "index.html" },
                { "GET", "/app.js", 0, HR_STATIC, "", "app.js" },
                { "HEAD", "/style.css", 0, HR_STATIC, "", "style.css" },
                { "GET", "/vendor/hl/hl.min.js", 0, HR_STATIC, "", "vendor/hl/hl.min.js" },
                { "POST", "/", -EPERM, HR_STATIC, "", NULL },
                { "GET", "/x.py", -ENOENT, HR_STATIC, "", NULL },
                { "GET", "/../etc/passwd", -EINVAL, HR_STATIC, "", NULL },
                { "GET", "/vendor/../index.html", -EINVAL, HR_STATIC, "", NULL },
                { "GET", "/.git/config", -EINVAL, HR_STATIC, "", NULL },
                { "GET", "//etc/passwd", -EINVAL, HR_STATIC, "", NULL },
                { "GET", "/vendor/", -EINVAL, HR_STATIC, "", NULL },
                { "GET", "/a b.js", -EINVAL, HR_STATIC, "", NULL },
                { "GET", "/\x01", -EINVAL, HR_STATIC, "", NULL },
                { "GET", "/login", 0, HR_LOGIN, "", NULL },
                { "POST", "/login", -EPERM, HR_LOGIN, "", NULL },
                { "GET", "/api/me", 0, HR_ME, "", NULL },
                { "GET", "/api/probe", 0, HR_PROBE, "", NULL },
                { "GET", "/api/folder", 0, HR_FOLDER, "", NULL },
                { "GET", "/api/runs", 0, HR_RUNS, "", NULL },
                { "POST", "/api/runs", 0, HR_RUNS, "", NULL },
                { "GET", "/api/tasks", 0, HR_TASKS, "", NULL },
                { "POST", "/api/tasks", 0, HR_TASKS, "", NULL },
                { "DELETE", "/api/tasks", -EPERM, HR_TASKS, "", NULL },
                { "GET", "/api/runs/20261202T074000123456-ab", 0, HR_RUN, "20261202T074000123456-ab", NULL },
                { "GET", "/api/tasks/task-1", 0, HR_TASK, "task-1", NULL },
                { "POST", "/api/runs/r1/cancel", 0, HR_RUN_CANCEL, "r1", NULL },
                { "GET", "/api/runs/r1/cancel", -EPERM, HR_RUN_CANCEL, "r1", NULL },
                { "POST", "/api/tasks/task-1/cancel", 0, HR_TASK_CANCEL, "task-1", NULL },
                { "GET", "/api/runs/r1/events", 0, HR_RUN_EVENTS, "r1", NULL },
                { "GET", "/api/tasks/task-1/events", 0, HR_TASK_EVENTS, "task-1", NULL },
                { "GET", "/api/runs/r1/artifacts/out/a.csv", 0, HR_RUN_ARTIFACT, "r1", "out/a.csv" },
                { "GET", "/api/tasks/task-1/artifacts/x.svg", 0, HR_TASK_ARTIFACT, "task-1", "x.svg" },
                { "GET", "/api/runs/r1/artifacts/", -ENOENT, HR_NONE, "", NULL },
                { "GET", "/api/runs/r1/other", -ENOENT, HR_NONE, "", NULL },
                { "GET", "/api/runs/../x", -ENOENT, HR_NONE, "", NULL },
                { "GET", "/api/runs/", -ENOENT, HR_NONE, "", NULL },
                { "GET", "/api/breakit", 0, HR_BREAKIT, "", NULL },
                { "GET", "/api/breakit/network.py", 0, HR_BREAKIT_FILE, "", "network.py" },
                { "GET", "/api/breakit/../attempts.json", -EINVAL, HR_BREAKIT_FILE, "", NULL },
                { "GET", "/api/breakit/a/b.py", -EINVAL, HR_BREAKIT_FILE, "", NULL },
                { "GET", "/api/nothing", -ENOENT, HR_NONE, "", NULL },
                { "GET", "/apifoo", -ENOENT, HR_STATIC, "", NULL },
                { "GET", "relative", -EINVAL, HR_NONE, "", NULL },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct http_route rt;
                int rc = bro_http_route(cases[i].method, cases[i].url, &rt);
                if (rc != cases[i].rc)
                        fail_msg("%s %s: %d, expected %d", cases[i].method, cases[i].url, rc, cases[i].rc);
                if (rc == 0 || rc == -EPERM) {
                        assert_int_equal(rt.kind, cases[i].kind);
                        assert_string_equal(rt.id, cases[i].id);
                }
                if (rc == 0 && cases[i].name)
                        assert_string_equal(rt.name, cases[i].name);
                if (rc == 0)
                        assert_int_equal(rt.api, strncmp(cases[i].url, "/api/", 5) == 0);
        }
}

static void test_artifact_types(void **state)
{
        (void)state;
        static const struct {
                const char *path, *type;
                bool attachment, sandbox;
        } cases[] = {
                { "a.csv", "text/plain; charset=utf-8", false, false },
                { "dir/A.CSV", "text/plain; charset=utf-8", false, false },
                { "n.txt", "text/plain; charset=utf-8", false, false },
                { "r.json", "text/plain; charset=utf-8", false, false },
                { "r.md", "text/plain; charset=utf-8", false, false },
                { "run.log", "text/plain; charset=utf-8", false, false },
                { "p.png", "image/png", false, false },
                { "p.jpg", "image/jpeg", false, false },
                { "p.jpeg", "image/jpeg", false, false },
                { "x.svg", "image/svg+xml", true, true },
                { "x.html", "application/octet-stream", true, false },
                { "x.htm", "application/octet-stream", true, false },
                { "x.js", "application/octet-stream", true, false },
                { "x.csv.html", "application/octet-stream", true, false },
                { "csv", "application/octet-stream", true, false },
                { "d.csv/x", "application/octet-stream", true, false },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                bool att = !cases[i].attachment, sb = !cases[i].sandbox;
                const char *t = bro_http_artifact_type(cases[i].path, &att, &sb);
                if (strcmp(t, cases[i].type) != 0 || att != cases[i].attachment || sb != cases[i].sandbox)
                        fail_msg("%s: %s attachment %d sandbox %d", cases[i].path, t, att, sb);
        }
}

static void test_addr(void **state)
{
        (void)state;
        static const struct {
                const char *s;
                int rc;
                bool loopback;
        } cases[] = {
                { "127.0.0.1:8700", 0, true },     { "127.1.2.3:1", 0, true },        { "127.0.0.1:0", 0, true },
                { "[::1]:8700", 0, true },         { "0.0.0.0:8700", 0, false },      { "192.168.1.2:80", 0, false },
                { "[::]:8700", 0, false },         { "localhost:8700", -EINVAL, 0 },  { "127.0.0.1", -EINVAL, 0 },
                { "127.0.0.1:", -EINVAL, 0 },      { "127.0.0.1:65536", -EINVAL, 0 }, { "127.0.0.1:-1", -EINVAL, 0 },
                { ":8700", -EINVAL, 0 },           { "::1:8700", -EINVAL, 0 },        { "[::1]8700", -EINVAL, 0 },
                { "127.0.0.1:8700x", -EINVAL, 0 },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct sockaddr_storage ss;
                socklen_t len;
                bool lo = !cases[i].loopback;
                int rc = bro_http_parse_addr(cases[i].s, &ss, &len, &lo);
                if (rc != cases[i].rc || (rc == 0 && lo != cases[i].loopback))
                        fail_msg("%s: %d loopback %d", cases[i].s, rc, lo);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_routes),
                cmocka_unit_test(test_artifact_types),
                cmocka_unit_test(test_addr),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
