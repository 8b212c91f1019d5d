/* The model client (DESIGN §8): OpenAI-compatible chat completions over libcurl's multi
 * interface, driven by the broker's libuv loop (model.c). Nothing here blocks or starts a
 * thread of its own; every request ends exactly once, through its done callback.
 *
 * Everything a model server sends is untrusted: the body is bounded (BRO_MODEL_BODY_MAX),
 * decoded strictly with jansson, and whatever of it reaches an error text (the server's own
 * error message) is cut short and made printable UTF-8. The key is sent only as
 * "Authorization: Bearer <key>" and appears in no log line and no error text. Error texts are
 * one line each and come from the reason catalog (policy/reasons.h, POL_MODEL_*). */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "lib/err.h"

struct bro_model_cfg {
        char url[2048];   /* the API base, e.g. http://127.0.0.1:11434/v1 ; "/chat/completions" is appended */
        char model[256];
        char key[4096];   /* "" for none; sent as "Authorization: Bearer <key>"; never logged */
        unsigned timeout_s;   /* per request (default 120) */
        unsigned max_tokens;  /* 0: not sent */
        double temperature;   /* < 0: not sent */
        unsigned retries;     /* on 429/5xx/connection reset, with backoff (default 3) */
};

/* On success content and finish_reason are set and error is NULL. On an error, content and
 * finish_reason are NULL, except for a reply cut at the token limit (finish_reason "length"),
 * which comes with its partial content. attempts and ms are always set. The reply and its
 * strings live only for the duration of the call. */
struct bro_model_reply {
        const char *content;
        const char *finish_reason;
        unsigned attempts;
        uint64_t ms;
        const char *reasoning;  /* the server's separate reasoning, or NULL (never code) */
        const char *tool_calls; /* the functions the model called, printable, or NULL */
        bool streamed;          /* the reply came as server-sent events */
};
typedef void (*bro_model_done_fn)(void *data, const struct bro_model_reply *reply, const char *error);
/* A streamed reply's content as it grows: the bytes added since the last call (valid UTF-8,
 * never a character split, never a stretch of the key: up to its length less one byte is held
 * back until what follows shows it is not the key). Called from inside the transfer: it must
 * not cancel the request nor close the model (it may send, log, queue). */
typedef void (*bro_model_delta_fn)(void *data, const char *text, size_t len);
struct bro_model; /* one per broker: owns the curl multi handle, lives on the loop */

int bro_model_init(struct bro_model **m, uv_loop_t *loop, struct anvil_err *err);
/* Ends every request (done called with error "cancelled", before this returns), closes the
 * handles; the memory goes once the loop has run their close callbacks. May be called from a
 * done callback. */
void bro_model_close(struct bro_model *m);
/* messages: a jansson array of {"role","content"}; borrowed until done is called. Returns a
 * request id > 0, or -errno: -EINVAL when cfg fails bro_model_cfg_check or messages is not a
 * non-empty array of objects each with a string "role", -ESHUTDOWN once the model is
 * closing, -ENOMEM. done is then never called. Otherwise done is called exactly once, from
 * the loop, never from inside bro_model_chat. cfg is copied. */
long bro_model_chat(struct bro_model *m, const struct bro_model_cfg *cfg, json_t *messages, bro_model_done_fn done, void *data);
/* bro_model_chat, with delta called as a streamed reply grows (NULL: not told). Every request
 * asks for "stream": true; a server that answers with a whole JSON body is read as before, and
 * one that refuses streaming (a 400 or 422 whose message names "stream") is asked again at
 * once without it, and from then on this model asks that URL without it. */
long bro_model_chat_stream(struct bro_model *m, const struct bro_model_cfg *cfg, json_t *messages, bro_model_done_fn done,
                           bro_model_delta_fn delta, void *data);
/* done is then called with error "cancelled", before this returns. An id that has ended (or
 * never was) is ignored. */
void bro_model_cancel(struct bro_model *m, long id);

/* ---- settings ---- */

#define BRO_MODEL_TIMEOUT_DEFAULT 120
#define BRO_MODEL_TIMEOUT_MAX 3600
#define BRO_MODEL_RETRIES_DEFAULT 3
#define BRO_MODEL_RETRIES_MAX 10
#define BRO_MODEL_MAX_TOKENS_MAX 1000000
#define BRO_MODEL_TEMPERATURE_MAX 2.0

/* The defaults: no URL, no model, no key, 120 s, max_tokens and temperature not sent, 3 retries. */
void bro_model_cfg_default(struct bro_model_cfg *cfg);
/* Whether cfg can be used for a request: an http(s) URL with a host and without credentials,
 * query or fragment (the key goes in key); a model name; a key of visible ASCII; each number
 * in its range. The message names the setting by its option (--model-url...). The URL's
 * trailing '/'s are not an error: bro_model_chat drops them before appending. */
int bro_model_cfg_check(const struct bro_model_cfg *cfg, struct anvil_err *err);
/* Reads a key file into key[size]: a regular file owned by the caller's effective uid and
 * not open to group or others, its content one line (one trailing newline stripped), at
 * most size - 1 bytes of visible ASCII. The message never contains the key. */
int bro_model_read_key_file(const char *path, char *key, size_t size, struct anvil_err *err);
/* Checks a key's bytes: non-empty, visible ASCII only (no space, no control: it goes in a
 * header line). */
int bro_model_key_check(const char *key, struct anvil_err *err);
/* The URL's host (printable, cut to host_size) and port (the scheme's default if none is
 * given), or why it is not one a request may go to. host and port may be NULL. */
int bro_model_url_parts(const char *url, char *host, size_t host_size, char *port, size_t port_size,
                        struct anvil_err *err);

