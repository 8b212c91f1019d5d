/* anvil-mcp's resources (docs/mcp.md): the artifacts of the session's runs, each
 * anvil://run/RUN_ID/PATH with its MIME type; resources/read asks the broker for it
 * (artifact_request), which serves it only to the user who made the run (or root), and checks
 * the bytes that came against the broker's count and SHA-256. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/client.h"
#include "lib/utf8.h"
#include "mcp/mcp.h"

char *mcp_base64(const uint8_t *d, size_t n); /* tools.c */

/* ---- the session's runs ---- */

struct kept_run {
        char *run_id;
        struct proto_strv paths;
        uint64_t *bytes;
};

static pthread_mutex_t runs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct kept_run runs[MCP_RUNS_KEPT];
static size_t runs_next; /* the slot of the next run: the oldest once all are used */

static void kept_free(struct kept_run *k)
{
        free(k->run_id);
        proto_strv_free(&k->paths);
        free(k->bytes);
        memset(k, 0, sizeof(*k));
}

void mcp_runs_add(const struct proto_run_result *r)
{
        if (!r->run_id || !r->artifacts.n)
                return;
        struct kept_run k = { .run_id = strdup(r->run_id), .bytes = calloc(r->artifacts.n, sizeof(uint64_t)) };
        const struct proto_artifact *a = r->artifacts.items;
        bool ok = k.run_id && k.bytes;
        for (size_t i = 0; ok && i < r->artifacts.n; i++) {
                ok = proto_strv_push(&k.paths, a[i].path) == 0;
                k.bytes[i] = a[i].bytes;
        }
        if (!ok) {
                kept_free(&k);
                return;
        }
        pthread_mutex_lock(&runs_mu);
        kept_free(&runs[runs_next]);
        runs[runs_next] = k;
        runs_next = (runs_next + 1) % MCP_RUNS_KEPT;
        pthread_mutex_unlock(&runs_mu);
}

/* ---- names ---- */

const char *mcp_mime_type(const char *path)
{
        static const char *const table[][2] = {
                { "png", "image/png" },
                { "jpg", "image/jpeg" },
                { "jpeg", "image/jpeg" },
                { "gif", "image/gif" },
                { "webp", "image/webp" },
                { "svg", "image/svg+xml" },
                { "csv", "text/csv" },
                { "tsv", "text/tab-separated-values" },
                { "txt", "text/plain" },
                { "log", "text/plain" },
                { "md", "text/markdown" },
                { "html", "text/html" },
                { "htm", "text/html" },
                { "json", "application/json" },
                { "py", "text/x-python" },
                { "xml", "application/xml" },
                { "pdf", "application/pdf" },
                { "parquet", "application/vnd.apache.parquet" },
                { "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" },
        };
        const char *slash = strrchr(path, '/');
        const char *dot = strrchr(slash ? slash + 1 : path, '.');
        if (dot && dot[1])
                for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                        if (strcasecmp(dot + 1, table[i][0]) == 0)
                                return table[i][1];
        return "application/octet-stream";
}

static bool is_text_type(const char *mime)
{
        return strncmp(mime, "text/", 5) == 0 || strcmp(mime, "application/json") == 0 ||
               strcmp(mime, "application/xml") == 0 || strcmp(mime, "image/svg+xml") == 0;
}

/* URI characters kept as they are in a path; every other byte is %XX. */
static bool uri_plain(unsigned char ch)
{
        return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
               ch == '_' || ch == '~' || ch == '/' || ch == '-';
}

char *mcp_artifact_uri(const char *run_id, const char *path)
{
        size_t n = strlen(path);
        char *enc = malloc(3 * n + 1), *o = enc;
        if (!enc)
                return NULL;
        for (const unsigned char *p = (const unsigned char *)path; *p; p++)
                o += uri_plain(*p) ? sprintf(o, "%c", *p) : sprintf(o, "%%%02X", *p);
        *o = 0;
        char *uri = NULL;
        if (asprintf(&uri, "anvil://run/%s/%s", run_id, enc) < 0)
                uri = NULL;
        free(enc);
        return uri;
}

static int hexval(char ch)
{
        return ch >= '0' && ch <= '9'   ? ch - '0'
               : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
               : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                        : -1;
}

/* anvil://run/RUN_ID/PATH into its run id ([0-9A-Za-z_-]{1,64}) and its path (decoded, valid
 * UTF-8 without NUL, at most PROTO_PATH_MAX bytes): 0, or -1. */
