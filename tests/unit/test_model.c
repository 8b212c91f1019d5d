/* Unit tests for the model client's pure parsing (broker/model_parse.c): Retry-After in each
 * of its forms and what is refused, the backoff, a reply's JSON (what is taken, every way it
 * can be malformed, with the exact error text), the server's own error message (where it is
 * found, how it is made printable and cut, and that the key never gets through), and the
 * printable form of untrusted text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/model.h"
#include "lib/cleanup.h"
#include "lib/utf8.h"

/* ---- Retry-After ---- */

struct ra_case {
        const char *value;
        int ret;
        uint64_t ms;
};

/* "now" for the dates: Sun, 06 Nov 1994 08:49:27 GMT, ten seconds before RFC 9110's example. */
#define NOW ((time_t)784111767)

static const struct ra_case ra_cases[] = {
        { "1", 0, 1000 },
        { "0", 0, 0 },
        { " 2 ", 0, 2000 },
        { "\t3\r\n", 0, 3000 }, /* as the header callback hands it over */
        { "30", 0, 30000 },
        { "31", 0, 30000 },                     /* capped */
        { "120", 0, 30000 },
        { "99999999999999999999999999", 0, 30000 }, /* no overflow */
        { "007", 0, 7000 },
        { "Sun, 06 Nov 1994 08:49:37 GMT", 0, 10000 },
        { "Sunday, 06-Nov-94 08:49:37 GMT", 0, 10000 },
        { "Sun Nov  6 08:49:37 1994", 0, 10000 },
        { "Sun, 06 Nov 1994 08:49:27 GMT", 0, 0 },     /* now */
        { "Sun, 06 Nov 1994 08:00:00 GMT", 0, 0 },     /* past */
        { "Sun, 06 Nov 1994 09:49:27 GMT", 0, 30000 }, /* an hour: capped */
        { "Fri, 31 Dec 9999 23:59:59 GMT", 0, 30000 },
        { "", -EINVAL, 0 },
        { "   ", -EINVAL, 0 },
        { "-1", -EINVAL, 0 },
        { "+1", -EINVAL, 0 },
        { "1.5", -EINVAL, 0 },
        { "1 2", -EINVAL, 0 },
        { "0x10", -EINVAL, 0 },
        { "soon", -EINVAL, 0 },
        { "Sun, 06 Nov 1994 08:49:37 UTC", -EINVAL, 0 },
        { "Sun, 06 Nov 1994 08:49:37 GMT trailing", -EINVAL, 0 },
        { "Sun, 06 Nov 1994", -EINVAL, 0 },
        { "Sun, 32 Nov 1994 08:49:37 GMT", -EINVAL, 0 },
};

static void test_retry_after(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(ra_cases); i++) {
                const struct ra_case *c = &ra_cases[i];
                uint64_t ms = 424242;
                int r = bro_model_retry_after(c->value, strlen(c->value), NOW, &ms);
                if (r != c->ret)
                        fail_msg("'%s': returned %d, expected %d", c->value, r, c->ret);
                if (r == 0 && ms != c->ms)
                        fail_msg("'%s': %llu ms, expected %llu", c->value, (unsigned long long)ms,
                                 (unsigned long long)c->ms);
                if (r < 0 && ms != 424242)
                        fail_msg("'%s': refused but wrote %llu ms", c->value, (unsigned long long)ms);
        }
        /* The length is the caller's: no NUL needed, none allowed inside, nothing read past it. */
        uint64_t ms = 0;
        assert_int_equal(bro_model_retry_after("12345", 1, NOW, &ms), 0);
        assert_int_equal(ms, 1000);
        assert_int_equal(bro_model_retry_after("1\0002", 3, NOW, &ms), -EINVAL);
        char big[300];
        memset(big, '1', sizeof(big));
        assert_int_equal(bro_model_retry_after(big, sizeof(big), NOW, &ms), -EINVAL); /* longer than any valid value */
}

static void test_backoff(void **state)
{
        (void)state;
        static const uint64_t want[] = { 500, 500, 1000, 2000, 4000, 8000, 8000, 8000 };
        for (unsigned n = 0; n < ELEMENTSOF(want); n++)
                assert_int_equal(bro_model_backoff_ms(n), want[n]);
        assert_int_equal(bro_model_backoff_ms(~0u), 8000);
}

/* ---- the reply ---- */

struct reply_case {
        const char *what;
        const char *body; /* NUL-terminated unless len is given */
        size_t len;
        const char *content;       /* NULL: an error is expected */
        const char *finish_reason; /* or the error text */
};

