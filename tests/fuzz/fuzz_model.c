/* libFuzzer target for the model client's decoders (`make fuzz-model`): broker/model_parse.c
 * reads what a model server sent. The first input byte picks the decoder (the reply's JSON,
 * the server's error message, Retry-After, a stream of server-sent events fed in pieces whose
 * size the second byte picks); the rest is the input. Whatever comes out must be
 * valid UTF-8 without control bytes, within its bounds, and hold no 6 bytes of the key; a
 * reply that decodes has its content, one that does not says why.
 *
 * Built with -DFUZZ_SEEDS instead, this file is a small program that writes a seed corpus. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/model.h"
#include "lib/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_SEEDS

static const char KEY[] = "sk-fuzz-KEY-0123456789";

static void check_text(const char *s, size_t max)
{
        size_t n = strlen(s);
        if (n > max || !utf8_valid((const uint8_t *)s, n))
                abort();
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7F)
                        abort();
        for (size_t k = 0; k + 6 <= sizeof(KEY) - 1; k++)
                if (memmem(s, n, &KEY[k], 6))
                        abort(); /* a piece of the key got through */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        const char *in = (const char *)data + 1;
        size_t len = size - 1;
        switch (data[0] % 4) {
        case 0: {
                struct bro_model_parsed p;
                char why[512] = "";
                int r = bro_model_parse_reply(in, len, KEY, &p, why, sizeof(why));
                if (r == 0) {
                        if (!p.content || !p.finish_reason || strlen(p.content) != p.content_len)
                                abort();
                        check_text(p.finish_reason, 35);
                        bro_model_parsed_free(&p);
                } else {
                        if (!why[0] || p.content || p.finish_reason)
                                abort();
                        check_text(why, sizeof(why) - 1);
                }
                break;
        }
        case 1: {
                char out[BRO_MODEL_SERVER_MSG_MAX + 8];
                bool found = bro_model_server_message(in, len, KEY, out, sizeof(out));
                if (found != (out[0] != 0))
                        abort();
                check_text(out, BRO_MODEL_SERVER_MSG_MAX + 3);
                break;
        }
        case 3: {
                if (len < 1)
                        break;
                size_t step = (size_t)(unsigned char)in[0] + 1;
                in++, len--;
                struct bro_model_stream st;
                bro_model_stream_init(&st, KEY);
                for (size_t i = 0; i < len; i += step) {
                        size_t before = st.content_len;
                        int r = bro_model_stream_feed(&st, in + i, len - i < step ? len - i : step);
                        if (r < 0 && r != -EBADMSG)
                                abort();
                        if (st.content_len < before || (st.content && strlen(st.content) != st.content_len) ||
                            (st.content && !utf8_valid((const uint8_t *)st.content, st.content_len)))
                                abort(); /* the reply only grows, valid UTF-8 without NUL */
                        if (r < 0)
                                break;
                }
                struct bro_model_parsed p;
                char why[512] = "";
                int r = bro_model_stream_end(&st, &p, why, sizeof(why));
                if (r == 0) {
                        if (!p.content || !p.finish_reason || strlen(p.content) != p.content_len)
                                abort();
                        check_text(p.finish_reason, 35);
                        if (p.tool_calls)
                                check_text(p.tool_calls, BRO_MODEL_TOOLS_MAX);
                        bro_model_parsed_free(&p);
                } else if (r == -EBADMSG) {
                        if (!why[0] || p.content)
                                abort();
                        check_text(why, sizeof(why) - 1);
                } else if (r != -EPIPE)
                        abort();
                bro_model_stream_free(&st);
                break;
        }
        default: {
                uint64_t ms = 0;
                if (bro_model_retry_after(in, len, 784111767, &ms) == 0 && ms > BRO_MODEL_RETRY_AFTER_MAX_MS)
                        abort();
        }
        }
        return 0;
}

#else

static const struct {
        int kind;
        const char *text;
} seeds[] = {
        { 0, "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"print(1)\"},"
             "\"finish_reason\":\"stop\"}]}" },
        { 0, "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[]},\"finish_reason\":\"tool_calls\"}]}" },
        { 0, "{\"error\":{\"message\":\"bad key sk-fuzz-KEY-0123456789\"}}" },
        { 0, "<html>502</html>" },
        { 1, "{\"error\":{\"message\":\"The model `x` does not exist\",\"type\":\"invalid_request_error\"}}" },
        { 1, "{\"error\":\"model \\\"llama\\\" not found\"}" },
        { 1, "{\"detail\":[{\"msg\":\"field required\"}]}" },
        { 1, "Bad Gateway\r\n<html>" },
        { 3, "\x06" "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n"
             "data:{\"choices\":[{\"delta\":{\"content\":\"\\u003ccode\",\"reasoning_content\":\"hm\"}}]}\r\n\r\n"
             ": keep-alive\r\revent: x\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"py\"}}]},"
             "\n\ndata: \"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{}}\n\ndata: [DONE]\n\n" },
        { 3, "\x01" "data: {\"error\":{\"message\":\"sk-fuzz-KEY-0123456789 overloaded\",\"code\":null}}\n\n" },
        { 2, "1" },
        { 2, "Sun, 06 Nov 1994 08:49:37 GMT" },
        { 2, "Sunday, 06-Nov-94 08:49:37 GMT" },
        { 2, "Sun Nov  6 08:49:37 1994" },
};

int main(int argc, char **argv)
{
        const char *dir = argc > 1 ? argv[1] : "seeds";
        char path[4096];
        snprintf(path, sizeof(path), "mkdir -p '%s'", dir);
        if (system(path) != 0)
                return 1;
        for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
                snprintf(path, sizeof(path), "%s/seed-%02zu", dir, i);
                FILE *f = fopen(path, "wb");
                if (!f)
                        return 1;
                fputc(seeds[i].kind, f);
                fputs(seeds[i].text, f);
                fclose(f);
        }
        return 0;
}

#endif