static int parse_uri(const char *uri, char run_id[65], char **path)
{
        static const char prefix[] = "anvil://run/";
        if (strncmp(uri, prefix, sizeof(prefix) - 1) != 0)
                return -1;
        const char *id = uri + sizeof(prefix) - 1;
        size_t n = strspn(id, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-");
        if (n == 0 || n > 64 || id[n] != '/' || !id[n + 1])
                return -1;
        memcpy(run_id, id, n);
        run_id[n] = 0;
        const char *p = id + n + 1;
        char *out = malloc(strlen(p) + 1), *o = out;
        if (!out)
                return -1;
        for (; *p; p++) {
                if (*p == '%') {
                        int h = hexval(p[1]), l = h < 0 ? -1 : hexval(p[2]);
                        if (l < 0 || (h == 0 && l == 0))
                                goto bad;
                        *o++ = (char)(h << 4 | l);
                        p += 2;
                } else if (*p == '?' || *p == '#') {
                        goto bad;
                } else {
                        *o++ = *p;
                }
        }
        *o = 0;
        if ((size_t)(o - out) > PROTO_PATH_MAX || !utf8_valid((const uint8_t *)out, (size_t)(o - out)))
                goto bad;
        *path = out;
        return 0;
bad:
        free(out);
        return -1;
}

/* ---- reading one through the broker ---- */

struct fetch {
        struct ctl_artifact_rx rx; /* first: ctl_artifact_frame's context */
        size_t max;
        uint8_t *data;
        size_t len;
};

/* Each piece kept while the whole stays within max; past it, counted (rx.got) and not kept. */
static int fetch_piece(struct ctl_artifact_rx *rx, const struct proto_bytes *d, int *rc)
{
        (void)rc;
        struct fetch *f = (struct fetch *)rx;
        if (f->rx.got + d->len <= f->max) {
                uint8_t *nd = realloc(f->data, f->len + d->len + 1);
                if (!nd)
                        return -1;
                f->data = nd;
                memcpy(f->data + f->len, d->data, d->len);
                f->len += d->len;
        }
        return 1;
}

/* 0; or 1 refused (why: "code: message"), 2 Anvil unreachable, 3 too large (*len: its size), 4
 * what came is not what the broker counted. */
int mcp_artifact_fetch(struct mcp_call *c, const char *run_id, const char *path, size_t max, uint8_t **data,
                       size_t *len, char **why)
{
        struct proto_msg m = { .type = PROTO_ARTIFACT_REQUEST };
        m.u.artifact_request =
                (struct proto_artifact_request){ .request_id = c->rid, .id = (char *)run_id, .path = (char *)path };
        struct fetch f = { .rx.piece = fetch_piece, .max = max };
        SHA256Init(&f.rx.h);
        *why = NULL;
        int fd = ctl_send_request_why(&m, "the artifact request", NULL, 0, why);
        if (fd < 0)
                return -fd == EXIT_CONNECT ? 2 : 1;
        mcp_call_set_fd(c, fd, false);
        int rc = ctl_follow(fd, "the artifact's copy", ctl_artifact_frame, &f, why);
        mcp_call_set_fd(c, -1, false);
        (void)close(fd);
        char hex[SHA256_DIGEST_STRING_LENGTH];
        SHA256End(&f.rx.h, hex);
        int r = 0;
        if (rc != 0 || !f.rx.ended) {
                r = rc == EXIT_CONNECT || rc == 0 ? 2 : 1;
        } else if (f.rx.got > max) {
                *len = f.rx.got;
                r = 3;
        } else if (f.rx.end.bytes != f.rx.got || !f.rx.end.sha256 || strcmp(f.rx.end.sha256, hex) != 0) {
                free(*why);
                if (asprintf(why, "%llu bytes, sha256 %s; the broker counted %llu bytes, sha256 %s",
                             (unsigned long long)f.rx.got, hex, (unsigned long long)f.rx.end.bytes,
                             f.rx.end.sha256 ? f.rx.end.sha256 : "-") < 0)
                        *why = NULL;
                r = 4;
        }
        free(f.rx.end.request_id);
        free(f.rx.end.path);
        free(f.rx.end.sha256);
        if (r == 0) {
                *data = f.data ? f.data : calloc(1, 1);
                *len = f.len;
                if (*data)
                        (*data)[f.len] = 0;
        } else {
                free(f.data);
        }
        return r;
}

/* ---- resources/list, resources/read, resources/templates/list ---- */

json_t *mcp_resource_templates(void)
{
        return json_pack("[{s:s, s:s, s:s, s:s}]", "uriTemplate", "anvil://run/{run_id}/{path}", "name", "artifact",
                         "title", "An artifact of an Anvil run", "description",
                         "A file a run wrote in ./artifacts: its run id and its path as the result lists it");
}

void mcp_resources_list(struct mcp_call *c)
{
        const json_t *cursor = json_object_get(c->params, "cursor");
        if (cursor && !json_is_string(cursor)) {
                (void)mcp_param_type(c->id, "params.cursor", "a string");
                return;
        }
        json_t *list = json_array();
        pthread_mutex_lock(&runs_mu);
        for (size_t n = 0; n < MCP_RUNS_KEPT; n++) {
                const struct kept_run *k =
                        &runs[(runs_next + MCP_RUNS_KEPT - 1 - n) % MCP_RUNS_KEPT]; /* newest first */
                for (size_t i = 0; k->run_id && i < k->paths.n; i++) {
                        char *uri = mcp_artifact_uri(k->run_id, k->paths.items[i]);
                        if (uri)
                                json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:I}", "uri", uri, "name",
                                                                      k->paths.items[i], "mimeType",
                                                                      mcp_mime_type(k->paths.items[i]), "size",
                                                                      (json_int_t)k->bytes[i]));
                        free(uri);
                }
        }
        pthread_mutex_unlock(&runs_mu);
        mcp_result(c->id, json_pack("{s:o}", "resources", list));
}