#define OK(what, body, content, fr) { what, body, 0, content, fr }
#define BAD(what, body, error) { what, body, 0, NULL, error }
#define CHOICE(msg, rest) "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":" msg rest "}]}"
static const struct reply_case reply_cases[] = {
        OK("a reply", CHOICE("{\"role\":\"assistant\",\"content\":\"print(1)\"}", ",\"finish_reason\":\"stop\""),
           "print(1)", "stop"),
        OK("newlines, quotes and unicode kept as they are",
           CHOICE("{\"content\":\"a\\nb\\t\\\"c\\\" \\u00e9 \\ud83d\\ude00\"}", ",\"finish_reason\":\"stop\""),
           "a\nb\t\"c\" \xC3\xA9 \xF0\x9F\x98\x80", "stop"),
        OK("an empty content is content", CHOICE("{\"content\":\"\"}", ",\"finish_reason\":\"stop\""), "", "stop"),
        OK("finish_reason null", CHOICE("{\"content\":\"x\"}", ",\"finish_reason\":null"), "x", ""),
        OK("finish_reason absent", CHOICE("{\"content\":\"x\"}", ""), "x", ""),
        OK("finish_reason not a string", CHOICE("{\"content\":\"x\"}", ",\"finish_reason\":7"), "x", ""),
        OK("finish_reason length is the caller's to judge", CHOICE("{\"content\":\"par\"}", ",\"finish_reason\":\"length\""),
           "par", "length"),
        OK("finish_reason made printable", CHOICE("{\"content\":\"x\"}", ",\"finish_reason\":\"st\\nop\\u202e\""), "x",
           "st op"),
        OK("finish_reason cut short",
           CHOICE("{\"content\":\"x\"}", ",\"finish_reason\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""), "x",
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..."),
        OK("other choices ignored",
           "{\"choices\":[{\"message\":{\"content\":\"first\"}},{\"message\":{\"content\":\"second\"}}]}", "first", ""),
        OK("surrounding blanks", "  \n{\"choices\":[{\"message\":{\"content\":\"x\"}}]}\n  ", "x", ""),
        OK("finish_reason quoting the key", CHOICE("{\"content\":\"x\"}", ",\"finish_reason\":\"T-0123456789\""), "x",
           "[redacted]"),
        BAD("empty", "", "the model server's reply is not valid JSON: '[' or '{' expected near end of file (at byte 0)"),
        BAD("HTML", "<html>502</html>", "the model server's reply is not valid JSON: '[' or '{' expected near '<' (at byte 1)"),
        BAD("cut short", "{\"choices\":[{\"message\":{\"content\":\"x",
            "the model server's reply is not valid JSON: premature end of input near '\"x' (at byte 36)"),
        BAD("trailing data", "{\"choices\":[]} {}", "the model server's reply is not valid JSON: end of file expected near '{' (at byte 16)"),
        BAD("duplicate keys", "{\"choices\":[],\"choices\":[]}",
            "the model server's reply is not valid JSON: duplicate object key near '\"choices\"' (at byte 23)"),
        BAD("NUL escaped in a string", CHOICE("{\"content\":\"a\\u0000b\"}", ""),
            "the model server's reply is not valid JSON: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"a\\u0000b\"' (at byte 63)"),
        BAD("not an object", "[1,2]", "the model server's reply has no choices"),
        BAD("no choices", "{\"id\":\"x\"}", "the model server's reply has no choices"),
        BAD("choices empty", "{\"choices\":[]}", "the model server's reply has no choices"),
        BAD("choices an object", "{\"choices\":{\"message\":{\"content\":\"x\"}}}", "the model server's reply has no choices"),
        BAD("choice not an object", "{\"choices\":[\"x\"]}", "the model server's reply has no message content"),
        BAD("no message", "{\"choices\":[{\"text\":\"x\"}]}", "the model server's reply has no message content"),
        BAD("content null, tool_calls empty", CHOICE("{\"content\":null,\"tool_calls\":[]}", ""),
            "the model server's reply has no message content"),
        BAD("content a number", CHOICE("{\"content\":1}", ""), "the model server's reply has no message content"),
        BAD("content parts", CHOICE("{\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}", ""),
            "the model server's reply has no message content"),
        BAD("an error object in a 200", "{\"error\":{\"message\":\"The model is overloaded\\nTry later\"}}",
            "the model server answered with an error: The model is overloaded Try later"),
        BAD("an error string in a 200", "{\"error\":\"model 'x' not found\"}",
            "the model server answered with an error: model 'x' not found"),
        BAD("an error quoting the key", "{\"error\":{\"message\":\"bad key sk-test-SECRET-0123456789\"}}",
            "the model server answered with an error: bad key [redacted]"),
};
#undef OK
#undef BAD

#define TEST_KEY "sk-test-SECRET-0123456789"

static void test_parse_reply(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(reply_cases); i++) {
                const struct reply_case *c = &reply_cases[i];
                struct bro_model_parsed p = { (char *)1, 7, (char *)1, (char *)1, 7, (char *)1 }; /* overwritten in every case */
                char why[512] = "unset";
                size_t len = c->len ? c->len : strlen(c->body);
                /* A copy of exactly len bytes: nothing may read past them. */
                _cleanup_free_ char *body = malloc(len ? len : 1);
                memcpy(body, c->body, len);
                int r = bro_model_parse_reply(body, len, TEST_KEY, &p, why, sizeof(why));
                if (c->content) {
                        if (r != 0)
                                fail_msg("%s: refused: %s", c->what, why);
                        assert_string_equal(p.content, c->content);
                        assert_int_equal(p.content_len, strlen(c->content));
                        assert_string_equal(p.finish_reason, c->finish_reason);
                        bro_model_parsed_free(&p);
                        assert_null(p.content);
                } else {
                        if (r != -EBADMSG)
                                fail_msg("%s: returned %d, expected -EBADMSG", c->what, r);
                        if (strcmp(why, c->finish_reason) != 0)
                                fail_msg("%s:\n  got      '%s'\n  expected '%s'", c->what, why, c->finish_reason);
                        assert_null(p.content);
                        assert_null(p.finish_reason);
                }
        }
}

static void test_parse_reply_bounds(void **state)
{
        (void)state;
        struct bro_model_parsed p;
        char why[512];
        /* Invalid UTF-8 in the body is refused by the decoder, not passed on. */
        static const char bad_utf8[] = "{\"choices\":[{\"message\":{\"content\":\"\xC0\xAF\"}}]}";
        assert_int_equal(bro_model_parse_reply(bad_utf8, sizeof(bad_utf8) - 1, NULL, &p, why, sizeof(why)), -EBADMSG);
        assert_true(strncmp(why, "the model server's reply is not valid JSON: ", 44) == 0);
        assert_true(utf8_valid((const uint8_t *)why, strlen(why)));
        /* Nesting deeper than the decoder allows: refused, no stack overflow. */
        size_t depth = 100000;
        _cleanup_free_ char *deep = malloc(depth);
        memset(deep, '[', depth);
        assert_int_equal(bro_model_parse_reply(deep, depth, NULL, &p, why, sizeof(why)), -EBADMSG);
        assert_string_equal(why, "the model server's reply is not valid JSON: maximum parsing depth reached near '[' "
                                 "(at byte 2049)");
        /* A long content is taken whole (the body's own bound is the transfer's). */
        size_t n = 1 << 20;
        _cleanup_free_ char *big = malloc(n + 64);
        int k = sprintf(big, "{\"choices\":[{\"message\":{\"content\":\"");
        memset(big + k, 'x', n);
        strcpy(big + k + n, "\"}}]}");
        assert_int_equal(bro_model_parse_reply(big, strlen(big), NULL, &p, why, sizeof(why)), 0);
        assert_int_equal(p.content_len, n);
        bro_model_parsed_free(&p);
        /* The error text is cut to the buffer given. */
        char small[16];
        assert_int_equal(bro_model_parse_reply("[]", 2, NULL, &p, small, sizeof(small)), -EBADMSG);
        assert_string_equal(small, "the model serve");
}

/* ---- replies as real servers serialise them (issue 14) ---- */

struct dialect_case {
        const char *what;
        const char *body;
        const char *content, *finish_reason, *reasoning, *tool_calls; /* NULL: absent */
};

static const struct dialect_case dialect_cases[] = {
        { "OpenAI, pretty-printed, refusal null, annotations, usage details",
          "{\n  \"id\": \"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\n  \"object\": \"chat.completion\",\n"
          "  \"created\": 1741569952,\n  \"model\": \"gpt-4.1-2025-04-14\",\n  \"choices\": [\n    {\n"
          "      \"index\": 0,\n      \"message\": {\n        \"role\": \"assistant\",\n"
          "        \"content\": \"Thought: x\\n<code>\\nprint(1)\\n</code>\",\n        \"refusal\": null,\n"
          "        \"annotations\": []\n      },\n      \"logprobs\": null,\n      \"finish_reason\": \"stop\"\n    }\n  ],\n"
          "  \"usage\": {\n    \"prompt_tokens\": 19,\n    \"completion_tokens\": 10,\n    \"total_tokens\": 29,\n"
          "    \"prompt_tokens_details\": {\n      \"cached_tokens\": 0,\n      \"audio_tokens\": 0\n    },\n"
          "    \"completion_tokens_details\": {\n      \"reasoning_tokens\": 0,\n      \"audio_tokens\": 0,\n"
          "      \"accepted_prediction_tokens\": 0,\n      \"rejected_prediction_tokens\": 0\n    }\n  },\n"
          "  \"service_tier\": \"default\",\n  \"system_fingerprint\": null\n}\n",
          "Thought: x\n<code>\nprint(1)\n</code>", "stop", NULL, NULL },
        { "OpenAI calling a function: content null, tool_calls",
          "{\n  \"id\": \"chatcmpl-abc123\",\n  \"object\": \"chat.completion\",\n  \"created\": 1699896916,\n"
          "  \"model\": \"gpt-4o-mini\",\n  \"choices\": [\n    {\n      \"index\": 0,\n      \"message\": {\n"
          "        \"role\": \"assistant\",\n        \"content\": null,\n        \"tool_calls\": [\n          {\n"
          "            \"id\": \"call_abc123\",\n            \"type\": \"function\",\n            \"function\": {\n"
          "              \"name\": \"python\",\n              \"arguments\": \"{\\\"code\\\": \\\"print(1)\\\"}\"\n"
          "            }\n          },\n          {\n            \"id\": \"call_def456\",\n            \"type\": \"function\",\n"
          "            \"function\": {\n              \"name\": \"get_weather\",\n              \"arguments\": \"{}\"\n"
          "            }\n          }\n        ],\n        \"refusal\": null,\n        \"annotations\": []\n      },\n"
          "      \"logprobs\": null,\n      \"finish_reason\": \"tool_calls\"\n    }\n  ],\n  \"usage\": {\n"
          "    \"prompt_tokens\": 82,\n    \"completion_tokens\": 17,\n    \"total_tokens\": 99\n  }\n}\n",
          "", "tool_calls", NULL, "python, get_weather" },
        { "a function call with content \"\"",
          "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"c\","
          "\"type\":\"function\",\"function\":{\"name\":\"python\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}",
          "", "tool_calls", NULL, "python" },
        { "llama.cpp: its key order, timings",
          "{\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
          "\"```py\\nprint(1)\\n```\"}}],\"created\":1735000000,\"model\":\"gpt-3.5-turbo\",\"system_fingerprint\":"
          "\"b4361-d79d8f39\",\"object\":\"chat.completion\",\"usage\":{\"completion_tokens\":10,\"prompt_tokens\":20,"
          "\"total_tokens\":30},\"id\":\"chatcmpl-zFdUiwzWZrJNpNcHAIYpJBC6Fcvn6eYu\",\"timings\":{\"prompt_n\":20,"
          "\"prompt_ms\":12.345,\"prompt_per_token_ms\":0.61725,\"prompt_per_second\":1620.08,\"predicted_n\":10,"
          "\"predicted_ms\":100.2,\"predicted_per_token_ms\":10.02,\"predicted_per_second\":99.8}}",
          "```py\nprint(1)\n```", "stop", NULL, NULL },
        { "Ollama: Go's \\u003c escapes",
          "{\"id\":\"chatcmpl-462\",\"object\":\"chat.completion\",\"created\":1733000000,\"model\":\"qwen2.5-coder:7b\","
          "\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
          "\"\\u003ccode\\u003e\\nif a \\u003e 1 \\u0026 b:\\n    print(a)\\n\\u003c/code\\u003e\"},\"finish_reason\":\"stop\"}],"
          "\"usage\":{\"prompt_tokens\":26,\"completion_tokens\":10,\"total_tokens\":36}}\n",
          "<code>\nif a > 1 & b:\n    print(a)\n</code>", "stop", NULL, NULL },
        { "Ollama's reasoning",
          "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"qwen3\",\"system_fingerprint\":"
          "\"fp_ollama\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\",\"reasoning\":"
          "\"let me see\"},\"finish_reason\":\"stop\"}]}",
          "ok", "stop", "let me see", NULL },
        { "vLLM: null extras, an empty tool_calls, stop_reason, kv_transfer_params",
          "{\"id\":\"chatcmpl-8f2c\",\"object\":\"chat.completion\",\"created\":1735000000,\"model\":\"Qwen/Qwen2.5-7B-Instruct\","
          "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"reasoning_content\":null,\"content\":\"x = 1\","
          "\"tool_calls\":[]},\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":20,"
          "\"total_tokens\":30,\"completion_tokens\":10,\"prompt_tokens_details\":null},\"prompt_logprobs\":null,"
          "\"kv_transfer_params\":null}",
          "x = 1", "stop", NULL, NULL },
        { "vLLM with a reasoning parser",
          "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"deepseek-r1\",\"choices\":[{\"index\":0,"
          "\"message\":{\"role\":\"assistant\",\"reasoning_content\":\"First, ```py\\ndraft()\\n```\",\"content\":\"done\","
          "\"tool_calls\":[]},\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null}]}",
          "done", "stop", "First, ```py\ndraft()\n```", NULL },
        { "a gateway: no usage, no id",
          "{\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},"
          "\"finish_reason\":\"stop\",\"index\":0}]}",
          "hi", "stop", NULL, NULL },
};

static void check_parsed(const char *what, const struct bro_model_parsed *p, const struct dialect_case *c)
{
        if (strcmp(p->content, c->content) != 0)
                fail_msg("%s: content [%s], expected [%s]", what, p->content, c->content);
        assert_int_equal(p->content_len, strlen(c->content));
        if (strcmp(p->finish_reason, c->finish_reason) != 0)
                fail_msg("%s: finish_reason [%s], expected [%s]", what, p->finish_reason, c->finish_reason);
        if ((p->reasoning == NULL) != (c->reasoning == NULL) || (c->reasoning && strcmp(p->reasoning, c->reasoning) != 0))
                fail_msg("%s: reasoning [%s], expected [%s]", what, p->reasoning ? p->reasoning : "(none)",
                         c->reasoning ? c->reasoning : "(none)");
        if ((p->tool_calls == NULL) != (c->tool_calls == NULL) ||
            (c->tool_calls && strcmp(p->tool_calls, c->tool_calls) != 0))
                fail_msg("%s: tool_calls [%s], expected [%s]", what, p->tool_calls ? p->tool_calls : "(none)",
                         c->tool_calls ? c->tool_calls : "(none)");
}

static void test_parse_dialect(void **state)
{
        const struct dialect_case *c = *state;
        struct bro_model_parsed p;
        char why[512] = "";
        size_t len = strlen(c->body);
        _cleanup_free_ char *body = malloc(len);
        memcpy(body, c->body, len);
        if (bro_model_parse_reply(body, len, TEST_KEY, &p, why, sizeof(why)) != 0)
                fail_msg("%s: refused: %s", c->what, why);
        check_parsed(c->what, &p, c);
        bro_model_parsed_free(&p);
}

/* ---- streams as real servers send them ---- */

struct stream_case {
        struct dialect_case want; /* content NULL: an error, finish_reason the error text ("" for -EPIPE) */
        int rc;
};

#define OAI_CHUNK(delta, fr)                                                                                     \
        "data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1694268190,\"model\":"  \
        "\"gpt-4o-mini\",\"system_fingerprint\":\"fp_44709d6fcb\",\"choices\":[{\"index\":0,\"delta\":" delta     \
        ",\"logprobs\":null,\"finish_reason\":" fr "}]}\n\n"
#define LCPP_CHUNK(delta, fr)                                                                                   \
        "data: {\"choices\":[{\"finish_reason\":" fr ",\"index\":0,\"delta\":" delta "}],\"created\":1735000000,"  \
        "\"id\":\"chatcmpl-Wq\",\"model\":\"gpt-3.5-turbo\",\"system_fingerprint\":\"b4361-d79d8f39\",\"object\":"   \
        "\"chat.completion.chunk\"}\n\n"
#define OLLAMA_CHUNK(delta, fr)                                                                                 \
        "data: {\"id\":\"chatcmpl-704\",\"object\":\"chat.completion.chunk\",\"created\":1733000000,\"model\":"    \
        "\"qwen2.5-coder:7b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":" delta      \
        ",\"finish_reason\":" fr "}]}\n\n"
#define VLLM_CHUNK(delta, fr)                                                                                   \
        "data: {\"id\":\"chatcmpl-8f\",\"object\":\"chat.completion.chunk\",\"created\":1735000000,\"model\":"      \
        "\"Qwen/Qwen2.5-7B-Instruct\",\"choices\":[{\"index\":0,\"delta\":" delta ",\"logprobs\":null,"              \
        "\"finish_reason\":" fr ",\"stop_reason\":null}]}\n\n"

static const struct stream_case stream_cases[] = {
        { { "OpenAI: a role chunk, deltas, a finish_reason chunk, the usage chunk, [DONE]",
            OAI_CHUNK("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}", "null")
            OAI_CHUNK("{\"content\":\"Thought: x\\n<co\"}", "null") OAI_CHUNK("{\"content\":\"de>\\nprint(1)\\n\"}", "null")
            OAI_CHUNK("{}", "\"stop\"")
            "data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1694268190,\"model\":"
            "\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":12,\"total_tokens\":21}}\n\n"
            "data: [DONE]\n\n",
            "Thought: x\n<code>\nprint(1)\n", "stop", NULL, NULL }, 0 },
        { { "OpenAI calling a function, streamed",
            OAI_CHUNK("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":"
                      "\"function\",\"function\":{\"name\":\"python\",\"arguments\":\"\"}}],\"refusal\":null}", "null")
            OAI_CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"code\\\"\"}}]}", "null")
            OAI_CHUNK("{}", "\"tool_calls\"") "data: [DONE]\n\n",
            "", "tool_calls", NULL, "python" }, 0 },
        { { "llama.cpp: content null in the role chunk, timings at the end, data:[DONE]",
            LCPP_CHUNK("{\"role\":\"assistant\",\"content\":null}", "null") LCPP_CHUNK("{\"content\":\"```py\\n\"}", "null")
            LCPP_CHUNK("{\"content\":\"print(1)\\n```\"}", "null") LCPP_CHUNK("{}", "\"stop\"")
            "data: {\"choices\":[],\"created\":1735000000,\"id\":\"chatcmpl-Wq\",\"model\":\"gpt-3.5-turbo\",\"object\":"
            "\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":8,\"prompt_tokens\":20,\"total_tokens\":28},"
            "\"timings\":{\"prompt_n\":20,\"prompt_ms\":12.3,\"predicted_n\":8,\"predicted_ms\":80.1}}\n\n"
            "data: [DONE]\n\n",
            "```py\nprint(1)\n```", "stop", NULL, NULL }, 0 },
        { { "Ollama: \\u003c escapes, no space after data:, CRLF",
            "data:{\"id\":\"chatcmpl-704\",\"object\":\"chat.completion.chunk\",\"created\":1733000000,\"model\":\"q\","
            "\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":"
            "\"\\u003ccode\\u003e\\n\"},\"finish_reason\":null}]}\r\n\r\n"
            OLLAMA_CHUNK("{\"role\":\"assistant\",\"content\":\"print(1)\\n\\u003c/code\\u003e\"}", "null")
            OLLAMA_CHUNK("{\"role\":\"assistant\",\"content\":\"\"}", "\"stop\"") "data: [DONE]\n\n",
            "<code>\nprint(1)\n</code>", "stop", NULL, NULL }, 0 },
        { { "vLLM with reasoning_content deltas, stop_reason null",
            VLLM_CHUNK("{\"role\":\"assistant\",\"content\":\"\"}", "null")
            VLLM_CHUNK("{\"reasoning_content\":\"Let me\"}", "null") VLLM_CHUNK("{\"reasoning_content\":\" think.\"}", "null")
            VLLM_CHUNK("{\"content\":\"x = 1\"}", "null") VLLM_CHUNK("{\"content\":\"\"}", "\"stop\"") "data: [DONE]\n\n",
            "x = 1", "stop", "Let me think.", NULL }, 0 },
        { { "a gateway: comments, event and id fields, a data split over two lines, no [DONE]",
            ": OPENROUTER PROCESSING\n\n" "event: message\nid: 1\nretry: 100\n"
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\n" "data: \"finish_reason\":null}]}\n\n"
            ": keep-alive\r" "data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\r\r",
            "ab", "stop", NULL, NULL }, 0 },
        { { "a second choice is not the reply",
            "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"no\"}},{\"index\":0,\"delta\":{\"content\":\"yes\"},"
            "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
            "yes", "stop", NULL, NULL }, 0 },
        { { "an error in the stream", "data: {\"error\":{\"message\":\"upstream overloaded\",\"code\":503}}\n\n",
            NULL, "the model server answered with an error: upstream overloaded", NULL, NULL }, -EBADMSG },
        { { "a data line that is not JSON", OAI_CHUNK("{\"content\":\"a\"}", "null") "data: {oops}\n\n", NULL,
            "the model server's reply is not valid JSON: string or '}' expected near 'oops' (at byte 5)", NULL, NULL },
          -EBADMSG },
        { { "duplicate keys in a chunk", "data: {\"choices\":[],\"choices\":[]}\n\n", NULL,
            "the model server's reply is not valid JSON: duplicate object key near '\"choices\"' (at byte 23)", NULL, NULL },
          -EBADMSG },
        { { "content that is not a string", "data: {\"choices\":[{\"delta\":{\"content\":7}}]}\n\n", NULL,
            "the model server's reply has no message content", NULL, NULL }, -EBADMSG },
        { { "a stream cut before it ends", OAI_CHUNK("{\"content\":\"a\"}", "null") OAI_CHUNK("{\"content\":\"b\"}", "null"),
            NULL, "", NULL, NULL }, -EPIPE },
        { { "the last event without its blank line is not dispatched",
            OAI_CHUNK("{\"content\":\"a\"}", "null") "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n",
            NULL, "", NULL, NULL }, -EPIPE },
        { { "[DONE] alone: no choices", "data: [DONE]\n\n", NULL, "the model server's reply has no choices", NULL, NULL },
          -EBADMSG },
};

