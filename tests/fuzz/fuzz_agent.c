/* libFuzzer target for the agent's pure pieces (`make fuzz-agent`): broker/reply.c and
 * broker/prompt.c read what a model wrote and what a tool printed. The first input byte
 * picks the function, the next two a max_len where one is taken; the rest is the text.
 *   0  bro_reply_parse: code is valid UTF-8 without NUL, ends in LF, fits PROTO_SOURCE_MAX;
 *      no code always says why; the no-code observation fits its max_len
 *   1  bro_caps_declared: 0, 1, -EINVAL or -E2BIG; names plain, bounded, unique, few
 *   2  bro_observation with the text as stdout, stderr, traceback, a refusal, a name
 *   3  bro_system_prompt with the text as task, column name, dtype, first rows
 * Everything produced: valid UTF-8, within max_len.
 *
 * Built with -DFUZZ_SEEDS instead, this file writes a seed corpus of replies. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/utf8.h"
#include "broker/reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_SEEDS

static void check_text(const char *s, size_t max)
{
        if (!s)
                abort();
        size_t n = strlen(s);
        if (n > max || !utf8_valid((const uint8_t *)s, n))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 3)
                return 0;
        int which = data[0] % 4;
        size_t max = ((size_t)data[1] << 8 | data[2]) * 4;
        const char *text = (const char *)data + 3;
        size_t len = size - 3;
        /* the text as a C string, for the functions that take one (a NUL ends it there) */
        char *str = malloc(len + 1);
        if (!str)
                return 0;
        memcpy(str, text, len);
        str[len] = 0;

        if (which == 0) {
                struct bro_reply r;
                if (bro_reply_parse(text, len, &r) != 0)
                        abort();
                if (r.kind == BRO_REPLY_CODE) {
                        size_t n = r.code ? strlen(r.code) : 0;
                        if (!r.code || r.why || n == 0 || n > PROTO_SOURCE_MAX || r.code[n - 1] != '\n' ||
                            !utf8_valid((const uint8_t *)r.code, n) || memchr(text, 0, len) || r.blocks == 0)
                                abort();
                } else if (r.code || !r.why || !r.why[0])
                        abort();
                char *o = bro_observation_no_code(&r, max);
                check_text(o, max);
                free(o);
                bro_reply_free(&r);
        } else if (which == 1) {
                struct proto_strv v = { 0 };
                int k = bro_caps_declared(text, len, &v);
                if (k != 0 && k != 1 && k != -EINVAL && k != -E2BIG)
                        abort();
                if ((k != 1 && v.n) || v.n > PROTO_CAPS_MAX)
                        abort();
                for (size_t i = 0; i < v.n; i++) {
                        size_t n = strlen(v.items[i]);
                        if (n == 0 || n > BRO_CAP_NAME_MAX || strspn(v.items[i], "abcdefghijklmnopqrstuvwxyz"
                                                                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n)
                                abort();
                        for (size_t j = 0; j < i; j++)
                                if (strcmp(v.items[i], v.items[j]) == 0)
                                        abort();
                }
                proto_strv_free(&v);
        } else if (which == 2) {
                struct bro_obs_refusal ref = { str, str, (long long)len };
                const char *names[2] = { str, str };
                struct bro_obs_run run = { .status = len & 1 ? "error" : str, .has_exit_code = true, .exit_code = 1,
                                           .signal = len & 2 ? str : NULL, .killed = len & 4 ? str : NULL,
                                           .out = str, .out_truncated = true, .out_bytes = len, .err = str,
                                           .traceback = str + len / 2, .refusals = &ref, .n_refusals = 1,
                                           .notes = names, .n_notes = 2, .kept = names, .n_kept = 2,
                                           .dropped = names, .n_dropped = 1 };
                char *o = bro_observation(&run, max);
                check_text(o, max);
                free(o);
        } else {
                struct bro_prompt_column col = { str, str + len / 2 };
                struct bro_prompt_input in = { str, true, len, &col, 1, str, len };
                const char *roots[] = { str };
                struct bro_prompt_in p = { .task = str, .inputs = &in, .n_inputs = 1, .inputs_dir = str,
                                           .read_roots = roots, .n_read_roots = 1, .write_roots = roots,
                                           .n_write_roots = 1, .caps_approved = roots, .n_caps_approved = 1 };
                char *o = bro_system_prompt(&p, max + 8000);
                if (o)
                        check_text(o, max + 8000);
                else if (errno != E2BIG)
                        abort();
                free(o);
        }
        free(str);
        return 0;
}

#else

static const struct {
        int which;
        const char *text;
} seeds[] = {
        { 0, "Thought: read it.\nCode:\n```py\nimport pandas as pd\nprint(1)\n```<end_code>\n" },
        { 0, "Thought: x\n<code>\ns = '''\n</code>\n'''\nprint(s)\n</code>\n" },
        { 0, "```py\nr = \"\"\"\n```\n\"\"\"\n```\n```\nout\n```\n```bash\nls\n```" },
        { 0, "{\"name\": \"python\", \"arguments\": {\"code\": \"print(1)\"}}" },
        { 0, "   ```python3\r\n   x = 1\r\n   ```\r\n<tool_call>" },
        { 1, "{\"capabilitiesRequested\": [\"network\", \"gpu\"]}\n```json\n{\"capabilitiesRequested\": []}\n```" },
        /* the dialects of issue 14: <think>, stop lines, <code> beside fences, a cut </code>,
         * declarations over several lines and inline */
        { 0, "<think>\n```py\ndraft()\n```\n</think>```py\nprint(1)\n``` done\nObservation: 1\n```py\nx\n```" },
        { 0, "Example:\n```ipython\nex()\n```\n<code>\na = 1\n</code>\nCalling tools:\n<code>\nprint(a)\n</co" },
        { 0, "<think>never closed\n<code>\nprint(1)\n" },
        { 1, "I need {\"why\": {\"a\": 1}, \"capabilitiesRequested\": [\"network\"]} now\n```json\n{\n \"capabilitiesRequested\":\n"
             "  [\"gpu\"]\n}\n```\n<think>{\"capabilitiesRequested\": [\"x\"]}</think>\n```py\n{'capabilitiesRequested': 1}\n```" },
        { 2, "line\n\x1b[31m\xff\r\nTraceback (most recent call last):\nKeyError: 'x'\n" },
        { 3, "region\n```\"\\\x01\xC2\x85\xE2\x9C\x93" },
};

int main(int argc, char **argv)
{
        const char *dir = argc > 1 ? argv[1] : "seeds";
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
        if (system(cmd) != 0)
                return 1;
        for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
                char path[4200];
                snprintf(path, sizeof(path), "%s/seed-%zu", dir, i);
                FILE *f = fopen(path, "wb");
                if (!f)
                        return 1;
                unsigned char head[3] = { (unsigned char)seeds[i].which, 0x10, 0x00 };
                fwrite(head, 1, 3, f);
                fwrite(seeds[i].text, 1, strlen(seeds[i].text), f);
                fclose(f);
        }
        return 0;
}

#endif
