/* The web UI's routes, the types of what it serves and its address (docs/web-api.md): pure functions of
 * the request's method and path, unit-tested (tests/unit/test_http.c). Runs in anvil-broker
 * (unprivileged). The path is libmicrohttpd's, %-decoded; a %00 in the raw path never
 * reaches here as a shorter path (http.c's unescaper refuses it). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/http_int.h"

static bool seg_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == '-';
}

bool bro_http_static_path_ok(const char *path)
{
        if (!*path || strlen(path) > 255)
                return false;
        bool seg_start = true;
        for (const char *p = path; *p; p++) {
                if (*p == '/') {
                        if (seg_start)
                                return false; /* "//", or a leading '/' */
                        seg_start = true;
                        continue;
                }
                if (!seg_char(*p) || (seg_start && *p == '.'))
                        return false; /* "..", ".hidden", anything but the plain characters */
                seg_start = false;
        }
        return !seg_start; /* no trailing '/': no directory is listed */
}

static const char *ext_of(const char *path)
{
        const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
        return dot && (!slash || dot > slash) ? dot : "";
}

const char *bro_http_static_type(const char *path)
{
        static const struct {
                const char *ext, *type;
        } types[] = {
                { ".html", "text/html; charset=utf-8" },
                { ".js", "text/javascript; charset=utf-8" },
                { ".mjs", "text/javascript; charset=utf-8" },
                { ".css", "text/css; charset=utf-8" },
                { ".svg", "image/svg+xml" },
                { ".png", "image/png" },
                { ".ico", "image/x-icon" },
                { ".woff2", "font/woff2" },
                { ".json", "application/json" },
                { ".txt", "text/plain; charset=utf-8" },
        };
        const char *e = ext_of(path);
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
                if (strcasecmp(e, types[i].ext) == 0)
                        return types[i].type;
        return NULL;
}

const char *bro_http_artifact_type(const char *path, bool *attachment, bool *sandbox)
{
        static const struct {
                const char *ext, *type;
        } types[] = {
                { ".csv", "text/plain; charset=utf-8" },
                { ".txt", "text/plain; charset=utf-8" },
                { ".json", "text/plain; charset=utf-8" },
                { ".md", "text/plain; charset=utf-8" },
                { ".log", "text/plain; charset=utf-8" },
                { ".png", "image/png" },
                { ".jpg", "image/jpeg" },
                { ".jpeg", "image/jpeg" },
        };
        const char *e = ext_of(path);
        *attachment = *sandbox = false;
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
                if (strcasecmp(e, types[i].ext) == 0)
                        return types[i].type;
        *attachment = true;
        if (strcasecmp(e, ".svg") == 0) {
                /* An image for <img>, never a document: a download if opened, and sandboxed
                 * (no script, no origin) if a browser renders it all the same. */
                *sandbox = true;
                return "image/svg+xml";
        }
        return "application/octet-stream";
}

/* "ID" then the rest after it ("", "/cancel", "/events", "/artifacts/NAME"). */
static int take_id(const char *p, struct http_route *out, const char **rest)
{
        size_t n = strcspn(p, "/");
        if (n == 0 || n > PROTO_ID_MAX)
                return -ENOENT;
        for (size_t i = 0; i < n; i++)
                if (!seg_char(p[i]) || p[0] == '.')
                        return -ENOENT;
        memcpy(out->id, p, n);
        out->id[n] = 0;
        *rest = p + n;
        return 0;
}

static int method_is(const char *method, bool post, struct http_route *out)
{
        out->post = post;
        return strcmp(method, post ? "POST" : "GET") == 0 ? 0 : -EPERM;
}

/* /api/runs..., /api/tasks... */
static int route_store(const char *method, const char *p, bool task, struct http_route *out)
{
        const char *rest;
        if (!*p) { /* GET lists, POST starts one */
                out->kind = task ? HR_TASKS : HR_RUNS;
                return method_is(method, strcmp(method, "POST") == 0, out);
        }
        if (*p++ != '/' || take_id(p, out, &rest) < 0)
                return -ENOENT;
        if (!*rest) {
                out->kind = task ? HR_TASK : HR_RUN;
                return method_is(method, false, out);
        }
        if (strcmp(rest, "/cancel") == 0) {
                out->kind = task ? HR_TASK_CANCEL : HR_RUN_CANCEL;
                return method_is(method, true, out);
        }
        if (strcmp(rest, "/events") == 0) {
                out->kind = task ? HR_TASK_EVENTS : HR_RUN_EVENTS;
                return method_is(method, false, out);
        }
        if (strncmp(rest, "/artifacts/", 11) == 0 && rest[11]) {
                out->kind = task ? HR_TASK_ARTIFACT : HR_RUN_ARTIFACT;
                out->name = rest + 11; /* checked by the broker against the result's list (serve.c) */
                return method_is(method, false, out);
        }
        return -ENOENT;
}

int bro_http_route(const char *method, const char *url, struct http_route *out)
{
        memset(out, 0, sizeof(*out));
        if (url[0] != '/')
                return -EINVAL;
        if (strncmp(url, "/api/", 5) == 0) {
                const char *p = url + 5;
                out->api = true;
                if (strcmp(p, "me") == 0)
                        return out->kind = HR_ME, method_is(method, false, out);
                if (strcmp(p, "probe") == 0)
                        return out->kind = HR_PROBE, method_is(method, false, out);
                if (strcmp(p, "folder") == 0)
                        return out->kind = HR_FOLDER, method_is(method, false, out);
                if (strcmp(p, "breakit") == 0)
                        return out->kind = HR_BREAKIT, method_is(method, false, out);
                if (strncmp(p, "breakit/", 8) == 0) {
                        out->kind = HR_BREAKIT_FILE;
                        out->name = p + 8;
                        if (!bro_http_static_path_ok(out->name) || strchr(out->name, '/'))
                                return -EINVAL;
                        return method_is(method, false, out);
                }
                if (strncmp(p, "runs", 4) == 0 && (p[4] == 0 || p[4] == '/'))
                        return route_store(method, p + 4, false, out);
                if (strncmp(p, "tasks", 5) == 0 && (p[5] == 0 || p[5] == '/'))
                        return route_store(method, p + 5, true, out);
                return -ENOENT;
        }
        if (strcmp(url, "/login") == 0)
                return out->kind = HR_LOGIN, method_is(method, false, out);
        out->kind = HR_STATIC;
        out->name = url[1] ? url + 1 : "index.html";
        if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
                return -EPERM;
        if (!bro_http_static_path_ok(out->name))
                return -EINVAL;
        return bro_http_static_type(out->name) ? 0 : -ENOENT;
}

int bro_http_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, bool *loopback)
{
        char host[64];
        const char *colon = strrchr(s, ':');
        if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host) || !colon[1] || strlen(colon + 1) > 5 ||
            strspn(colon + 1, "0123456789") != strlen(colon + 1))
                return -EINVAL;
        unsigned long port = strtoul(colon + 1, NULL, 10);
        if (port > 65535) /* 0: any free port (the log and the links name it) */
                return -EINVAL;
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = 0;
        memset(ss, 0, sizeof(*ss));
        if (host[0] == '[') {
                size_t n = strlen(host);
                struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
                if (n < 3 || host[n - 1] != ']')
                        return -EINVAL;
                host[n - 1] = 0;
                if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
                        return -EINVAL;
                a6->sin6_family = AF_INET6;
                a6->sin6_port = htons((uint16_t)port);
                *len = sizeof(*a6);
                *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
                return 0;
        }
        struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
        if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
                return -EINVAL;
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof(*a4);
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        return 0;
}
