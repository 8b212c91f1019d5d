#include "broker/textbuf.h"
#include "broker/reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/utf8.h"

static bool grow(struct bro_tb *b, size_t more)
{
        if (b->oom)
                return false;
        if (more > SIZE_MAX / 2 - b->len) {
                b->oom = true;
                return false;
        }
        size_t need = b->len + more + 1;
        if (need <= b->cap)
                return true;
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need)
                cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
                b->oom = true;
                return false;
        }
        b->p = p;
        b->cap = cap;
        return true;
}

void bro_tb_add(struct bro_tb *b, const char *s, size_t n)
{
        if (!grow(b, n))
                return;
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = 0;
}

void bro_tb_str(struct bro_tb *b, const char *s)
{
        bro_tb_add(b, s, strlen(s));
}

__attribute__((format(printf, 2, 0))) static void tb_vfmt(struct bro_tb *b, const char *fmt, va_list ap)
{
        va_list ap2;
        va_copy(ap2, ap);
        int n = vsnprintf(NULL, 0, fmt, ap2);
        va_end(ap2);
        if (n < 0 || !grow(b, (size_t)n)) {
                b->oom = true;
                return;
        }
        (void)vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
}

void bro_tb_printf(struct bro_tb *b, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        tb_vfmt(b, fmt, ap);
        va_end(ap);
}

/* utf8_valid on at most 4 bytes: the first length that is valid is the sequence's, since a
 * lead byte fixes the length and ASCII is 1. */
size_t bro_utf8_seq(const uint8_t *p, size_t left)
{
        for (size_t k = 1; k <= 4 && k <= left; k++)
                if (utf8_valid(p, k))
                        return k;
        return 0;
}

#define FFFD "\xEF\xBF\xBD"

void bro_tb_clean(struct bro_tb *b, const char *s, size_t n, enum bro_clean how)
{
        const uint8_t *u = (const uint8_t *)s;
        size_t i = 0, run = 0; /* run: clean bytes not yet copied, from i - run */
        while (i < n) {
                size_t k = bro_utf8_seq(u + i, n - i);
                uint8_t c = u[i];
                bool keep = k > 0;
                if (k == 1 && (c < 0x20 || c == 0x7F))
                        keep = how == BRO_CLEAN_LINES && (c == '\t' || c == '\n');
                else if (k == 2 && c == 0xC2 && u[i + 1] < 0xA0)
                        keep = false; /* C1 controls U+0080..U+009F */
                if (keep) {
                        run += k;
                        i += k;
                        continue;
                }
                bro_tb_add(b, s + i - run, run);
                run = 0;
                if (how == BRO_CLEAN_LINES && c == '\r') {
                        /* CRLF is one line end (its LF follows); a lone CR, a progress bar's,
                         * ends a line too */
                        if (i + 1 == n || s[i + 1] != '\n')
                                bro_tb_add(b, "\n", 1);
                } else
                        bro_tb_add(b, FFFD, 3);
                i += k ? k : 1;
        }
        bro_tb_add(b, s + i - run, run);
}

void bro_tb_clean_max(struct bro_tb *b, const char *s, size_t n, enum bro_clean how, size_t max)
{
        /* Cleaning shrinks text at most by half (CRLF to LF): 2 * max + 32 bytes of s are
         * enough to fill max, and a character split at their end lands past the cut. */
        size_t take = n;
        if (max < SIZE_MAX / 4 && n > 2 * max + 32)
                take = 2 * max + 32;
        struct bro_tb t = { 0 };
        bro_tb_clean(&t, s, take, how);
        if (t.oom) {
                b->oom = true;
                bro_tb_free(&t);
                return;
        }
        if (take == n && t.len <= max)
                bro_tb_add(b, t.p ? t.p : "", t.len);
        else if (max >= 3) {
                /* here t.len > max: the cut is inside t */
                bro_tb_add(b, t.p, bro_utf8_floor(t.p, max - 3));
                bro_tb_add(b, "\xE2\x80\xA6", 3); /* … */
        }
        bro_tb_free(&t);
}

char *bro_tb_take(struct bro_tb *b)
{
        if (b->oom) {
                bro_tb_free(b);
                return NULL;
        }
        char *p = b->p ? b->p : strdup("");
        b->p = NULL;
        b->len = b->cap = 0;
        return p;
}

void bro_tb_free(struct bro_tb *b)
{
        free(b->p);
        b->p = NULL;
        b->len = b->cap = 0;
        b->oom = false;
}

size_t bro_utf8_floor(const char *s, size_t n)
{
        while (n > 0 && ((uint8_t)s[n] & 0xC0) == 0x80)
                n--;
        return n;
}

size_t bro_utf8_ceil(const char *s, size_t len, size_t n)
{
        while (n < len && ((uint8_t)s[n] & 0xC0) == 0x80)
                n++;
        return n;
}
