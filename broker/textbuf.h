/* A growing text buffer for the agent's texts (broker/reply.c, broker/prompt.c), and the
 * cleaning of untrusted text on its way in. An allocation failure sticks (oom): every later
 * append is a no-op, and bro_tb_take says so once, at the end. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/agent_texts.h"

struct bro_tb {
        char *p;
        size_t len, cap;
        bool oom;
};

void bro_tb_add(struct bro_tb *b, const char *s, size_t n);
void bro_tb_str(struct bro_tb *b, const char *s);
/* Appends fmt, formatted. */
__attribute__((format(printf, 2, 3))) void bro_tb_printf(struct bro_tb *b, const char *fmt, ...);
/* Appends a catalog text (policy/reasons.h), formatted: agent text POL_AGENT_ID, or reason
 * POL_ID; the arguments checked by the compiler against its format (POL_REASON). */
#define BRO_TB_TEXT(b, ID, ...) POL_WITH_ID(POL_AGENT_##ID, bro_tb_printf((b), POL_AGENT_FMT, ##__VA_ARGS__))
#define BRO_TB_REASON(b, ID, ...) POL_WITH_ID(POL_##ID, bro_tb_printf((b), POL_REASON_FMT, ##__VA_ARGS__))

enum bro_clean {
        BRO_CLEAN_LINE,  /* one line: tab, CR and LF are controls like the others */
        BRO_CLEAN_LINES, /* text: tab and LF kept, CRLF made LF, a lone CR made LF */
};
/* Appends s[0..n) with each invalid UTF-8 byte and each control character (C0, DEL, C1;
 * but what `how` keeps) replaced by U+FFFD. */
void bro_tb_clean(struct bro_tb *b, const char *s, size_t n, enum bro_clean how);
/* As bro_tb_clean, at most max bytes of s's cleaned text; cut (on a character's boundary)
 * with "…" when it is longer. */
void bro_tb_clean_max(struct bro_tb *b, const char *s, size_t n, enum bro_clean how, size_t max);

/* The text, NUL-terminated ("" when nothing was added), the buffer emptied; NULL (and the
 * buffer freed) if an allocation failed. */
char *bro_tb_take(struct bro_tb *b);
void bro_tb_free(struct bro_tb *b);

/* Length of the well-formed UTF-8 sequence at p (1..4), 0 if there is none. */
size_t bro_utf8_seq(const uint8_t *p, size_t left);
/* The largest character boundary <= n of valid UTF-8 text s (n <= its length). */
size_t bro_utf8_floor(const char *s, size_t n);
/* The smallest character boundary >= n of valid UTF-8 text s of length len. */
size_t bro_utf8_ceil(const char *s, size_t len, size_t n);