/* Fed whole, byte by byte, and in chunks of 7: the same reply, whichever way it was split. */
static void test_stream_dialect(void **state)
{
        const struct stream_case *c = *state;
        size_t len = strlen(c->want.body);
        static const size_t steps[] = { 0, 1, 7 };
        for (size_t k = 0; k < ELEMENTSOF(steps); k++) {
                size_t step = steps[k] ? steps[k] : len;
                struct bro_model_stream st;
                bro_model_stream_init(&st, TEST_KEY);
                int rc = 0;
                for (size_t i = 0; i < len && rc == 0; i += step) {
                        size_t n = len - i < step ? len - i : step;
                        _cleanup_free_ char *piece = malloc(n); /* exactly n bytes: nothing read past them */
                        memcpy(piece, c->want.body + i, n);
                        rc = bro_model_stream_feed(&st, piece, n);
                }
                struct bro_model_parsed p;
                char why[512] = "unset";
                int end = bro_model_stream_end(&st, &p, why, sizeof(why));
                if (end != c->rc)
                        fail_msg("%s (in pieces of %zu): %d (%s), expected %d", c->want.what, step, end, why, c->rc);
                if (c->want.content) {
                        check_parsed(c->want.what, &p, &c->want);
                        bro_model_parsed_free(&p);
                } else if (strcmp(why, c->want.finish_reason) != 0)
                        fail_msg("%s:\n  got      '%s'\n  expected '%s'", c->want.what, why, c->want.finish_reason);
                bro_model_stream_free(&st);
        }
}

