/* modelclient: runs the broker's model client (broker/model.c) on a libuv loop of its own,
 * for the end-to-end tests (t_model.sh) against a real HTTP server on loopback.
 *
 *   modelclient --url URL --model NAME [--key-file PATH] [--timeout S] [--max-tokens N]
 *               [--temperature T] [--retries N] [--prompt TEXT | --messages FILE]
 *               [--parallel N] [--cancel-after MS] [--close-after MS] [--deltas]
 *
 * The key is ANVIL_MODEL_KEY's, or --key-file's (read as the broker reads it). Runs N
 * requests at once (1), each of the messages [system, user PROMPT] or the JSON array in
 * FILE; --cancel-after cancels them all after MS, --close-after closes the client. Prints
 * one line per request as it ends:
 *   ok attempts=A ms=M finish_reason=F content=<content as a JSON string>
 *   error attempts=A ms=M: <error>[ content=<JSON string>]   (content: a reply cut short)
 * and, with --deltas, a streamed reply as it grows: "delta t=<ms since the start> <JSON string>";
 * and exits 0 if every request succeeded, 1 if one failed, 2 for a usage or set-up error, 3
 * if the client broke its promises: done called from inside bro_model_chat, twice for a
 * request, not at all, or handles left open on the loop once the client is closed. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "broker/model.h"
#include "lib/log.h"

#define MAX_PARALLEL 64

static struct bro_model *model;
static bool in_chat;
static unsigned n_done[MAX_PARALLEL];
static long ids[MAX_PARALLEL];
static unsigned parallel = 1, ended;
static int status;
static uv_timer_t cancel_timer, close_timer; /* data non-NULL while open */

static void close_timers(void)
{
        if (cancel_timer.data && !uv_is_closing((uv_handle_t *)&cancel_timer))
                uv_close((uv_handle_t *)&cancel_timer, NULL);
        if (close_timer.data && !uv_is_closing((uv_handle_t *)&close_timer))
                uv_close((uv_handle_t *)&close_timer, NULL);
}

static void bug(const char *what)
{
        fprintf(stderr, "modelclient: BUG: %s\n", what);
        exit(3);
}

static void on_done(void *data, const struct bro_model_reply *reply, const char *error)
{
        unsigned i = (unsigned)(uintptr_t)data;
        if (in_chat)
                bug("done was called from inside bro_model_chat");
        if (++n_done[i] > 1)
                bug("done was called twice for one request");
        if (!reply)
                bug("done was called without a reply");
        char *content = NULL;
        if (reply->content) {
                json_t *s = json_string(reply->content);
                content = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
                json_decref(s);
                if (!content)
                        bug("the reply's content is not UTF-8");
        }
        if (error) {
                printf("error attempts=%u ms=%llu: %s%s%s\n", reply->attempts, (unsigned long long)reply->ms, error,
                       content ? " content=" : "", content ? content : "");
                status = 1;
        } else {
                if (!content || !reply->finish_reason)
                        bug("a success without content or finish_reason");
                printf("ok attempts=%u ms=%llu finish_reason=%s content=%s", reply->attempts,
                       (unsigned long long)reply->ms, reply->finish_reason, content);
                /* what a streamed reply, a reasoning model or a tool call adds: only then */
                if (reply->streamed)
                        printf(" streamed");
                if (reply->tool_calls)
                        printf(" tool_calls=%s", reply->tool_calls);
                if (reply->reasoning) {
                        json_t *s = json_string(reply->reasoning);
                        char *r = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
                        json_decref(s);
                        if (!r)
                                bug("the reply's reasoning is not UTF-8");
                        printf(" reasoning=%s", r);
                        free(r);
                }
                printf("\n");
        }
        fflush(stdout);
        free(content);
        if (++ended == parallel) {
                bro_model_close(model);
                close_timers();
        }
}

/* --deltas: a streamed reply as it grows, one line a piece, the ms since the start first */
static bool show_deltas;
static uint64_t t_start;

static void on_delta(void *data, const char *text, size_t len)
{
        (void)data;
        if (!show_deltas)
                return;
        json_t *s = json_stringn(text, len);
        char *d = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
        json_decref(s);
        if (!d)
                bug("a delta is not UTF-8, or splits a character");
        printf("delta t=%llu %s\n", (unsigned long long)(uv_hrtime() / 1000000 - t_start), d);
        fflush(stdout);
        free(d);
}

static void on_cancel(uv_timer_t *t)
{
        (void)t;
        for (unsigned i = 0; i < parallel; i++)
                bro_model_cancel(model, ids[i]); /* the last one's done closes the timers */
}

static void on_close(uv_timer_t *t)
{
        (void)t;
        bro_model_close(model); /* every done is called before this returns */
}

static int usage(const char *why)
{
        fprintf(stderr, "modelclient: %s\n", why);
        return 2;
}

