/* A model's reply, read as one code action, and its capability declaration (reply.h has the
 * rules). Run by the broker, unprivileged. The reply is untrusted and may be megabytes: it is
 * scanned line by line, each byte a bounded number of times (see the lexer's note below; a
 * <think> is skipped by one memmem), nothing read past len, and no allocation but the code
 * itself, once its size is known (and, for a declaration, jansson's of the object read).
 *
 * Two passes over the same deterministic scan: the first counts the blocks of each kind and
 * the size of their code, and decides (which kind is run, or why nothing is); the second
 * copies the chosen blocks into one allocation of the size the first computed. Storing the
 * blocks instead would cost memory in proportion to their number, which the reply chooses. */
#define _GNU_SOURCE
#include "broker/reply.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/utf8.h"
#include "policy/cap_scope.h"
#include "policy/reasons.h"
#include "broker/textbuf.h"

/* ---- lines ---- */

struct line {
        size_t start, end; /* the text, without its CR LF or LF */
        size_t next;       /* where the next line starts (== limit at the last) */
};

static struct line line_at(const char *s, size_t limit, size_t p)
{
        struct line l = { p, limit, limit };
        const char *nl = memchr(s + p, '\n', limit - p);
        if (nl) {
                l.end = (size_t)(nl - s);
                l.next = l.end + 1;
        }
        if (l.end > l.start && s[l.end - 1] == '\r')
                l.end--;
        return l;
}

static bool blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static size_t skip_sp(const char *s, size_t i, size_t end)
{
        while (i < end && (s[i] == ' ' || s[i] == '\t'))
                i++;
        return i;
}

static bool starts(const char *s, size_t i, size_t end, const char *lit)
{
        size_t n = strlen(lit);
        return end - i >= n && memcmp(s + i, lit, n) == 0;
}

static bool all_blank(const char *s, size_t i, size_t end)
{
        for (; i < end; i++)
                if (!blank(s[i]))
                        return false;
        return true;
}

/* ---- openers and closers ---- */

/* <code> blocks, ```py (and the other Python tags), ``` untagged, other languages */
enum blk_kind {
        BLK_TAG,
        BLK_PY,
        BLK_UNTAGGED,
        BLK_OTHER,
        BLK_KINDS
};

struct opener {
        bool fence; /* else <code> */
        size_t ticks, indent;
        size_t tag, tag_len;
        size_t body; /* where the body starts */
};

static bool py_tag(const char *t, size_t n)
{
        static const char *const tags[] = { "py", "python", "python3", "py3", "ipython" };
        for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
                if (n == strlen(tags[i]) && strncasecmp(t, tags[i], n) == 0)
                        return true;
        return false;
}

/* A line that opens a block: blanks, an optional "Code:", then three or more backticks and an
 * info string without backticks (else it is an inline code span, "```x```"), or <code>. */
static bool opener_at(const char *s, const struct line *l, struct opener *o)
{
        size_t i = l->start;
        while (i < l->end && s[i] == ' ')
                i++;
        o->indent = i - l->start;
        i = skip_sp(s, i, l->end);
        if (starts(s, i, l->end, "Code:"))
                i = skip_sp(s, i + 5, l->end);
        if (starts(s, i, l->end, "<code>")) {
                o->fence = false;
                o->body = i + 6;
                /* "<code>" alone on its line: the body starts on the next */
                if (all_blank(s, o->body, l->end))
                        o->body = l->next;
                return true;
        }
        size_t t = i;
        while (i < l->end && s[i] == '`')
                i++;
        if (i - t < 3 || memchr(s + i, '`', l->end - i))
                return false;
        o->fence = true;
        o->ticks = i - t;
        o->tag = skip_sp(s, i, l->end);
        o->tag_len = 0;
        while (o->tag + o->tag_len < l->end && !blank(s[o->tag + o->tag_len]))
                o->tag_len++;
        o->body = l->next;
        return true;
}