void mcp_resources_read(struct mcp_call *c)
{
        const json_t *u = json_object_get(c->params, "uri");
        char msg[PROTO_PATH_MAX + 1024], cut[512], run_id[65];
        if (!u) {
                mcp_error(c->id, RPC_INVALID_PARAMS, POL_MCP_TEXT(msg, sizeof(msg), PARAM_MISSING, "params.uri"));
                return;
        }
        if (!json_is_string(u)) {
                (void)mcp_param_type(c->id, "params.uri", "a string");
                return;
        }
        const char *uri = json_string_value(u);
        snprintf(cut, sizeof(cut), "%s", uri);
        char *path = NULL;
        if (strlen(uri) != json_string_length(u) || parse_uri(uri, run_id, &path) < 0) {
                mcp_error(c->id, RPC_INVALID_PARAMS, POL_MCP_TEXT(msg, sizeof(msg), BAD_URI, cut));
                return;
        }
        uint8_t *data = NULL;
        size_t len = 0;
        char *why = NULL;
        int r = mcp_artifact_fetch(c, run_id, path, MCP_RESOURCE_MAX, &data, &len, &why);
        const char *mime = mcp_mime_type(path);
        free(path);
        if (mcp_call_cancelled(c)) {
                fprintf(stderr, "anvil-mcp: %s: cancelled: no answer sent\n", c->rid);
        } else if (r == 1) {
                mcp_error(c->id, MCP_RESOURCE_NOT_FOUND,
                          POL_MCP_TEXT(msg, sizeof(msg), RESOURCE_NOT_READ, cut, why ? why : "?"));
        } else if (r == 2) {
                mcp_error(c->id, RPC_INTERNAL_ERROR,
                          POL_MCP_TEXT(msg, sizeof(msg), ANVIL_UNREACHABLE, why ? why : "?"));
        } else if (r == 3) {
                mcp_error(c->id, RPC_INTERNAL_ERROR,
                          POL_MCP_TEXT(msg, sizeof(msg), RESOURCE_TOO_LARGE, cut, (unsigned long long)len,
                                       (unsigned long long)MCP_RESOURCE_MAX));
        } else if (r == 4) {
                mcp_error(c->id, RPC_INTERNAL_ERROR,
                          POL_MCP_TEXT(msg, sizeof(msg), RESOURCE_NOT_READ, cut, why ? why : "?"));
        } else {
                json_t *item = json_pack("{s:s, s:s}", "uri", uri, "mimeType", mime);
                if (is_text_type(mime) && !memchr(data, 0, len) && utf8_valid(data, len)) {
                        json_object_set_new(item, "text", json_stringn((const char *)data, len));
                } else {
                        char *b = mcp_base64(data, len);
                        json_object_set_new(item, "blob", b ? json_string(b) : json_string(""));
                        free(b);
                }
                mcp_result(c->id, json_pack("{s:[o]}", "contents", item));
        }
        free(data);
        free(why);
}