static bool parse_u(const char *s, unsigned *out)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (!*s || *end || errno || v > 1000000000UL)
                return false;
        *out = (unsigned)v;
        return true;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "url", required_argument, NULL, 'u' },        { "model", required_argument, NULL, 'm' },
                { "key-file", required_argument, NULL, 'k' },   { "timeout", required_argument, NULL, 't' },
                { "max-tokens", required_argument, NULL, 'n' }, { "temperature", required_argument, NULL, 'T' },
                { "retries", required_argument, NULL, 'r' },    { "prompt", required_argument, NULL, 'p' },
                { "messages", required_argument, NULL, 'M' },   { "parallel", required_argument, NULL, 'P' },
                { "cancel-after", required_argument, NULL, 'c' }, { "close-after", required_argument, NULL, 'C' },
                { "deltas", no_argument, NULL, 'D' },           { 0 },
        };
        log_set_program("modelclient");
        struct bro_model_cfg cfg;
        bro_model_cfg_default(&cfg);
        const char *prompt = "Write a tool that prints hello.", *messages_file = NULL, *key_file = NULL;
        unsigned cancel_after = 0, close_after = 0;
        struct anvil_err err = ANVIL_ERR_INIT;
        int c;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case 'u':
                        snprintf(cfg.url, sizeof(cfg.url), "%s", optarg);
                        break;
                case 'm':
                        snprintf(cfg.model, sizeof(cfg.model), "%s", optarg);
                        break;
                case 'k':
                        key_file = optarg;
                        break;
                case 't':
                        if (!parse_u(optarg, &cfg.timeout_s))
                                return usage("--timeout: not a number");
                        break;
                case 'n':
                        if (!parse_u(optarg, &cfg.max_tokens))
                                return usage("--max-tokens: not a number");
                        break;
                case 'T':
                        cfg.temperature = strtod(optarg, NULL);
                        break;
                case 'r':
                        if (!parse_u(optarg, &cfg.retries))
                                return usage("--retries: not a number");
                        break;
                case 'p':
                        prompt = optarg;
                        break;
                case 'M':
                        messages_file = optarg;
                        break;
                case 'P':
                        if (!parse_u(optarg, &parallel) || parallel < 1 || parallel > MAX_PARALLEL)
                                return usage("--parallel: not within 1..64");
                        break;
                case 'c':
                        if (!parse_u(optarg, &cancel_after))
                                return usage("--cancel-after: not a number");
                        break;
                case 'C':
                        if (!parse_u(optarg, &close_after))
                                return usage("--close-after: not a number");
                        break;
                case 'D':
                        show_deltas = true;
                        break;
                default:
                        return usage("unknown option");
                }
        }
        const char *env = getenv("ANVIL_MODEL_KEY");
        if (key_file && bro_model_read_key_file(key_file, cfg.key, sizeof(cfg.key), &err) < 0)
                return usage(err.msg);
        if (!key_file && env)
                snprintf(cfg.key, sizeof(cfg.key), "%s", env);
        if (bro_model_cfg_check(&cfg, &err) < 0)
                return usage(err.msg);

        json_t *messages;
        if (messages_file) {
                json_error_t jerr;
                messages = json_load_file(messages_file, 0, &jerr);
                if (!messages)
                        return usage(jerr.text);
        } else
                messages = json_pack("[{s:s, s:s}, {s:s, s:s}]", "role", "system", "content",
                                     "You write Python tools.", "role", "user", "content", prompt);

        uv_loop_t loop;
        if (uv_loop_init(&loop) < 0 || bro_model_init(&model, &loop, &err) < 0)
                return usage(err.msg[0] ? err.msg : "uv_loop_init failed");
        t_start = uv_hrtime() / 1000000;
        for (unsigned i = 0; i < parallel; i++) {
                in_chat = true;
                ids[i] = bro_model_chat_stream(model, &cfg, messages, on_done, on_delta, (void *)(uintptr_t)i);
                in_chat = false;
                if (ids[i] <= 0) {
                        fprintf(stderr, "modelclient: bro_model_chat: %s\n", strerror((int)-ids[i]));
                        return 2;
                }
        }
        if (cancel_after) {
                uv_timer_init(&loop, &cancel_timer);
                cancel_timer.data = &cancel_timer;
                uv_timer_start(&cancel_timer, on_cancel, cancel_after, 0);
        }
        if (close_after) {
                uv_timer_init(&loop, &close_timer);
                close_timer.data = &close_timer;
                uv_timer_start(&close_timer, on_close, close_after, 0);
        }
        uv_run(&loop, UV_RUN_DEFAULT);
        for (unsigned i = 0; i < parallel; i++)
                if (n_done[i] != 1)
                        bug("a request ended without done");
        /* Every handle the client opened (its timer, sockets' polls, requests' timers) must be
         * closed once it is: the loop then closes cleanly. */
        if (uv_loop_close(&loop) != 0)
                bug("handles left on the loop after bro_model_close");
        json_decref(messages);
        return status;
}