static bool end_code_line(const char *s, const struct line *l)
{
        size_t i = skip_sp(s, l->start, l->end);
        return starts(s, i, l->end, "<end_code>") && skip_sp(s, i + 10, l->end) == l->end;
}

/* A line whose first non-blank characters are at least `ticks` backticks, whatever follows
 * them (<end_code>, or the model's next words: "``` Done."); or <end_code> alone. */
static bool fence_close(const char *s, const struct line *l, size_t ticks)
{
        size_t i = skip_sp(s, l->start, l->end), t = i;
        while (i < l->end && s[i] == '`')
                i++;
        if (i - t == 0)
                return end_code_line(s, l);
        return i - t >= ticks;
}

/* Where smolagents' stop sequences would have cut the reply: a line that starts (its first
 * byte) with "Observation:" or "Calling tools:". The model imagining the tool's output and
 * going on to a next step; whatever follows is not its action, whether or not the server
 * honoured `stop`. */
static bool stop_line(const char *s, const struct line *l)
{
        return starts(s, l->start, l->end, "Observation:") || starts(s, l->start, l->end, "Calling tools:");
}

/* A line that opens a model's hidden reasoning: "<think>" its first non-blank characters. */
static bool think_line(const char *s, const struct line *l)
{
        return starts(s, skip_sp(s, l->start, l->end), l->end, "<think>");
}

/* ---- the lexer ----
 * Only as much of Python's as tells whether a byte is inside a string: comments, '...',
 * "...", '''...''', """...""", backslash escapes (raw strings too: r"\"" is one string for
 * the tokenizer). A closing line inside a string is remembered, not taken; should the block
 * never close outside one (the model's own unbalanced quotes), the first such line closes it,
 * as CommonMark would, and the scanner stops looking at strings for the rest of the reply
 * ("plain"): so each byte is lexed at most once and scanned plainly at most once more. */

enum lex {
        LEX_CODE,
        LEX_COMMENT,
        LEX_STR1,
        LEX_STR3
};

struct lexer {
        enum lex st;
        char q;
};

/* Lexes s[i], returns how many bytes it took (2 for an escape, 3 for a triple quote). */
static size_t lex_step(struct lexer *x, const char *s, size_t i, size_t end)
{
        char c = s[i];
        switch (x->st) {
        case LEX_CODE:
                if (c == '#')
                        x->st = LEX_COMMENT;
                else if (c == '\'' || c == '"') {
                        x->q = c;
                        if (end - i >= 3 && s[i + 1] == c && s[i + 2] == c) {
                                x->st = LEX_STR3;
                                return 3;
                        }
                        x->st = LEX_STR1;
                }
                return 1;
        case LEX_COMMENT:
                if (c == '\n')
                        x->st = LEX_CODE;
                return 1;
        case LEX_STR1:
                if (c == '\\')
                        return end - i >= 2 ? 2 : 1;
                if (c == x->q || c == '\n')
                        x->st = LEX_CODE; /* a string open at the line's end is a syntax error */
                return 1;
        case LEX_STR3:
                if (c == '\\')
                        return end - i >= 2 ? 2 : 1;
                if (c == x->q && end - i >= 3 && s[i + 1] == c && s[i + 2] == c) {
                        x->st = LEX_CODE;
                        return 3;
                }
                return 1;
        }
        return 1;
}

static bool in_string(const struct lexer *x)
{
        return x->st == LEX_STR1 || x->st == LEX_STR3;
}

struct scan {
        const char *s;
        size_t len;
        bool plain;
};

#define NONE ((size_t)-1)

/* Finds the end of a fenced body from o->body: sets *be (where the body ends: the closing
 * line's start) and returns the offset after the closing line, or NONE if it never closes. */