/* The reply grows as the stream comes: what a follower sees before the end. */
static void test_stream_grows(void **state)
{
        (void)state;
        struct bro_model_stream st;
        bro_model_stream_init(&st, NULL);
        static const char a[] = OAI_CHUNK("{\"content\":\"print(\"}", "null") "data: {\"choices\":[{\"delta\":{\"cont";
        static const char b[] = "ent\":\"1)\"}}]}\n\n" OAI_CHUNK("{}", "\"stop\"") "data: [DONE]\n\n";
        assert_int_equal(bro_model_stream_feed(&st, a, sizeof(a) - 1), 0);
        assert_string_equal(st.content, "print(");
        assert_false(st.done);
        assert_int_equal(bro_model_stream_feed(&st, b, sizeof(b) - 1), 0);
        assert_string_equal(st.content, "print(1)");
        assert_true(st.done);
        /* after an error, every feed returns it */
        bro_model_stream_free(&st);
        bro_model_stream_init(&st, NULL);
        assert_int_equal(bro_model_stream_feed(&st, "data: x\n\n", 9), -EBADMSG);
        assert_int_equal(bro_model_stream_feed(&st, "data: [DONE]\n\n", 14), -EBADMSG);
        bro_model_stream_free(&st);
        /* a long stream of tiny deltas stays linear */
        bro_model_stream_init(&st, NULL);
        static const char tiny[] = "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n";
        for (int i = 0; i < 100000; i++)
                assert_int_equal(bro_model_stream_feed(&st, tiny, sizeof(tiny) - 1), 0);
        assert_int_equal(st.content_len, 100000);
        bro_model_stream_free(&st);
}

