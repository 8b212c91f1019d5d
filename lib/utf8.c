#include "utf8.h"

#include <stdlib.h>
#include <string.h>

/* Length of the well-formed sequence at p (1..4), or 0 if it is not one. Table 3-7 of the
 * Unicode standard: the second byte's range depends on the first byte. */
static size_t utf8_seq(const uint8_t *p, size_t left)
{
        uint8_t c = p[0];
        if (c < 0x80)
                return 1;
        size_t n;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
                n = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
                n = 3;
                if (c == 0xE0)
                        lo = 0xA0;
                else if (c == 0xED)
                        hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
                n = 4;
                if (c == 0xF0)
                        lo = 0x90;
                else if (c == 0xF4)
                        hi = 0x8F;
        } else
                return 0;
        if (left < n)
                return 0;
        if (p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (p[i] < 0x80 || p[i] > 0xBF)
                        return 0;
        return n;
}

bool utf8_valid(const uint8_t *buf, size_t len)
{
        size_t i = 0;
        while (i < len) {
                size_t n = utf8_seq(buf + i, len - i);
                if (n == 0)
                        return false;
                i += n;
        }
        return true;
}

char *utf8_sanitize(const uint8_t *buf, size_t len, size_t *out_len)
{
        /* Worst case every byte becomes the 3-byte U+FFFD. */
        char *out = malloc(len * 3 + 1);
        if (!out)
                return NULL;
        size_t o = 0, i = 0;
        while (i < len) {
                size_t n = utf8_seq(buf + i, len - i);
                if (n == 0 || buf[i] == 0) {
                        memcpy(out + o, "\xEF\xBF\xBD", 3);
                        o += 3;
                        i++;
                        continue;
                }
                memcpy(out + o, buf + i, n);
                o += n;
                i += n;
        }
        out[o] = 0;
        if (out_len)
                *out_len = o;
        return out;
}

size_t utf8_prefix_len(const char *s, size_t max)
{
        size_t n = strnlen(s, max + 1);
        if (n <= max)
                return n;
        n = max;
        /* Back over continuation bytes (10xxxxxx) to the start of the cut character. */
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
                n--;
        return n;
}

size_t utf8_complete_len(const uint8_t *buf, size_t len)
{
        /* The last lead byte among the last three: if its character needs more bytes than
         * are there, and those there could still begin a well-formed one (utf8_seq on them,
         * completed with bytes that are valid where they go), the text is cut before it. */
        for (size_t back = 1; back <= 3 && back <= len; back++) {
                const uint8_t *p = buf + len - back;
                if ((*p & 0xC0) == 0x80)
                        continue;
                size_t need = *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC0 ? 2 : 1;
                if (need <= back)
                        return len;
                uint8_t whole[4] = { p[0], *p == 0xE0 ? 0xA0 : *p == 0xF0 ? 0x90 : 0x80, 0x80, 0x80 };
                memcpy(whole, p, back);
                return utf8_seq(whole, need) ? len - back : len;
        }
        return len;
}