static size_t fence_end(struct scan *sc, const struct opener *o, bool lex, size_t *be)
{
        const char *s = sc->s;
        struct lexer x = { LEX_CODE, 0 };
        size_t fallback = NONE, fallback_next = 0;
        size_t p = o->body;
        while (p < sc->len) {
                struct line l = line_at(s, sc->len, p);
                if (stop_line(s, &l)) {
                        sc->len = p; /* the reply ends here */
                        break;
                }
                if (fence_close(s, &l, o->ticks)) {
                        if (!lex || sc->plain || !in_string(&x)) {
                                *be = p;
                                return l.next;
                        }
                        if (fallback == NONE) {
                                fallback = p;
                                fallback_next = l.next;
                        }
                }
                if (!lex || sc->plain) {
                        p = l.next;
                        continue;
                }
                /* lex to the line's end; an escaped LF ends the line too (a continued string) */
                size_t i = p;
                while (i < l.next) {
                        size_t k = lex_step(&x, s, i, sc->len);
                        i += k;
                        if (k == 2 && s[i - 1] == '\n')
                                break;
                }
                p = i;
        }
        if (fallback == NONE)
                return NONE;
        sc->plain = true;
        *be = fallback;
        return fallback_next;
}

/* The end of a <code> body: the first </code> outside a Python string (in a comment too), or
 * a line <end_code>. Sets *be and returns where scanning resumes (the line after </code>). */
static size_t code_tag_end(struct scan *sc, size_t body, size_t *be)
{
        const char *s = sc->s;
        struct lexer x = { LEX_CODE, 0 };
        size_t fallback = NONE;
        bool line_start = true;
        size_t i = body;
        while (i < sc->len) {
                bool str = !sc->plain && in_string(&x);
                if (line_start) {
                        struct line l = line_at(s, sc->len, i);
                        if (stop_line(s, &l)) {
                                sc->len = i; /* the reply ends here */
                                break;
                        }
                        if (end_code_line(s, &l)) {
                                if (!str) {
                                        *be = i;
                                        return l.next;
                                }
                                if (fallback == NONE)
                                        fallback = i;
                        }
                }
                if (starts(s, i, sc->len, "</code>")) {
                        if (!str) {
                                *be = i;
                                return line_at(s, sc->len, i).next;
                        }
                        if (fallback == NONE)
                                fallback = i;
                }
                size_t k = sc->plain ? 1 : lex_step(&x, s, i, sc->len);
                line_start = s[i + k - 1] == '\n';
                i += k;
        }
        if (fallback == NONE)
                return NONE;
        sc->plain = true;
        *be = fallback;
        return line_at(s, sc->len, fallback).next;
}

/* ---- blocks ---- */

struct blk {
        enum blk_kind kind;
        bool closed;
        size_t open; /* the opening line's offset */
        size_t bs, be, indent;
        size_t tag, tag_len;
        bool json, tool_call;
};

/* Markers of a tool call in JSON or in a model's own tool syntax: "tool_calls":,
 * "function_call":, "arguments":, "parameters":, <tool_call>, <|python_tag|>. */
static bool tool_marker(const char *s, size_t i, size_t end)
{
        static const char *const keys[] = { "\"tool_calls\"", "\"function_call\"", "\"arguments\"", "\"parameters\"" };
        static const char *const tags[] = { "<tool_call>", "<|python_tag|>" };
        for (; i < end; i++) {
                if (s[i] == '"') {
                        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
                                if (starts(s, i, end, keys[k])) {
                                        size_t j = i + strlen(keys[k]);
                                        while (j < end && blank(s[j]))
                                                j++;
                                        if (j < end && s[j] == ':')
                                                return true;
                                }
                } else if (s[i] == '<') {
                        for (size_t k = 0; k < sizeof(tags) / sizeof(tags[0]); k++)
                                if (starts(s, i, end, tags[k]))
                                        return true;
                }
        }
        return false;
}

/* JSON rather than code: its first non-blank byte opens an object or a list. */
static void classify_json(const char *s, struct blk *b)
{
        size_t i = b->bs;
        while (i < b->be && blank(s[i]))
                i++;
        b->json = i < b->be && (s[i] == '{' || s[i] == '[');
        b->tool_call = b->json && tool_marker(s, i, b->be);
}