/* ---- the server's message ---- */

struct msg_case {
        const char *what;
        const char *body;
        const char *want; /* NULL: none found */
};

static const struct msg_case msg_cases[] = {
        { "OpenAI", "{\"error\":{\"message\":\"The model `gpt-9` does not exist\",\"type\":\"invalid_request_error\"}}",
          "The model `gpt-9` does not exist" },
        { "Ollama", "{\"error\":\"model \\\"llama9\\\" not found, try pulling it first\"}",
          "model \"llama9\" not found, try pulling it first" },
        { "message", "{\"message\":\"Internal Server Error\"}", "Internal Server Error" },
        { "FastAPI detail", "{\"detail\":\"Not Found\"}", "Not Found" },
        { "FastAPI validation", "{\"detail\":[{\"loc\":[\"body\"],\"msg\":\"field required\"}]}", "field required" },
        { "error.message wins", "{\"message\":\"b\",\"error\":{\"message\":\"a\"}}", "a" },
        { "plain text: the first line", "Bad Gateway\nmore\n", "Bad Gateway" },
        { "plain text after blank lines", "\r\n\n   upstream connect error  \r\nx", "upstream connect error" },
        { "controls, tabs and newlines fold", "{\"error\":\"a\\u0000b\\t\\tc\\r\\n\\u001b[31md\\u007f\"}", "a b c [31md" },
        { "bidi and invisible marks fold", "{\"error\":\"abc\\u202edef\\u2066g\\u200bh\\ufeffi\\u2028j\"}",
          "abc def g h i j" },
        { "C1 controls fold", "x\xC2\x85y\xC2\x9Bz", "x y z" },
        { "invalid UTF-8 in text becomes U+FFFD", "bad \xFF\xFE bytes", "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes" },
        { "a JSON body with no message", "{\"choices\":[]}", NULL },
        { "an empty message", "{\"error\":{\"message\":\"\"}}", NULL },
        { "a message of blanks", "{\"error\":\"\\n \\t\"}", NULL },
        { "an empty body", "", NULL },
        { "blank lines only", "\n\r\n  \n", NULL },
        { "the key, whole", "{\"error\":{\"message\":\"Incorrect API key provided: sk-test-SECRET-0123456789.\"}}",
          "Incorrect API key provided: [redacted]." },
        { "the key, masked as OpenAI does", "{\"error\":{\"message\":\"Incorrect API key provided: sk-test-****6789. See x\"}}",
          "Incorrect API key provided: [redacted]****6789. See x" },
        { "the key's tail", "{\"error\":\"key ...T-0123456789 refused\"}", "key ...[redacted] refused" },
        { "5 bytes of it are not the key", "{\"error\":\"row 12345 failed\"}", "row 12345 failed" },
        /* error bodies as servers send them: error.code a string, an integer, null */
        { "OpenAI: code a string", "{\n  \"error\": {\n    \"message\": \"Incorrect API key provided.\",\n    \"type\": "
          "\"invalid_request_error\",\n    \"param\": null,\n    \"code\": \"invalid_api_key\"\n  }\n}\n",
          "Incorrect API key provided." },
        { "llama.cpp: code an integer first", "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size\","
          "\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":9000,\"n_ctx\":4096}}",
          "the request exceeds the available context size" },
        { "vLLM: top-level, code an integer", "{\"object\":\"error\",\"message\":\"The model `x` does not exist.\","
          "\"type\":\"NotFoundError\",\"param\":null,\"code\":404}", "The model `x` does not exist." },
        { "a gateway: code null", "{\"error\":{\"message\":\"Provider returned error\",\"type\":null,\"param\":null,\"code\":null}}",
          "Provider returned error" },
        { "the key in a text body", "Unauthorized: Bearer sk-test-SECRET-0123456789\n", "Unauthorized: Bearer [redacted]" },
};

