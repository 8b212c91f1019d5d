/* The model client's pure parsing (model.h): Retry-After, the reply's JSON, the server's own
 * error message, and the one way untrusted text becomes printable. No I/O, no clock (the
 * caller passes "now"), no allocation beyond the decoded reply: unit-tested in
 * tests/unit/test_model.c.
 *
 * Everything here reads what a model server sent, so nothing is trusted: lengths are given,
 * never found by strlen on the body; JSON is decoded strictly (duplicate keys refused, no
 * trailing data, valid UTF-8, no NUL in strings); what may end up in an error text is cut
 * short and stripped of controls and of the marks that reorder or hide text. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/model.h"
#include "lib/utf8.h"
#include "policy/reasons.h"

/* ---- printable text ---- */

/* Length of the well-formed UTF-8 sequence at p (1..4), or 0. */
static size_t seq_len(const uint8_t *p, size_t left)
{
        size_t n;
        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xC2 && p[0] <= 0xDF)
                n = 2;
        else if (p[0] >= 0xE0 && p[0] <= 0xEF)
                n = 3;
        else if (p[0] >= 0xF0 && p[0] <= 0xF4)
                n = 4;
        else
                return 0;
        return n <= left && utf8_valid(p, n) ? n : 0;
}

static uint32_t decode(const uint8_t *p, size_t n)
{
        switch (n) {
        case 1:
                return p[0];
        case 2:
                return (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
        case 3:
                return (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
        default:
                return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
                       (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
        }
}

/* Characters that would break the line, or change how the rest of it is shown: C0 and C1
 * controls, DEL, zero-width and direction marks, the line and paragraph separators, the
 * bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069), invisible operators
 * and the BOM. They become blanks. */
static bool is_blank(uint32_t c)
{
        return c <= 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x200B && c <= 0x200F) ||
               (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) || c == 0xFEFF;
}

void bro_model_printable(const char *text, size_t len, char *out, size_t size, size_t max)
{
        if (size == 0)
                return;
        size_t limit = size > 4 ? size - 4 : 0; /* room for "..." and the NUL */
        if (max < limit)
                limit = max;
        const uint8_t *p = (const uint8_t *)text;
        size_t o = 0, i = 0;
        bool blank = false, cut = false;
        while (i < len) {
                size_t n = seq_len(p + i, len - i);
                const char *bytes = (const char *)p + i;
                size_t nb = n;
                if (n == 0) { /* an invalid byte: U+FFFD */
                        bytes = "\xEF\xBF\xBD";
                        nb = 3;
                        n = 1;
                } else if (is_blank(decode(p + i, n))) {
                        blank = true;
                        i += n;
                        continue;
                }
                size_t need = nb + (blank && o > 0);
                if (o + need > limit) {
                        cut = true;
                        break;
                }
                if (blank && o > 0)
                        out[o++] = ' ';
                blank = false;
                memcpy(out + o, bytes, nb);
                o += nb;
                i += n;
        }
        if (cut && size >= 4) {
                memcpy(out + o, "...", 3);
                o += 3;
        }
        out[o] = 0;
}

/* ---- keeping the key out ---- */

#define REDACTED "[redacted]"

/* text[0..len) into out (malloc'd, NUL-terminated) with every stretch of at least `min`
 * bytes that also occurs in the key replaced by REDACTED. A server that echoes the key,
 * whole or in part (OpenAI's 401 shows its last characters), does not get it into an error
 * text or a log line. Keys shorter than 3 bytes are not looked for: they would match
 * ordinary words. */
static char *redact(const char *text, size_t len, const char *key, size_t *out_len)
{
        size_t klen = key ? strlen(key) : 0;
        size_t min = klen < 6 ? klen : 6;
        char *out = malloc(len * (sizeof(REDACTED) - 1) + 1); /* at worst every byte */
        if (!out)
                return NULL;
        size_t o = 0, i = 0;
        while (i < len) {
                size_t l = 0;
                if (min >= 3 && len - i >= min && memmem(key, klen, text + i, min)) {
                        l = min;
                        while (i + l < len && l < klen && memmem(key, klen, text + i, l + 1))
                                l++;
                }
                if (l) {
                        memcpy(out + o, REDACTED, sizeof(REDACTED) - 1);
                        o += sizeof(REDACTED) - 1;
                        i += l;
                } else
                        out[o++] = text[i++];
        }
        out[o] = 0;
        *out_len = o;
        return out;
}

/* Untrusted text as it may appear in an error: at most 1 KiB of it looked at, the key kept
 * out, printable, cut at max. */
static void untrusted(const char *text, size_t len, const char *key, char *out, size_t size, size_t max)
{
        if (len > 1024)
                len = 1024;
        size_t rlen;
        char *r = redact(text, len, key, &rlen);
        if (!r) {
                snprintf(out, size, "%s", "?");
                return;
        }
        bro_model_printable(r, rlen, out, size, max);
        free(r);
}

/* ---- Retry-After ---- */

int bro_model_retry_after(const char *value, size_t len, time_t now, uint64_t *ms)
{
        char v[128];
        while (len && (*value == ' ' || *value == '\t'))
                value++, len--;
        while (len && (value[len - 1] == ' ' || value[len - 1] == '\t' || value[len - 1] == '\r' ||
                       value[len - 1] == '\n'))
                len--;
        if (len == 0 || len >= sizeof(v) || memchr(value, 0, len))
                return -EINVAL;
        memcpy(v, value, len);
        v[len] = 0;
        if (strspn(v, "0123456789") == len) { /* delay-seconds: 1*DIGIT, any length */
                uint64_t s = 0;
                for (size_t i = 0; i < len && s <= BRO_MODEL_RETRY_AFTER_MAX_MS / 1000; i++)
                        s = s * 10 + (uint64_t)(v[i] - '0');
                *ms = s * 1000 > BRO_MODEL_RETRY_AFTER_MAX_MS ? BRO_MODEL_RETRY_AFTER_MAX_MS : s * 1000;
                return 0;
        }
        /* HTTP-date: IMF-fixdate, and the two obsolete forms a recipient must accept. The C
         * locale's day and month names (the broker never calls setlocale). */
        static const char *const formats[] = {
                "%a, %d %b %Y %H:%M:%S GMT", /* Sun, 06 Nov 1994 08:49:37 GMT */
                "%A, %d-%b-%y %H:%M:%S GMT", /* Sunday, 06-Nov-94 08:49:37 GMT */
                "%a %b %e %H:%M:%S %Y",      /* Sun Nov  6 08:49:37 1994 */
        };
        for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
                struct tm tm = { 0 };
                const char *end = strptime(v, formats[f], &tm);
                if (!end || *end)
                        continue;
                time_t t = timegm(&tm);
                if (t == (time_t)-1)
                        return -EINVAL;
                if (t <= now)
                        *ms = 0;
                else if ((uint64_t)(t - now) >= BRO_MODEL_RETRY_AFTER_MAX_MS / 1000)
                        *ms = BRO_MODEL_RETRY_AFTER_MAX_MS;
                else
                        *ms = (uint64_t)(t - now) * 1000;
                return 0;
        }
        return -EINVAL;
}

uint64_t bro_model_backoff_ms(unsigned n)
{
        if (n == 0)
                n = 1;
        if (n > 5)
                return 8000;
        return 500ull << (n - 1);
}

/* ---- the reply ---- */

static json_t *load(const char *body, size_t len, size_t flags, json_error_t *jerr)
{
        /* Strict: one object or array, nothing after it, no duplicate keys; jansson refuses
         * invalid UTF-8 and (without JSON_ALLOW_NUL) \u0000 in strings, and bounds nesting. */
        return json_loadb(body, len, JSON_REJECT_DUPLICATES | flags, jerr);
}

/* The string an error object carries as its message, where servers put it. */
static json_t *error_message(json_t *root)
{
        json_t *e = json_object_get(root, "error"), *d = json_object_get(root, "detail");
        json_t *cands[] = {
                json_object_get(e, "message"),                     /* OpenAI, vLLM, llama.cpp */
                e,                                                 /* Ollama */
                json_object_get(root, "message"),
                d,                                                 /* FastAPI */
                json_object_get(json_array_get(d, 0), "msg"),      /* FastAPI's validation */
        };
        for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
                if (json_is_string(cands[i]))
                        return cands[i];
        return NULL;
}

void bro_model_parsed_free(struct bro_model_parsed *p)
{
        free(p->content);
        free(p->finish_reason);
        free(p->reasoning);
        free(p->tool_calls);
        *p = (struct bro_model_parsed){ 0 };
}

/* A tool call's function name added to names (", " between, each made printable, once each,
 * at most BRO_MODEL_TOOLS_MAX bytes in all: a name that does not fit is left out). */
static void add_tool(char *names, size_t size, json_t *call, const char *key)
{
        json_t *name = json_object_get(json_object_get(call, "function"), "name");
        char shown[72];
        if (!json_is_string(name))
                return;
        untrusted(json_string_value(name), json_string_length(name), key, shown, sizeof(shown), 64);
        if (!shown[0])
                return;
        size_t n = strlen(names), k = strlen(shown);
        for (const char *p = names; (p = strstr(p, shown)); p += k)
                if ((p == names || p[-1] == ' ') && (p[k] == ',' || p[k] == 0))
                        return;
        if (n + k + 2 > BRO_MODEL_TOOLS_MAX || n + k + 3 > size)
                return;
        snprintf(names + n, size - n, "%s%s", n ? ", " : "", shown);
}

static void add_tools(char *names, size_t size, json_t *calls, const char *key)
{
        size_t i;
        json_t *call;
        json_array_foreach(calls, i, call) add_tool(names, size, call, key);
}

/* The reasoning a server keeps apart from the content: vLLM's and DeepSeek's
 * reasoning_content, Ollama's and OpenRouter's reasoning. */
static json_t *reasoning_of(json_t *msg)
{
        json_t *r = json_object_get(msg, "reasoning_content");
        return json_is_string(r) ? r : json_object_get(msg, "reasoning");
}

int bro_model_parse_reply(const char *body, size_t len, const char *key, struct bro_model_parsed *out, char *why,
                          size_t why_size)
{
        *out = (struct bro_model_parsed){ 0 };
        json_error_t jerr;
        json_t *root = load(body, len, 0, &jerr);
        if (!root) {
                char text[128];
                untrusted(jerr.text, strnlen(jerr.text, sizeof(jerr.text)), key, text, sizeof(text), 80);
                POL_REASON(why, why_size, MODEL_NOT_JSON, text, jerr.position);
                return -EBADMSG;
        }
        int r = -EBADMSG;
        json_t *choices = json_object_get(root, "choices");
        if (!json_is_array(choices) || json_array_size(choices) == 0) {
                json_t *msg = json_is_object(root) ? error_message(root) : NULL;
                if (msg) {
                        char text[BRO_MODEL_SERVER_MSG_MAX + 8];
                        untrusted(json_string_value(msg), json_string_length(msg), key, text, sizeof(text),
                                  BRO_MODEL_SERVER_MSG_MAX);
                        POL_REASON(why, why_size, MODEL_REPLY_ERROR, text);
                } else
                        POL_REASON(why, why_size, MODEL_NO_CHOICES);
                goto out;
        }
        json_t *choice = json_array_get(choices, 0);
        json_t *message = json_object_get(choice, "message");
        json_t *content = json_object_get(message, "content");
        json_t *calls = json_object_get(message, "tool_calls");
        char tools[BRO_MODEL_TOOLS_MAX + 8] = "";
        if (json_is_array(calls) && json_array_size(calls) > 0) {
                add_tools(tools, sizeof(tools), calls, key);
                if (!tools[0])
                        snprintf(tools, sizeof(tools), "?");
        }
        /* OpenAI's reply when the model calls a function: content null, tool_calls */
        bool only_tools = tools[0] && (json_is_null(content) || !content);
        if (!json_is_string(content) && !only_tools) {
                POL_REASON(why, why_size, MODEL_NO_CONTENT);
                goto out;
        }
        json_t *reasoning = reasoning_of(message);
        if (json_is_string(reasoning) && json_string_length(reasoning) > 0) {
                out->reasoning_len = json_string_length(reasoning);
                out->reasoning = malloc(out->reasoning_len + 1);
                if (out->reasoning)
                        memcpy(out->reasoning, json_string_value(reasoning), out->reasoning_len + 1);
        }
        if (tools[0])
                out->tool_calls = strdup(tools);
        json_t *fr = json_object_get(choice, "finish_reason");
        char finish[40] = "";
        if (json_is_string(fr)) /* logged and passed on: untrusted like an error's text */
                untrusted(json_string_value(fr), json_string_length(fr), key, finish, sizeof(finish), 32);
        out->content_len = only_tools ? 0 : json_string_length(content);
        out->content = malloc(out->content_len + 1);
        out->finish_reason = strdup(finish);
        if (!out->content || !out->finish_reason || (json_is_string(reasoning) && out->reasoning_len && !out->reasoning) ||
            (tools[0] && !out->tool_calls)) {
                bro_model_parsed_free(out);
                snprintf(why, why_size, "%s", strerror(ENOMEM));
                r = -ENOMEM;
                goto out;
        }
        memcpy(out->content, only_tools ? "" : json_string_value(content), out->content_len + 1);
        r = 0;
out:
        json_decref(root);
        return r;
}

bool bro_model_server_message(const char *body, size_t len, const char *key, char *out, size_t size)
{
        if (size)
                out[0] = 0;
        json_error_t jerr;
        /* NUL allowed here: it is only shown, as a blank. */
        json_t *root = load(body, len, JSON_ALLOW_NUL, &jerr);
        if (root) {
                json_t *msg = json_is_object(root) ? error_message(root) : NULL;
                if (msg)
                        untrusted(json_string_value(msg), json_string_length(msg), key, out, size,
                                  BRO_MODEL_SERVER_MSG_MAX);
                json_decref(root);
                return size && out[0];
        }
        /* Not JSON: the first line that has anything on it, as text. */
        size_t i = 0;
        if (len > 4096)
                len = 4096;
        while (i < len && (body[i] == '\n' || body[i] == '\r' || body[i] == ' ' || body[i] == '\t'))
                i++;
        const char *nl = memchr(body + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (body + i)) : len - i;
        untrusted(body + i, n, key, out, size, BRO_MODEL_SERVER_MSG_MAX);
        return size && out[0];
}

/* ---- a streamed reply ---- */

void bro_model_stream_init(struct bro_model_stream *st, const char *key)
{
        *st = (struct bro_model_stream){ .key = key };
}

void bro_model_stream_free(struct bro_model_stream *st)
{
        free(st->line);
        free(st->data);
        free(st->content);
        free(st->reasoning);
        st->line = st->data = st->content = st->reasoning = NULL;
}

/* n bytes appended to *p (kept NUL-terminated), which grows by doubling. */
static int append(char **p, size_t *len, size_t *cap, const char *s, size_t n)
{
        if (*len + n + 1 > *cap) {
                size_t c = *cap ? *cap : 1024;
                while (c < *len + n + 1)
                        c *= 2;
                char *q = realloc(*p, c);
                if (!q)
                        return -ENOMEM;
                *p = q;
                *cap = c;
        }
        memcpy(*p + *len, s, n);
        *len += n;
        (*p)[*len] = 0;
        return 0;
}

static int stream_error(struct bro_model_stream *st, int rc)
{
        st->rc = rc;
        if (rc == -ENOMEM)
                snprintf(st->why, sizeof(st->why), "%s", strerror(ENOMEM));
        return rc;
}

/* choices[0] of a chunk: its delta added to the reply. */
static int stream_choice(struct bro_model_stream *st, json_t *choice)
{
        json_t *delta = json_object_get(choice, "delta");
        json_t *content = json_object_get(delta, "content");
        if (content && !json_is_null(content) && !json_is_string(content)) {
                POL_REASON(st->why, sizeof(st->why), MODEL_NO_CONTENT);
                return stream_error(st, -EBADMSG);
        }
        if (json_is_string(content) &&
            append(&st->content, &st->content_len, &st->content_cap, json_string_value(content),
                   json_string_length(content)) < 0)
                return stream_error(st, -ENOMEM);
        json_t *reasoning = reasoning_of(delta);
        if (json_is_string(reasoning) &&
            append(&st->reasoning, &st->reasoning_len, &st->reasoning_cap, json_string_value(reasoning),
                   json_string_length(reasoning)) < 0)
                return stream_error(st, -ENOMEM);
        json_t *calls = json_object_get(delta, "tool_calls");
        if (json_is_array(calls))
                add_tools(st->tools, sizeof(st->tools), calls, st->key);
        json_t *fr = json_object_get(choice, "finish_reason");
        if (json_is_string(fr)) {
                untrusted(json_string_value(fr), json_string_length(fr), st->key, st->finish_reason,
                          sizeof(st->finish_reason), 32);
                st->finished = true;
        }
        return 0;
}

/* One event's data: [DONE], or a chunk. */
static int stream_event(struct bro_model_stream *st)
{
        if (st->data_len == 6 && memcmp(st->data, "[DONE]", 6) == 0) {
                st->done = true;
                return 0;
        }
        json_error_t jerr;
        json_t *root = load(st->data ? st->data : "", st->data_len, 0, &jerr);
        if (!root) {
                char text[128];
                untrusted(jerr.text, strnlen(jerr.text, sizeof(jerr.text)), st->key, text, sizeof(text), 80);
                POL_REASON(st->why, sizeof(st->why), MODEL_NOT_JSON, text, jerr.position);
                return stream_error(st, -EBADMSG);
        }
        int rc = 0;
        json_t *choices = json_object_get(root, "choices");
        if (json_is_array(choices)) {
                st->chunks++;
                size_t i;
                json_t *c;
                json_array_foreach(choices, i, c) {
                        json_t *index = json_object_get(c, "index");
                        if (json_is_integer(index) && json_integer_value(index) != 0)
                                continue; /* another choice than the first (n > 1) */
                        rc = stream_choice(st, c);
                        break;
                }
        } else {
                json_t *msg = json_is_object(root) && !choices ? error_message(root) : NULL;
                if (msg || !json_is_object(root) || choices) {
                        char text[BRO_MODEL_SERVER_MSG_MAX + 8];
                        if (msg) {
                                untrusted(json_string_value(msg), json_string_length(msg), st->key, text, sizeof(text),
                                          BRO_MODEL_SERVER_MSG_MAX);
                                POL_REASON(st->why, sizeof(st->why), MODEL_REPLY_ERROR, text);
                        } else
                                POL_REASON(st->why, sizeof(st->why), MODEL_NO_CHOICES);
                        rc = stream_error(st, -EBADMSG);
                }
                /* else an object of some other kind (a keep-alive, a server's own event): ignored */
        }
        json_decref(root);
        return rc;
}

/* One line of the stream, without its end. */
static int stream_line(struct bro_model_stream *st, const char *l, size_t n)
{
        if (n == 0) { /* the event ends */
                int rc = st->has_data ? stream_event(st) : 0;
                st->data_len = 0;
                st->has_data = false;
                return rc;
        }
        if (l[0] == ':')
                return 0; /* a comment: a keep-alive, a gateway's ": PROCESSING" */
        const char *colon = memchr(l, ':', n);
        size_t field = colon ? (size_t)(colon - l) : n;
        if (field != 4 || memcmp(l, "data", 4) != 0)
                return 0; /* event:, id:, retry: and what this reader does not know */
        size_t v = colon ? field + 1 : n;
        if (v < n && l[v] == ' ')
                v++;
        if ((st->has_data && append(&st->data, &st->data_len, &st->data_cap, "\n", 1) < 0) ||
            append(&st->data, &st->data_len, &st->data_cap, l + v, n - v) < 0)
                return stream_error(st, -ENOMEM);
        st->has_data = true;
        return 0;
}

int bro_model_stream_feed(struct bro_model_stream *st, const char *buf, size_t n)
{
        size_t i = 0;
        while (st->rc == 0 && i < n) {
                if (st->cr && buf[i] == '\n') { /* the LF of a CRLF split across two reads */
                        st->cr = false;
                        i++;
                        continue;
                }
                st->cr = false;
                size_t j = i;
                while (j < n && buf[j] != '\n' && buf[j] != '\r')
                        j++;
                if (j > i && append(&st->line, &st->line_len, &st->line_cap, buf + i, j - i) < 0)
                        return stream_error(st, -ENOMEM);
                if (j == n)
                        break;
                st->cr = buf[j] == '\r';
                if (st->cr && j + 1 < n && buf[j + 1] == '\n') {
                        st->cr = false;
                        j++;
                }
                int rc = stream_line(st, st->line ? st->line : "", st->line_len);
                st->line_len = 0;
                if (rc < 0)
                        return rc;
                i = j + 1;
        }
        return st->rc;
}

int bro_model_stream_end(struct bro_model_stream *st, struct bro_model_parsed *out, char *why, size_t why_size)
{
        *out = (struct bro_model_parsed){ 0 };
        if (st->rc < 0) {
                snprintf(why, why_size, "%s", st->why);
                return st->rc == -ENOMEM ? -ENOMEM : -EBADMSG;
        }
        /* an event left without its blank line is not dispatched (the SSE rule) */
        if (!st->done && !st->finished) {
                if (why_size)
                        why[0] = 0;
                return -EPIPE;
        }
        if (st->chunks == 0) {
                POL_REASON(why, why_size, MODEL_NO_CHOICES);
                return -EBADMSG;
        }
        out->content_len = st->content_len;
        out->content = st->content ? st->content : strdup("");
        st->content = NULL;
        out->finish_reason = strdup(st->finish_reason);
        if (st->reasoning_len) {
                out->reasoning = st->reasoning;
                out->reasoning_len = st->reasoning_len;
                st->reasoning = NULL;
        }
        if (st->tools[0])
                out->tool_calls = strdup(st->tools);
        if (!out->content || !out->finish_reason || (st->tools[0] && !out->tool_calls)) {
                bro_model_parsed_free(out);
                snprintf(why, why_size, "%s", strerror(ENOMEM));
                return -ENOMEM;
        }
        return 0;
}