/* A <code> body that is one fenced block and nothing else: the fence's body. */
static void unwrap(const char *s, struct blk *b)
{
        size_t p = b->bs;
        while (p < b->be) {
                struct line l = line_at(s, b->be, p);
                if (!all_blank(s, l.start, l.end))
                        break;
                p = l.next;
        }
        if (p >= b->be)
                return;
        struct line l = line_at(s, b->be, p);
        struct opener o;
        if (!opener_at(s, &l, &o) || !o.fence || (o.tag_len && !py_tag(s + o.tag, o.tag_len)))
                return;
        for (size_t q = o.body; q < b->be;) {
                struct line c = line_at(s, b->be, q);
                if (fence_close(s, &c, o.ticks)) {
                        if (!all_blank(s, c.next, b->be))
                                return;
                        b->bs = o.body;
                        b->be = q;
                        b->indent = o.indent;
                        return;
                }
                q = c.next;
        }
}

/* Writes the block's code to out (NULL: only counts): up to indent spaces off each line, CR LF
 * made LF, a final LF added. Returns its size; *empty if it is all blanks. */
static size_t emit(const char *s, const struct blk *b, char *out, bool *empty)
{
        size_t n = 0;
        *empty = all_blank(s, b->bs, b->be);
        for (size_t p = b->bs; p < b->be;) {
                struct line l = line_at(s, b->be, p);
                size_t i = l.start;
                while (i < l.end && i - l.start < b->indent && s[i] == ' ')
                        i++;
                if (out) {
                        memcpy(out + n, s + i, l.end - i);
                        out[n + l.end - i] = '\n';
                }
                n += l.end - i + 1;
                p = l.next;
        }
        return n;
}

typedef void (*blk_fn)(const char *s, const struct blk *b, void *ctx);
/* A stretch of prose, [start, end): outside every block and every <think>, before the cut. */
typedef void (*prose_fn)(const char *s, size_t start, size_t end, void *ctx);

/* A trailing partial "</code>" ("</", "</c", ... "</code"), blanks after it allowed: where the
 * body ends without it (a stop sequence cut the tag), or be as it was. */
static size_t drop_partial_close(const char *s, size_t bs, size_t be)
{
        size_t q = be;
        while (q > bs && blank(s[q - 1]))
                q--;
        for (size_t k = 6; k >= 2; k--)
                if (q - bs >= k && memcmp(s + q - k, "</code>", k) == 0)
                        return q - k;
        return be;
}

/* The scan: every block in order to fn, every stretch of prose to pfn (may be NULL); returns
 * whether prose outside the blocks holds a tool call's marker. It ends at the end of the
 * reply, at a stop line (stop_line, outside a <think>), or at a <think> never closed (what it
 * hides is not the reply's). A <think> is skipped to its </think>, wherever on a line that is;
 * the scan goes on right after it. */
