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
#include "policy/http_texts.h"

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

/* Every text of the web UI's catalog (policy/http_texts.h), formatted, verbatim: a text
 * changed is a test changed, and a text added without its line here fails the count. */
static void test_catalog(void **state)
{
        (void)state;
        char b[600];
        unsigned n = 0;
#define T(ID, want, ...)                                                                  \
        do {                                                                              \
                assert_string_equal(POL_HTTP_MSG(b, sizeof(b), ID, ##__VA_ARGS__), want); \
                n++;                                                                      \
        } while (0)
        T(NO_SESSION, "no session: open the link that `anvilctl ui` prints");
        T(BAD_ORIGIN, "a POST must come from the page itself (Origin http://127.0.0.1:8700)", "http://127.0.0.1:8700");
        T(BODY_TOO_LARGE, "the request's body is over the limit of 16777216 bytes", 16777216ull);
        T(NOT_FOUND, "no such page");
        T(BAD_PATH, "the path is not one the server serves (no '..', NUL or hidden name)");
        T(METHOD, "this method is not allowed here");
        T(LOGIN_BAD, "this login link is unknown, used, or expired: run `anvilctl ui` again");
        T(BAD_JSON, "the request's body: empty", "empty");
        T(SESSIONS_FULL, "the broker holds 256 sessions already: try again later", 256u);
        T(LINKS_FULL, "the broker holds 64 unused login links already: try again in a minute", 64u);
        T(NO_JOB, "no run started from the web UI by this user, and still known here, has the id r1", "run", "r1");
        T(JOB_ENDED, "the task task-1 has ended already", "task", "task-1");
        T(GONE, "the broker ended the request before it was answered");
        T(GONE_RESULT, "the broker ended the request before its result");
        T(LINK_REFUSED, "the broker takes no more requests of uid 1000 now (it is stopping)", 1000u, "it is stopping");
        T(LINK_WHY_CAP, "its connections are at their cap (--max-conns-per-uid, --max-conns)");
        T(LINK_WHY_STOPPING, "it is stopping");
        T(FIELD_UNKNOWN, "'x' is not a field of this request", "x");
        T(RUN_FIELDS, "source (a string), caps, args (lists of strings) or limits (an object of whole numbers) missing "
                      "or of the wrong type");
        T(TASK_FIELDS, "task (a string), capabilities_approved (a list of strings), max_steps or time_budget_s (whole "
                       "numbers) missing or of the wrong type");
        T(INPUTS_LIST, "inputs: expected a list of at most 32 inputs", 32u);
        T(INPUT_SHAPE, "inputs[1]: expected {\"name\", \"data_b64\"} or {\"name\", \"from_folder\"}", 1ull);
        T(INPUT_B64, "inputs[0].data_b64: not base64", 0ull);
        T(INPUT_TOO_BIG, "inputs[2]: 'a.csv' is over 16 MiB, more than a task's inputs take: run a tool on it instead",
          2ull, "a.csv", 16u);
        T(INPUT_UNREADABLE, "inputs[2]: 'a.csv' cannot be read", 2ull, "a.csv");
        T(LOGIN_FD_COUNT, "ui_login.inputs: 2 names for 1 file descriptors", 2ull, 1ull);
        T(LOGIN_FD_BAD, "ui_login.inputs[0]: not a regular file with a plain name", 0ull);
        T(NO_HTTP, "this broker serves no web UI: set http = 127.0.0.1:8700 in its configuration (or --http)");
        T(NO_FOLDER_FILE, "inputs: 'a.csv' is not a file of the folder given to `anvilctl ui --inputs`", "a.csv");
        T(ADDR_BAD, "--http x: expected ADDRESS:PORT, e.g. 127.0.0.1:8700 (IPv4, or [IPv6]:PORT)", "x");
        T(ADDR_REMOTE,
          "--http 0.0.0.0:1: not a loopback address; every machine that reaches it could try the UI's "
          "login: set http_allow_remote = yes (--http-allow-remote) to serve it anyway",
          "0.0.0.0:1");
        T(ADDR_REMOTE_WARN,
          "--http 0.0.0.0:1: serving the web UI beyond this machine (http_allow_remote); there is "
          "no TLS: put it behind a proxy that has it",
          "0.0.0.0:1");
        T(WEB_DIR,
          "--web-dir /w: No such file or directory: give the directory of the UI's files (make install puts "
          "them in PREFIX/share/anvil/web)",
          "/w", "No such file or directory");
        T(LISTEN, "--http 127.0.0.1:1: cannot listen there (Address already in use)", "127.0.0.1:1",
          "Address already in use");
#undef T
        assert_int_equal(n, _POL_HTTP_TEXT_MAX);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_routes),
                cmocka_unit_test(test_artifact_types),
                cmocka_unit_test(test_addr),
                cmocka_unit_test(test_catalog),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
