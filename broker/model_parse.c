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
        p->content = p->finish_reason = NULL;
        p->content_len = 0;
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
        json_t *content = json_object_get(json_object_get(choice, "message"), "content");
        if (!json_is_string(content)) {
                POL_REASON(why, why_size, MODEL_NO_CONTENT);
                goto out;
        }
        json_t *fr = json_object_get(choice, "finish_reason");
        char finish[40] = "";
        if (json_is_string(fr)) /* logged and passed on: untrusted like an error's text */
                untrusted(json_string_value(fr), json_string_length(fr), key, finish, sizeof(finish), 32);
        out->content_len = json_string_length(content);
        out->content = malloc(out->content_len + 1);
        out->finish_reason = strdup(finish);
        if (!out->content || !out->finish_reason) {
                bro_model_parsed_free(out);
                snprintf(why, why_size, "%s", strerror(ENOMEM));
                r = -ENOMEM;
                goto out;
        }
        memcpy(out->content, json_string_value(content), out->content_len + 1);
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