static bool scan(const char *s, size_t len, blk_fn fn, prose_fn pfn, void *ctx)
{
        struct scan sc = { s, len, false };
        bool tool = false;
        size_t p = 0, prose = 0;
        while (p < sc.len) {
                struct line l = line_at(s, sc.len, p);
                struct opener o;
                if (stop_line(s, &l)) {
                        sc.len = p;
                        break;
                }
                if (think_line(s, &l)) {
                        if (pfn && p > prose)
                                pfn(s, prose, p, ctx);
                        size_t open = skip_sp(s, l.start, l.end) + 7;
                        const char *close = memmem(s + open, sc.len - open, "</think>", 8);
                        p = prose = close ? (size_t)(close - s) + 8 : sc.len;
                        if (!close)
                                sc.len = p;
                        continue;
                }
                if (!opener_at(s, &l, &o)) {
                        tool = tool || tool_marker(s, l.start, l.end);
                        p = l.next;
                        continue;
                }
                if (pfn && p > prose)
                        pfn(s, prose, p, ctx);
                struct blk b = { .open = p, .bs = o.body, .indent = o.indent };
                size_t next;
                if (o.fence) {
                        b.kind = !o.tag_len ? BLK_UNTAGGED : py_tag(s + o.tag, o.tag_len) ? BLK_PY : BLK_OTHER;
                        b.tag = o.tag;
                        b.tag_len = o.tag_len;
                        next = fence_end(&sc, &o, b.kind != BLK_OTHER, &b.be);
                } else {
                        b.kind = BLK_TAG;
                        b.indent = 0;
                        next = code_tag_end(&sc, o.body, &b.be);
                }
                b.closed = next != NONE;
                if (!b.closed) {
                        b.be = sc.len;
                        next = sc.len;
                        /* a last <code> runs to the end of the reply, a cut closing tag dropped */
                        if (b.kind == BLK_TAG && b.bs < b.be)
                                b.be = drop_partial_close(s, b.bs, b.be);
                }
                if (b.kind == BLK_TAG && b.be != NONE) {
                        /* "</code>" on a line after the code: the body ends at that line's start */
                        size_t q = b.be;
                        while (q > b.bs && (s[q - 1] == ' ' || s[q - 1] == '\t'))
                                q--;
                        if (q > b.bs && s[q - 1] == '\n')
                                b.be = q;
                }
                if (b.bs > b.be)
                        b.bs = b.be; /* an opener on the last line */
                if (b.kind == BLK_TAG)
                        unwrap(s, &b);
                classify_json(s, &b);
                fn(s, &b, ctx);
                p = prose = next;
        }
        if (pfn && sc.len > prose)
                pfn(s, prose, sc.len, ctx);
        return tool;
}

/* ---- pass 1: count and decide ---- */

struct tally {
        unsigned n[BLK_KINDS];              /* candidates by kind: TAG, PY, UNTAGGED */
        unsigned full[BLK_KINDS];           /* of them not empty */
        unsigned long long size[BLK_KINDS]; /* their code's bytes, joins included */
        unsigned other, json, tool_blocks;
        bool unclosed;
        struct blk last_unclosed;
        size_t first_other, first_other_len;
        bool have_other;
};

static bool candidate(const struct blk *b)
{
        if (b->kind == BLK_PY || b->kind == BLK_TAG)
                return !b->tool_call;
        if (b->kind == BLK_UNTAGGED)
                return !b->json;
        return false;
}

static void count(const char *s, const struct blk *b, void *ctx)
{
        struct tally *t = ctx;
        if (!b->closed) {
                t->unclosed = true;
                t->last_unclosed = *b;
        }
        if (b->tool_call)
                t->tool_blocks++;
        if (b->kind == BLK_OTHER) {
                t->other++;
                if (!t->have_other) {
                        t->have_other = true;
                        t->first_other = b->tag;
                        t->first_other_len = b->tag_len;
                }
                return;
        }
        if (!candidate(b)) {
                t->json++;
                return;
        }
        bool empty;
        size_t n = emit(s, b, NULL, &empty);
        if (t->n[b->kind] < UINT_MAX)
                t->n[b->kind]++;
        if (!empty) {
                t->size[b->kind] += n + (t->full[b->kind] ? 1 : 0);
                t->full[b->kind]++;
        }
}

/* ---- pass 2: copy ---- */

struct copy {
        enum blk_kind kind;
        char *out;
        size_t n;
};

static void copy(const char *s, const struct blk *b, void *ctx)
{
        struct copy *c = ctx;
        bool empty;
        if (b->kind != c->kind || !candidate(b) || all_blank(s, b->bs, b->be))
                return;
        if (c->n)
                c->out[c->n++] = '\n'; /* a blank line between blocks */
        c->n += emit(s, b, c->out + c->n, &empty);
}

/* ---- the reply ---- */

static int no_code(struct bro_reply *out, struct bro_tb *why)
{
        out->kind = BRO_REPLY_NO_CODE;
        out->why = bro_tb_take(why);
        return out->why ? 0 : -ENOMEM;
}