static void test_server_message(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(msg_cases); i++) {
                const struct msg_case *c = &msg_cases[i];
                char out[BRO_MODEL_SERVER_MSG_MAX + 8] = "unset";
                bool found = bro_model_server_message(c->body, strlen(c->body), TEST_KEY, out, sizeof(out));
                if (found != (c->want != NULL))
                        fail_msg("%s: found %d ('%s')", c->what, found, out);
                if (strcmp(out, c->want ? c->want : "") != 0)
                        fail_msg("%s:\n  got      '%s'\n  expected '%s'", c->what, out, c->want ? c->want : "");
        }
}

static void test_server_message_bounds(void **state)
{
        (void)state;
        char out[BRO_MODEL_SERVER_MSG_MAX + 8];
        /* A long message is cut at 200 bytes, marked. */
        char body[2048];
        int k = sprintf(body, "{\"error\":\"");
        memset(body + k, 'a', 1000);
        strcpy(body + k + 1000, "\"}");
        assert_true(bro_model_server_message(body, strlen(body), NULL, out, sizeof(out)));
        assert_int_equal(strlen(out), BRO_MODEL_SERVER_MSG_MAX + 3);
        assert_string_equal(out + BRO_MODEL_SERVER_MSG_MAX, "...");
        /* ...on a character boundary: 2-byte characters from an odd offset. */
        k = sprintf(body, "{\"error\":\"a");
        for (int i = 0; i < 300; i++)
                k += sprintf(body + k, "\xC3\xA9");
        strcpy(body + k, "\"}");
        assert_true(bro_model_server_message(body, strlen(body), NULL, out, sizeof(out)));
        assert_true(strlen(out) <= BRO_MODEL_SERVER_MSG_MAX + 3);
        assert_true(utf8_valid((const uint8_t *)out, strlen(out)));
        assert_int_equal(strlen(out), 1 + 2 * 99 + 3);
        /* A plain-text body of 8 MiB without a newline: bounded work, bounded output. */
        size_t n = BRO_MODEL_BODY_MAX;
        _cleanup_free_ char *huge = malloc(n);
        memset(huge, 'z', n);
        assert_true(bro_model_server_message(huge, n, TEST_KEY, out, sizeof(out)));
        assert_int_equal(strlen(out), BRO_MODEL_SERVER_MSG_MAX + 3);
        /* A small buffer. */
        char tiny[8];
        assert_true(bro_model_server_message("hello world", 11, NULL, tiny, sizeof(tiny)));
        assert_string_equal(tiny, "hell...");
        /* The key never comes out, whatever is around it and however it is cut. */
        for (int off = 0; off < 30; off++) {
                char b[512];
                int m = snprintf(b, sizeof(b), "{\"error\":\"%.*s%s%s\"}", off, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                                 TEST_KEY + (off % 10), " tail");
                assert_true(bro_model_server_message(b, (size_t)m, TEST_KEY, out, sizeof(out)));
                assert_null(strstr(out, "SECRET"));
                assert_null(strstr(out, "0123456789"));
        }
}