/* ---- pure parsing (model_parse.c), exposed for the unit tests ---- */

#define BRO_MODEL_BODY_MAX (8u << 20)          /* a reply's body; the transfer is aborted beyond */
#define BRO_MODEL_HEADERS_MAX (64u << 10)      /* a reply's header lines, all together */
#define BRO_MODEL_SERVER_MSG_MAX 200           /* bytes of the server's own error message kept */
#define BRO_MODEL_RETRY_AFTER_MAX_MS 30000     /* Retry-After is honoured up to this */

/* Retry-After's value (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, taken relative to
 * now; surrounding blanks allowed. Into *ms, capped at BRO_MODEL_RETRY_AFTER_MAX_MS; a date
 * in the past is 0. Returns 0, or -EINVAL for anything else (the header is then ignored). */
int bro_model_retry_after(const char *value, size_t len, time_t now, uint64_t *ms);

/* The backoff before retry number n (1 for the first retry), when the server gave no
 * Retry-After: 500 ms doubled each time, at most 8 s. */
uint64_t bro_model_backoff_ms(unsigned n);

/* A successful reply's body, decoded strictly: an object with a non-empty "choices" array
 * whose first element has a "message" object with a string "content"; finish_reason (a
 * string, or absent/null) is kept, made printable and cut short. On success content and
 * finish_reason are malloc'd (finish_reason "" when absent) and 0 is returned; otherwise
 * -EBADMSG with the error text (from the catalog) in why, which never contains 6 or more
 * bytes of key (see bro_model_server_message). A body without choices but with an error
 * message (some servers answer 200 with one) says so with the server's message. */
struct bro_model_parsed {
        char *content;
        size_t content_len;
        char *finish_reason;
        /* NULL when absent: the server's separate reasoning (message.reasoning_content, or
         * .reasoning), kept for the trace and never run; the functions of the message's
         * tool_calls, their names made printable and joined by ", " (at most
         * BRO_MODEL_TOOLS_MAX bytes). A message whose content is null or "" and which calls
         * tools is a reply of content "" with its tool_calls: the caller tells the model. */
        char *reasoning;
        size_t reasoning_len;
        char *tool_calls;
};
#define BRO_MODEL_TOOLS_MAX 200
int bro_model_parse_reply(const char *body, size_t len, const char *key, struct bro_model_parsed *out, char *why,
                          size_t why_size);
void bro_model_parsed_free(struct bro_model_parsed *p);

/* ---- a streamed reply (model_parse.c): server-sent events, fed as they arrive ----
 *
 * What OpenAI, vLLM, llama.cpp and Ollama send for "stream": true: lines ending in LF, CRLF
 * or CR; "data:" with or without a space (several data lines of one event are joined by LF);
 * a comment line (":" first) and other fields (event:, id:, retry:) ignored; a blank line ends
 * an event. An event's data is "[DONE]" or a chunk, decoded as strictly as a whole reply:
 * choices[0].delta's content (a string, null or absent) is appended to the reply, its
 * reasoning_content or reasoning to the reasoning, its tool_calls' function names kept; a
 * finish_reason ends the reply; a chunk with empty choices (the usage chunk) and unknown
 * fields are ignored; a chunk without choices but with an error is the server's error.
 * Everything is bounded by the body's own bound (BRO_MODEL_BODY_MAX, the caller's). */
struct bro_model_stream {
        const char *key; /* kept out of error texts */
        char *line, *data, *content, *reasoning;
        size_t line_len, line_cap, data_len, data_cap, content_len, content_cap, reasoning_len, reasoning_cap;
        bool has_data, cr, done, finished;
        unsigned chunks; /* events with choices */
        char finish_reason[40];
        char tools[BRO_MODEL_TOOLS_MAX + 8];
        int rc; /* 0, or the first error (then why says it) */
        char why[512];
};
void bro_model_stream_init(struct bro_model_stream *st, const char *key);
/* Feeds n more bytes of the body. 0, or -EBADMSG (why set) for an event that is not a chunk,
 * or -ENOMEM; after an error every call returns it. The content grows in st->content
 * (st->content_len bytes, NUL-terminated): a caller that wants the deltas compares
 * content_len before and after. */
int bro_model_stream_feed(struct bro_model_stream *st, const char *buf, size_t n);
/* The body has ended: the reply into out, as bro_model_parse_reply fills it. -EBADMSG with
 * why on an error; -EPIPE when the stream ended before [DONE] and before a finish_reason
 * (the connection was cut: the caller says so). */
int bro_model_stream_end(struct bro_model_stream *st, struct bro_model_parsed *out, char *why, size_t why_size);
void bro_model_stream_free(struct bro_model_stream *st);

/* The server's own short error message in an error reply's body, for the error text:
 * {"error":{"message":"..."}} (OpenAI, vLLM, llama.cpp), {"error":"..."} (Ollama),
 * {"message":"..."}, {"detail":"..."}, or the first line of a plain-text body. Made printable
 * (controls, and bidi and line-separator marks, become spaces; invalid UTF-8 becomes U+FFFD;
 * runs of blanks fold to one) and cut at BRO_MODEL_SERVER_MSG_MAX bytes on a character
 * boundary, "..." marking a cut. Any stretch of it that is 6 or more bytes of key is
 * replaced by "[redacted]". Returns false (out = "") when there is none. */
bool bro_model_server_message(const char *body, size_t len, const char *key, char *out, size_t size);

/* text[0..len) made printable as above, into out (NUL-terminated, at most max bytes of text
 * plus "..." when cut). */
void bro_model_printable(const char *text, size_t len, char *out, size_t size, size_t max);