/* The offset of the first byte that is not well-formed UTF-8, or len. */
static size_t utf8_bad_at(const char *s, size_t len)
{
        size_t i = 0;
        while (i < len) {
                size_t k = bro_utf8_seq((const uint8_t *)s + i, len - i);
                if (!k)
                        return i;
                i += k;
        }
        return len;
}

static unsigned long long line_no(const char *s, size_t at)
{
        unsigned long long n = 1;
        for (size_t i = 0; i < at; i++)
                n += s[i] == '\n';
        return n;
}

int bro_reply_parse(const char *reply, size_t len, struct bro_reply *out)
{
        if (!out || (!reply && len))
                return -EINVAL;
        memset(out, 0, sizeof(*out));
        struct bro_tb why = { 0 };
        if (len == 0) {
                BRO_TB_TEXT(&why, REPLY_EMPTY);
                return no_code(out, &why);
        }
        const char *nul = memchr(reply, 0, len);
        if (nul) {
                BRO_TB_TEXT(&why, REPLY_NUL, (unsigned long long)(nul - reply));
                return no_code(out, &why);
        }
        size_t bad = utf8_bad_at(reply, len);
        if (bad < len) {
                BRO_TB_TEXT(&why, REPLY_NOT_UTF8, (unsigned long long)bad);
                return no_code(out, &why);
        }
        if (all_blank(reply, 0, len)) {
                BRO_TB_TEXT(&why, REPLY_BLANK);
                return no_code(out, &why);
        }

        struct tally t = { 0 };
        bool prose_tool = scan(reply, len, count, NULL, &t);
        /* <code> blocks win: beside them, fences are examples; then tagged fences, beside which
         * untagged ones are sample output. A last <code> left open is
         * the action cut by a stop sequence (it runs to the end); a fence left open is a
         * reply cut at its length limit (refused). */
        enum blk_kind kind = BLK_UNTAGGED;
        unsigned not_taken = 0; /* fences beside the kind that is the action */
        if (t.n[BLK_TAG]) {
                kind = BLK_TAG;
                not_taken = t.n[BLK_PY] + t.n[BLK_UNTAGGED];
        } else if (t.n[BLK_PY] || (t.unclosed && t.last_unclosed.kind == BLK_PY)) {
                kind = BLK_PY;
                not_taken = t.n[BLK_UNTAGGED];
        }
        out->blocks = t.n[kind];
        out->skipped = t.other + t.json + not_taken;
        if (t.unclosed && t.last_unclosed.kind == kind && kind != BLK_TAG && candidate(&t.last_unclosed)) {
                BRO_TB_TEXT(&why, REPLY_UNCLOSED, line_no(reply, t.last_unclosed.open), "```");
                return no_code(out, &why);
        }
        if (t.size[kind] > PROTO_SOURCE_MAX) {
                BRO_TB_TEXT(&why, REPLY_TOO_LONG, t.size[kind], (unsigned long long)PROTO_SOURCE_MAX);
                return no_code(out, &why);
        }
        if (t.full[kind] == 0) {
                if (t.n[kind])
                        BRO_TB_TEXT(&why, REPLY_EMPTY_BLOCK);
                else if (prose_tool || t.tool_blocks)
                        BRO_TB_TEXT(&why, REPLY_TOOL_CALL);
                else if (t.have_other) {
                        struct bro_tb tag = { 0 };
                        for (size_t i = 0; i < t.first_other_len && i < 16; i++) {
                                char c = reply[t.first_other + i];
                                bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                             (c >= '0' && c <= '9') || (c && strchr("+#._-", c));
                                bro_tb_add(&tag, plain ? &c : "?", 1);
                        }
                        char *tg = bro_tb_take(&tag);
                        if (!tg)
                                return -ENOMEM;
                        BRO_TB_TEXT(&why, REPLY_OTHER_LANG, tg);
                        free(tg);
                } else if (t.json)
                        BRO_TB_TEXT(&why, REPLY_JSON_BLOCK);
                else
                        BRO_TB_TEXT(&why, REPLY_PROSE);
                return no_code(out, &why);
        }
        struct copy c = { kind, malloc(t.size[kind] + 1), 0 };
        if (!c.out)
                return -ENOMEM;
        (void)scan(reply, len, copy, NULL, &c);
        c.out[c.n] = 0;
        out->kind = BRO_REPLY_CODE;
        out->code = c.out;
        return 0;
}

