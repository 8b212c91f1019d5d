/* The bundled scripted model of anvilctl verify (check 1, when the broker has no model of its
 * own, or with --scripted-model): an OpenAI chat-completions endpoint on 127.0.0.1, served by
 * libmicrohttpd on a thread of its own. Whatever the path, a request whose messages hold one
 * of the two tasks' markers is answered with that task's tool as a code action (one step:
 * the tool calls final_answer); any other request with a reply that holds no code. It is the
 * model only: the broker asks it as it would ask any model (the task names its URL, so the
 * broker's key never goes to it), and the tools run in the jail like any other.
 *
 * Bounds: a request body of at most 4 MiB (the broker's conversation with a one-step task is
 * a few KiB), at most 16 connections, 60 s idle. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/verify.h"

#define BODY_MAX (4u << 20)

/* The data every task gets: ./inputs/verify_sales.csv (ctl/verify.c sends it). */
const char *const vfy_task_text[2] = {
        "Total the amount per region of ./inputs/verify_sales.csv; write the totals as "
        "./artifacts/revenue_by_region.csv, print them, and call final_answer with the number of "
        "regions. [verify-task-1]",
        "Count the rows per product of ./inputs/verify_sales.csv; write the counts as "
        "./artifacts/rows_by_product.csv, print them, and call final_answer with the number of "
        "rows. [verify-task-2]",
};

static const char *const tools[2] = {
        "import pandas as pd\n"
        "df = pd.read_csv(\"./inputs/verify_sales.csv\")\n"
        "totals = df.groupby(\"region\")[\"amount\"].sum()\n"
        "totals.to_csv(\"./artifacts/revenue_by_region.csv\")\n"
        "print(totals.to_string())\n"
        "final_answer(int(len(totals)))\n",
        "import pandas as pd\n"
        "df = pd.read_csv(\"./inputs/verify_sales.csv\")\n"
        "counts = df[\"product\"].value_counts().sort_index()\n"
        "counts.to_csv(\"./artifacts/rows_by_product.csv\")\n"
        "print(counts.to_string())\n"
        "final_answer(int(counts.sum()))\n",
};

struct vfy_model {
        struct MHD_Daemon *d;
        atomic_uint requests;
};

struct body {
        char *data;
        size_t len;
        bool too_large;
};

/* Which task a request is for: the marker in any of its messages; -1 for none. */
static int which_task(const struct body *b)
{
        json_error_t je;
        json_t *j = json_loadb(b->data ? b->data : "", b->len, 0, &je);
        json_t *msgs = json_object_get(j, "messages");
        int task = -1;
        size_t i;
        json_t *msg;
        json_array_foreach(msgs, i, msg) {
                const char *content = json_string_value(json_object_get(msg, "content"));
                for (int t = 0; content && t < 2; t++)
                        if (strstr(content, t ? "[verify-task-2]" : "[verify-task-1]"))
                                task = t;
        }
        json_decref(j);
        return task;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, json_t *body)
{
        char *text = json_dumps(body, JSON_COMPACT);
        json_decref(body);
        if (!text)
                return MHD_NO;
        struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
        if (!r) {
                free(text);
                return MHD_NO;
        }
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        enum MHD_Result res = MHD_queue_response(c, status, r);
        MHD_destroy_response(r);
        return res;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
        (void)url;
        (void)version;
        struct vfy_model *m = cls;
        struct body *b = *con_cls;
        if (!b) {
                *con_cls = b = calloc(1, sizeof(*b));
                return b ? MHD_YES : MHD_NO;
        }
        if (*upload_size) {
                if (b->len + *upload_size > BODY_MAX) {
                        b->too_large = true;
                } else if (!b->too_large) {
                        char *n = realloc(b->data, b->len + *upload_size + 1);
                        if (!n)
                                return MHD_NO;
                        memcpy(n + b->len, upload, *upload_size);
                        b->data = n;
                        b->len += *upload_size;
                        b->data[b->len] = '\0';
                }
                *upload_size = 0;
                return MHD_YES;
        }
        atomic_fetch_add(&m->requests, 1);
        if (strcmp(method, "POST") != 0 || b->too_large)
                return reply(c, b->too_large ? 413 : 405,
                             json_pack("{s:{s:s}}", "error", "message",
                                       b->too_large ? "request body over 4 MiB" : "POST a chat completion request"));
        int t = which_task(b);
        char content[2048];
        if (t < 0)
                snprintf(content, sizeof(content), "Thought: this is anvilctl verify's scripted model; it "
                                                   "answers only verify's own two tasks.");
        else
                snprintf(content, sizeof(content), "Thought: %s\nCode:\n```py\n%s```<end_code>\n",
                         t ? "I count the rows per product, write them as a CSV and finish."
                           : "I total the amount per region, write it as a CSV and finish.",
                         tools[t]);
        return reply(c, 200,
                     json_pack("{s:s, s:s, s:s, s:[{s:i, s:s, s:{s:s, s:s}}], s:{s:i, s:i, s:i}}", "id",
                               "chatcmpl-anvil-verify", "object", "chat.completion", "model", "anvil-verify-scripted",
                               "choices", "index", 0, "finish_reason", "stop", "message", "role", "assistant",
                               "content", content, "usage", "prompt_tokens", 1, "completion_tokens", 1,
                               "total_tokens", 2));
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
        (void)cls;
        (void)c;
        (void)toe;
        struct body *b = *con_cls;
        if (b)
                free(b->data);
        free(b);
        *con_cls = NULL;
}

int vfy_model_start(struct vfy_model **out, char *url, size_t url_size, char *why, size_t why_size)
{
        struct vfy_model *m = calloc(1, sizeof(*m));
        if (!m) {
                snprintf(why, why_size, "out of memory");
                return -1;
        }
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        m->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR,
                                (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, on_completed, m,
                                MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
        const union MHD_DaemonInfo *info = m->d ? MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
        if (!info || !info->port) {
                snprintf(why, why_size, "libmicrohttpd could not listen on 127.0.0.1");
                vfy_model_stop(m);
                return -1;
        }
        snprintf(url, url_size, "http://127.0.0.1:%u/v1", (unsigned)info->port);
        *out = m;
        return 0;
}

unsigned vfy_model_requests(struct vfy_model *m)
{
        return m ? atomic_load(&m->requests) : 0;
}

void vfy_model_stop(struct vfy_model *m)
{
        if (!m)
                return;
        if (m->d)
                MHD_stop_daemon(m->d);
        free(m);
}
