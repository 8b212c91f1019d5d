/* UTF-8: every string on the wire is valid UTF-8 without NUL (proto/), and what a tool prints
 * is made so before it is sent (invalid bytes become U+FFFD), so JSON can always carry it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True if buf[0..len) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
bool utf8_valid(const uint8_t *buf, size_t len);

/* Copies buf into a malloc'd NUL-terminated string with each invalid byte, and each NUL,
 * replaced by U+FFFD. Returns NULL only when out of memory. */
char *utf8_sanitize(const uint8_t *buf, size_t len, size_t *out_len);

/* The length of the longest prefix of the valid UTF-8 string s that is at most max bytes and
 * ends on a character boundary: where a text may be cut without breaking a character. */
size_t utf8_prefix_len(const char *s, size_t max);

/* The length of buf[0..len) without a character begun at its end and not finished (at most
 * 3 bytes, which could still be the start of a well-formed one): where text that arrives in
 * pieces may be cut so that no character is split. Everything else is left as it is. */
size_t utf8_complete_len(const uint8_t *buf, size_t len);