int bro_reply_tool_calls(const char *names, struct bro_reply *out)
{
        if (!out || !names)
                return -EINVAL;
        memset(out, 0, sizeof(*out));
        struct bro_tb why = { 0 };
        BRO_TB_TEXT(&why, REPLY_TOOL_CALLS, names);
        return no_code(out, &why);
}

void bro_reply_free(struct bro_reply *r)
{
        if (!r)
                return;
        free(r->code);
        free(r->why);
        r->code = r->why = NULL;
}

char *bro_observation_no_code(const struct bro_reply *r, size_t max_len)
{
        if (!r) {
                errno = EINVAL;
                return NULL;
        }
        struct bro_tb b = { 0 };
        BRO_TB_TEXT(&b, NO_CODE, r->why ? r->why : bro_agent_format(POL_AGENT_REPLY_PROSE)); /* no argument */
        bro_tb_str(&b, "\n");
        BRO_TB_TEXT(&b, FORMAT_HINT);
        if (!b.oom && b.len > max_len) {
                b.len = bro_utf8_floor(b.p, max_len);
                b.p[b.len] = 0;
        }
        return bro_tb_take(&b);
}

/* ---- the capability declaration ---- */

static bool cap_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
               c == '-';
}

static bool listed(const struct proto_strv *v, const char *s, size_t n)
{
        for (size_t i = 0; i < v->n; i++)
                if (strlen(v->items[i]) == n && memcmp(v->items[i], s, n) == 0)
                        return true;
        return false;
}

/* The names of a declaration's list: each a string of 1..BRO_CAP_NAME_MAX bytes of
 * [A-Za-z0-9_.-], written without escapes (raw[0..raw_len) is the list's text as the model
 * wrote it), pushed once each. */
static int caps_names(json_t *list, const char *raw, size_t raw_len, struct proto_strv *out)
{
        if (!json_is_array(list) || memchr(raw, '\\', raw_len))
                return -EINVAL;
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v)
        {
                const char *name = json_string_value(v);
                size_t n = name ? json_string_length(v) : 0;
                char scoped[PROTO_PATH_MAX], msg[16];
                /* network with its hosts: "network=HOST,..." or {"network": [HOST, ...]} */
                json_t *hosts = json_object_get(v, "network");
                if (json_is_object(v) && json_object_size(v) == 1 && json_is_array(hosts) &&
                    json_array_size(hosts) <= POL_SCOPE_HOSTS_MAX + POL_SCOPE_RANGES_MAX) {
                        const char *items[POL_SCOPE_HOSTS_MAX + POL_SCOPE_RANGES_MAX];
                        size_t k;
                        json_t *h;
                        json_array_foreach(hosts, k, h)
                        {
                                if (!json_is_string(h))
                                        return -EINVAL;
                                items[k] = json_string_value(h);
                        }
                        if (pol_cap_join(items, json_array_size(hosts), scoped, sizeof(scoped)) < 0)
                                return -EINVAL;
                        name = scoped;
                        n = strlen(scoped);
                }
                if (name && n == strlen(name) && n < PROTO_PATH_MAX && strchr(name, '=')) {
                        if (pol_cap_check("capabilitiesRequested", name, msg, sizeof(msg)) < 0)
                                return -EINVAL;
                } else {
                        if (n == 0 || n > BRO_CAP_NAME_MAX || strlen(name) != n)
                                return -EINVAL;
                        for (size_t k = 0; k < n; k++)
                                if (!cap_char(name[k]))
                                        return -EINVAL;
                }
                if (listed(out, name, n))
                        continue;
                if (out->n >= PROTO_CAPS_MAX)
                        return -E2BIG;
                if (proto_strv_push(out, name) < 0)
                        return -ENOMEM;
        }
        return 0;
}