/* ---- printable ---- */

static void test_printable(void **state)
{
        (void)state;
        char out[64];
        bro_model_printable("  lead and trail  ", 18, out, sizeof(out), 60);
        assert_string_equal(out, "lead and trail");
        bro_model_printable("a\0b", 3, out, sizeof(out), 60); /* NUL is a control like any other */
        assert_string_equal(out, "a b");
        bro_model_printable("abcdef", 6, out, sizeof(out), 3);
        assert_string_equal(out, "abc...");
        bro_model_printable("abc", 3, out, sizeof(out), 3); /* exactly max: no mark */
        assert_string_equal(out, "abc");
        bro_model_printable("abcdef", 6, out, 5, 60); /* the buffer bounds it too */
        assert_string_equal(out, "a...");
        bro_model_printable("\xE2\x9C\x93\xE2\x9C\x93", 6, out, sizeof(out), 4); /* never half a character */
        assert_string_equal(out, "\xE2\x9C\x93...");
        bro_model_printable("", 0, out, sizeof(out), 60);
        assert_string_equal(out, "");
        bro_model_printable("x", 1, out, 1, 60);
        assert_string_equal(out, "");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_retry_after),
                cmocka_unit_test(test_backoff),
                cmocka_unit_test(test_parse_reply),
                cmocka_unit_test(test_parse_reply_bounds),
                cmocka_unit_test(test_server_message),
                cmocka_unit_test(test_server_message_bounds),
                cmocka_unit_test(test_printable),
        };
        int failed = cmocka_run_group_tests_name("model", tests, NULL, NULL);
        /* replies and streams as real servers send them (issue 14): one test a case */
        struct CMUnitTest dialects[ELEMENTSOF(dialect_cases) + ELEMENTSOF(stream_cases) + 1];
        size_t n = 0;
        for (size_t i = 0; i < ELEMENTSOF(dialect_cases); i++)
                dialects[n++] = (struct CMUnitTest){ dialect_cases[i].what, test_parse_dialect, NULL, NULL,
                                                     (void *)&dialect_cases[i] };
        for (size_t i = 0; i < ELEMENTSOF(stream_cases); i++)
                dialects[n++] = (struct CMUnitTest){ stream_cases[i].want.what, test_stream_dialect, NULL, NULL,
                                                     (void *)&stream_cases[i] };
        dialects[n++] = (struct CMUnitTest){ "the reply grows as the stream comes", test_stream_grows, NULL, NULL, NULL };
        failed += _cmocka_run_group_tests("model dialects", dialects, n, NULL, NULL);
        return failed;
}