struct caps {
        struct proto_strv *out;
        size_t done; /* where the last declaration read ends: nothing before it is looked at again */
        int rc;      /* 0, or the first error */
        bool found;
};

#define CAPS_KEY "capabilitiesRequested"
#define CAPS_KEY_LEN (sizeof(CAPS_KEY) - 1)

/* The '{' of the object whose key's quote is at q: backwards over balanced braces, not below
 * lo. NONE if there is none. */
static size_t object_start(const char *s, size_t lo, size_t q)
{
        unsigned depth = 0;
        for (size_t i = q; i-- > lo;) {
                char c = s[i];
                if (c == '}')
                        depth++;
                else if (c == '{' && depth-- == 0)
                        return i;
        }
        return NONE;
}

/* One declaration whose key is at k: the JSON object around it, read from its '{' to its '}'
 * (on one line or several, other keys ignored, whatever follows it), its list's names added. */
static int declaration(struct caps *c, const char *s, size_t lo, size_t k, size_t end)
{
        size_t o = object_start(s, lo, k - 1);
        if (o == NONE)
                return -EINVAL;
        json_error_t jerr;
        json_t *root = json_loadb(s + o, end - o, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
        json_t *list = json_object_get(root, CAPS_KEY);
        size_t stop = root ? o + (size_t)jerr.position : 0;
        /* the key at k must be this object's own, not a nested one's */
        int r = !list || stop <= k ? -EINVAL : 0;
        if (r == 0) {
                const char *rb = memchr(s + k, ']', stop - k);
                r = caps_names(list, s + k, rb ? (size_t)(rb - (s + k)) : stop - k, c->out);
        }
        json_decref(root);
        if (r == 0) {
                c->done = stop;
                c->found = true;
        }
        return r;
}

/* Every declaration in s[start, end): each quoted key "capabilitiesRequested" (or with single
 * quotes: an attempt, refused as malformed) not inside one already read. */
static void caps_in(struct caps *c, const char *s, size_t start, size_t end)
{
        size_t lo = start > c->done ? start : c->done;
        size_t p = lo;
        while (c->rc == 0 && p < end) {
                const char *hit = memmem(s + p, end - p, CAPS_KEY, CAPS_KEY_LEN);
                if (!hit)
                        return;
                size_t k = (size_t)(hit - s);
                p = k + CAPS_KEY_LEN;
                if (k < c->done || k == start || (s[k - 1] != '"' && s[k - 1] != '\'') || p >= end || s[p] != s[k - 1])
                        continue; /* a word in a sentence */
                c->rc = declaration(c, s, lo, k, end);
                lo = c->done > p ? c->done : p;
                p = lo;
        }
}

static void caps_prose(const char *s, size_t start, size_t end, void *ctx)
{
        caps_in(ctx, s, start, end);
}

/* In a ```json fence, or a fence of JSON without a tag: read as prose. Code is not looked at. */
static void caps_block(const char *s, const struct blk *b, void *ctx)
{
        bool json = (b->kind == BLK_OTHER && b->tag_len == 4 && strncasecmp(s + b->tag, "json", 4) == 0) ||
                    (b->kind == BLK_UNTAGGED && b->json);
        if (json)
                caps_in(ctx, s, b->bs, b->be);
}

int bro_caps_declared(const char *reply, size_t len, struct proto_strv *out)
{
        if (!out || (!reply && len) || out->n)
                return -EINVAL;
        struct caps c = { .out = out };
        if (len)
                (void)scan(reply, len, caps_block, caps_prose, &c);
        if (c.rc < 0) {
                proto_strv_free(out);
                return c.rc;
        }
        return c.found ? 1 : 0;
}
