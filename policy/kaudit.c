/* Landlock's audit records: the strict parser and the explanations (see kaudit.h for the
 * forms). Everything here works on bounded copies; nothing of a record is trusted to be
 * well-formed until it was checked here, although it comes from the kernel: a path in it is
 * the tool's. */
#define _GNU_SOURCE
#include "policy/kaudit.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jail/compat.h"
#include "lib/cleanup.h"
#include "lib/utf8.h"

#define AUDIT_TRUSTED_APP_TYPE 1121 /* AUDIT_TRUSTED_APP, the marker's type (kaudit.c) */
#define MARKER_PREFIX "anvil-drain="

static const char *const blocker_names[_POL_KA_BLOCKER_MAX] = {
#define X(id, name) [POL_KA_##id] = name,
        POL_KA_BLOCKERS(X)
#undef X
};

const char *pol_ka_blocker_name(enum pol_ka_blocker b)
{
        return (unsigned)b < _POL_KA_BLOCKER_MAX ? blocker_names[b] : "unknown";
}

static int bad(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t size, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(why, size, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* ---- small strict scanners over [p, end) ---- */

/* An unsigned decimal of at most 20 digits that fits in 64 bits. */
static bool dec_u64(const char *s, size_t n, uint64_t *out)
{
        if (n == 0 || n > 20)
                return false;
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                unsigned d = (unsigned)(s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *out = v;
        return true;
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* A hexadecimal number (a domain id, an ioctl command), optionally after "0x". */
static bool hex_u64(const char *s, size_t n, bool prefix, uint64_t *out)
{
        if (prefix) {
                if (n < 2 || s[0] != '0' || s[1] != 'x')
                        return false;
                s += 2;
                n -= 2;
        }
        if (n == 0 || n > 16)
                return false;
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++) {
                int h = hexval(s[i]);
                if (h < 0)
                        return false;
                v = v << 4 | (uint64_t)h;
        }
        *out = v;
        return true;
}

/* A value written by audit_log_untrustedstring(): "text" (printable ASCII, no '"', no space)
 * or an even number of hex digits. Decoded into out (NUL-terminated); a value longer than the
 * buffer is refused, never cut. A NUL in hex is refused unless allow_nul: an abstract unix
 * socket's name starts with one (shown as '@') and may hold more (kept, and escaped when
 * shown: out_len counts them). */
static bool untrusted(const char *s, size_t n, char *out, size_t size, size_t *out_len, bool allow_nul)
{
        size_t k = 0;
        if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
                for (size_t i = 1; i + 1 < n; i++) {
                        if (s[i] == '"' || s[i] < 0x21 || s[i] > 0x7e || k + 1 >= size)
                                return false;
                        out[k++] = s[i];
                }
        } else {
                if (n == 0 || n % 2)
                        return false;
                for (size_t i = 0; i < n; i += 2) {
                        int hi = hexval(s[i]), lo = hexval(s[i + 1]);
                        if (hi < 0 || lo < 0 || k + 1 >= size)
                                return false;
                        char c = (char)(hi << 4 | lo);
                        if (c == 0) {
                                if (!allow_nul)
                                        return false;
                                if (k == 0)
                                        c = '@';
                        }
                        out[k++] = c;
                }
        }
        out[k] = 0;
        if (out_len)
                *out_len = k;
        return true;
}

/* An address as lsm_audit prints it (%pI4 or %pI6c): digits, hex digits, '.', ':'. */
static bool addr_text(const char *s, size_t n, char *out, size_t size)
{
        if (n == 0 || n >= size)
                return false;
        for (size_t i = 0; i < n; i++)
                if (hexval(s[i]) < 0 && s[i] != '.' && s[i] != ':')
                        return false;
        memcpy(out, s, n);
        out[n] = 0;
        return true;
}

static bool port_num(const char *s, size_t n, unsigned *out)
{
        uint64_t v;
        if (!dec_u64(s, n, &v) || v == 0 || v > 65535)
                return false;
        *out = (unsigned)v;
        return true;
}

/* ---- fields ---- */

struct field {
        const char *key, *val;
        size_t key_len, val_len;
};

static bool key_is(const struct field *f, const char *k)
{
        return f->key_len == strlen(k) && memcmp(f->key, k, f->key_len) == 0;
}

/* The next "key=value" of [*p, end): keys are [a-z_]+, values non-empty and space-free. */
static int next_field(const char **p, const char *end, struct field *f, char *why, size_t why_size)
{
        const char *s = *p;
        const char *sp = memchr(s, ' ', (size_t)(end - s));
        const char *e = sp ? sp : end;
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (!eq || eq == s)
                return bad(why, why_size, "a field that is not key=value");
        for (const char *k = s; k < eq; k++)
                if (!((*k >= 'a' && *k <= 'z') || *k == '_'))
                        return bad(why, why_size, "a malformed key");
        f->key = s;
        f->key_len = (size_t)(eq - s);
        f->val = eq + 1;
        f->val_len = (size_t)(e - eq - 1);
        if (f->val_len == 0)
                return bad(why, why_size, "field %.*s has no value", (int)f->key_len, f->key);
        *p = sp ? sp + 1 : end;
        if (sp && *p == end)
                return bad(why, why_size, "a trailing space");
        return 0;
}

static int blockers_parse(const struct field *f, uint32_t *out, char *why, size_t why_size)
{
        uint32_t mask = 0;
        const char *s = f->val, *end = f->val + f->val_len;
        while (s < end) {
                const char *c = memchr(s, ',', (size_t)(end - s));
                size_t n = (size_t)((c ? c : end) - s);
                unsigned b;
                for (b = 0; b < _POL_KA_BLOCKER_MAX; b++)
                        if (strlen(blocker_names[b]) == n && memcmp(blocker_names[b], s, n) == 0)
                                break;
                if (b == _POL_KA_BLOCKER_MAX)
                        return bad(why, why_size, "unknown blocker '%.*s'", (int)(n > 40 ? 40 : n), s);
                if (mask & (1u << b))
                        return bad(why, why_size, "blocker %s given twice", blocker_names[b]);
                mask |= 1u << b;
                if (!c)
                        break;
                s = c + 1;
                if (s == end)
                        return bad(why, why_size, "a trailing comma in blockers");
        }
        if (!mask)
                return bad(why, why_size, "no blockers");
        *out = mask;
        return 0;
}

static int parse_access(const char *p, const char *end, struct pol_ka_record *rec, char *why, size_t why_size)
{
        struct field f;
        int r;
        if ((r = next_field(&p, end, &f, why, why_size)) < 0)
                return r;
        if (!key_is(&f, "domain") || !hex_u64(f.val, f.val_len, false, &rec->domain) || rec->domain == 0)
                return bad(why, why_size, "LANDLOCK_ACCESS does not start with domain=<hex>");
        if (p == end || (r = next_field(&p, end, &f, why, why_size)) < 0)
                return p == end ? bad(why, why_size, "LANDLOCK_ACCESS has no blockers") : r;
        if (!key_is(&f, "blockers"))
                return bad(why, why_size, "LANDLOCK_ACCESS: blockers= does not follow domain=");
        if ((r = blockers_parse(&f, &rec->blockers, why, why_size)) < 0)
                return r;
        bool seen_dev = false, seen_ino = false;
        while (p < end) {
                if ((r = next_field(&p, end, &f, why, why_size)) < 0)
                        return r;
                uint64_t v;
                if (key_is(&f, "path") || key_is(&f, "name")) {
                        if (rec->object != POL_KA_OBJ_NONE)
                                return bad(why, why_size, "LANDLOCK_ACCESS names two objects");
                        rec->object = key_is(&f, "path") ? POL_KA_OBJ_PATH : POL_KA_OBJ_NAME;
                        if (!untrusted(f.val, f.val_len, rec->path, sizeof(rec->path), &rec->path_len,
                                       rec->blockers & (1u << POL_KA_SCOPE_ABSTRACT_UNIX_SOCKET)))
                                return bad(why, why_size, "a malformed %.*s=", (int)f.key_len, f.key);
                } else if (key_is(&f, "dev")) {
                        char dev[64];
                        if (seen_dev || !untrusted(f.val, f.val_len, dev, sizeof(dev), NULL, false))
                                return bad(why, why_size, "a malformed dev=");
                        seen_dev = true;
                } else if (key_is(&f, "ino")) {
                        if (seen_ino || !dec_u64(f.val, f.val_len, &v))
                                return bad(why, why_size, "a malformed ino=");
                        seen_ino = true;
                } else if (key_is(&f, "ioctlcmd")) {
                        if (rec->has_ioctl || !hex_u64(f.val, f.val_len, true, &v) || v > 0xffff)
                                return bad(why, why_size, "a malformed ioctlcmd=");
                        rec->has_ioctl = true;
                        rec->ioctlcmd = (unsigned)v;
                } else if (key_is(&f, "daddr") || key_is(&f, "saddr")) {
                        /* connect: the destination; bind: the address bound. One of the two. */
                        if (rec->addr[0] || !addr_text(f.val, f.val_len, rec->addr, sizeof(rec->addr)))
                                return bad(why, why_size, "a malformed %.*s=", (int)f.key_len, f.key);
                        rec->object = rec->object == POL_KA_OBJ_NONE ? POL_KA_OBJ_NET : rec->object;
                } else if (key_is(&f, "dest") || key_is(&f, "src")) {
                        if (rec->port || !port_num(f.val, f.val_len, &rec->port))
                                return bad(why, why_size, "a malformed %.*s=", (int)f.key_len, f.key);
                        rec->object = rec->object == POL_KA_OBJ_NONE ? POL_KA_OBJ_NET : rec->object;
                } else if (key_is(&f, "laddr") || key_is(&f, "faddr") || key_is(&f, "lport") ||
                           key_is(&f, "fport") || key_is(&f, "netif")) {
                        /* the socket's own addresses, printed for some requests: not needed */
                        char tmp[64];
                        if (f.val_len >= sizeof(tmp))
                                return bad(why, why_size, "an overlong %.*s=", (int)f.key_len, f.key);
                } else if (key_is(&f, "opid")) {
                        if (rec->opid || !dec_u64(f.val, f.val_len, &v) || v == 0 || v > 0x7fffffff)
                                return bad(why, why_size, "a malformed opid=");
                        rec->opid = (long)v;
                        rec->object = POL_KA_OBJ_TASK;
                } else if (key_is(&f, "ocomm")) {
                        if (rec->ocomm[0] || !untrusted(f.val, f.val_len, rec->ocomm, sizeof(rec->ocomm), NULL, false))
                                return bad(why, why_size, "a malformed ocomm=");
                } else
                        return bad(why, why_size, "LANDLOCK_ACCESS: unexpected field %.*s=",
                                   (int)(f.key_len > 32 ? 32 : f.key_len), f.key);
        }
        return 0;
}

static int parse_domain(const char *p, const char *end, struct pol_ka_record *rec, char *why, size_t why_size)
{
        struct field f;
        int r;
        if ((r = next_field(&p, end, &f, why, why_size)) < 0)
                return r;
        if (!key_is(&f, "domain") || !hex_u64(f.val, f.val_len, false, &rec->domain) || rec->domain == 0)
                return bad(why, why_size, "LANDLOCK_DOMAIN does not start with domain=<hex>");
        if (p == end || (r = next_field(&p, end, &f, why, why_size)) < 0)
                return p == end ? bad(why, why_size, "LANDLOCK_DOMAIN has no status") : r;
        if (!key_is(&f, "status"))
                return bad(why, why_size, "LANDLOCK_DOMAIN: status= does not follow domain=");
        bool seen_pid = false, seen_uid = false, seen_denials = false;
        if (f.val_len == 9 && memcmp(f.val, "allocated", 9) == 0)
                rec->allocated = true;
        else if (!(f.val_len == 11 && memcmp(f.val, "deallocated", 11) == 0))
                return bad(why, why_size, "LANDLOCK_DOMAIN: unknown status");
        while (p < end) {
                if ((r = next_field(&p, end, &f, why, why_size)) < 0)
                        return r;
                uint64_t v;
                char tmp[POL_KA_OBJECT_MAX];
                if (rec->allocated && key_is(&f, "pid")) {
                        if (seen_pid || !dec_u64(f.val, f.val_len, &v) || v == 0 || v > 0x7fffffff)
                                return bad(why, why_size, "a malformed pid=");
                        rec->pid = (long)v;
                        seen_pid = true;
                } else if (rec->allocated && key_is(&f, "uid")) {
                        if (seen_uid || !dec_u64(f.val, f.val_len, &rec->uid) || rec->uid > 0xffffffffu)
                                return bad(why, why_size, "a malformed uid=");
                        seen_uid = true;
                } else if (rec->allocated && key_is(&f, "mode")) {
                        if (!(f.val_len == 9 && memcmp(f.val, "enforcing", 9) == 0))
                                return bad(why, why_size, "LANDLOCK_DOMAIN: unknown mode");
                } else if (rec->allocated && (key_is(&f, "exe") || key_is(&f, "comm"))) {
                        if (!untrusted(f.val, f.val_len, tmp, sizeof(tmp), NULL, false))
                                return bad(why, why_size, "a malformed %.*s=", (int)f.key_len, f.key);
                } else if (!rec->allocated && key_is(&f, "denials")) {
                        if (seen_denials || !dec_u64(f.val, f.val_len, &rec->denials))
                                return bad(why, why_size, "a malformed denials=");
                        seen_denials = true;
                } else
                        return bad(why, why_size, "LANDLOCK_DOMAIN: unexpected field %.*s=",
                                   (int)(f.key_len > 32 ? 32 : f.key_len), f.key);
        }
        if (rec->allocated && (!seen_pid || !seen_uid))
                return bad(why, why_size, "LANDLOCK_DOMAIN allocated without pid= and uid=");
        if (!rec->allocated && !seen_denials)
                return bad(why, why_size, "LANDLOCK_DOMAIN deallocated without denials=");
        return 0;
}

/* "pid=N uid=0 auid=.. ses=.. [subj=..] msg='anvil-drain=HEX'": only the supervisor's marker
 * is recognised; any other user message is IGNORED. */
static int parse_marker(const char *p, const char *end, struct pol_ka_record *rec, char *why, size_t why_size)
{
        struct field f;
        int r;
        if ((r = next_field(&p, end, &f, why, why_size)) < 0)
                return r;
        uint64_t v;
        if (!key_is(&f, "pid") || !dec_u64(f.val, f.val_len, &v) || v == 0 || v > 0x7fffffff)
                return bad(why, why_size, "a user message without pid=");
        rec->pid = (long)v;
        static const char msg[] = " msg='" MARKER_PREFIX;
        const char *m = memmem(p - 1, (size_t)(end - p + 1), msg, sizeof(msg) - 1);
        if (!m)
                return 0; /* someone else's message */
        const char *h = m + sizeof(msg) - 1;
        const char *q = memchr(h, '\'', (size_t)(end - h));
        if (!q || q + 1 != end || !hex_u64(h, (size_t)(q - h), false, &rec->nonce))
                return bad(why, why_size, "a malformed marker");
        rec->kind = POL_KA_MARKER;
        return 0;
}

int pol_ka_parse(int type, const char *text, size_t len, struct pol_ka_record *rec, char *why, size_t why_size)
{
        memset(rec, 0, sizeof(*rec));
        if (len > POL_KA_TEXT_MAX)
                return bad(why, why_size, "a record of %zu bytes", len);
        /* A NUL ends the text (the kernel sends one after it); none may come before the end. */
        const char *nul = memchr(text, 0, len);
        if (nul) {
                for (const char *z = nul; z < text + len; z++)
                        if (*z)
                                return bad(why, why_size, "a NUL inside the record");
                len = (size_t)(nul - text);
        }
        if (type != AUDIT_LANDLOCK_ACCESS && type != AUDIT_LANDLOCK_DOMAIN && type != AUDIT_EOE &&
            type != AUDIT_TRUSTED_APP_TYPE)
                return 0; /* IGNORED */
        const char *p = text, *end = text + len;
        /* audit(SECONDS.MILLIS:SERIAL): */
        static const char head[] = "audit(";
        if (len < sizeof(head) - 1 || memcmp(p, head, sizeof(head) - 1) != 0)
                return bad(why, why_size, "no audit(...) header");
        p += sizeof(head) - 1;
        const char *dot = memchr(p, '.', (size_t)(end - p));
        const char *colon = dot ? memchr(dot, ':', (size_t)(end - dot)) : NULL;
        const char *close = colon ? memchr(colon, ')', (size_t)(end - colon)) : NULL;
        uint64_t sec, ms;
        if (!close || !dec_u64(p, (size_t)(dot - p), &sec) || colon - dot != 4 ||
            !dec_u64(dot + 1, 3, &ms) || !dec_u64(colon + 1, (size_t)(close - colon - 1), &rec->serial) ||
            end - close < 2 || close[1] != ':' || sec > UINT64_MAX / 1000 - 1)
                return bad(why, why_size, "a malformed audit(...) header");
        rec->time_ms = sec * 1000 + ms;
        p = close + 2;
        if (p < end && *p == ' ')
                p++;
        else if (p != end)
                return bad(why, why_size, "no space after the header");
        switch (type) {
        case AUDIT_EOE:
                rec->kind = POL_KA_EOE;
                return p == end ? 0 : bad(why, why_size, "an EOE record with fields");
        case AUDIT_LANDLOCK_ACCESS:
                rec->kind = POL_KA_ACCESS;
                return parse_access(p, end, rec, why, why_size);
        case AUDIT_LANDLOCK_DOMAIN:
                rec->kind = POL_KA_DOMAIN;
                return parse_domain(p, end, rec, why, why_size);
        default:
                return parse_marker(p, end, rec, why, why_size);
        }
}

/* ---- explanations ---- */

static bool escaped_cp(uint32_t cp)
{
        /* C1 controls, line and paragraph separators, bidirectional overrides and isolates, BOM:
         * nothing a reader should have to guess about. */
        return cp < 0xA0 || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

void pol_ka_escape(const char *in, size_t n, size_t max, char *out, size_t size)
{
        size_t k = 0;
        if (size == 0)
                return;
        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char)in[i];
                char piece[16];
                size_t plen, used = 1;
                if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
                        piece[0] = (char)c;
                        plen = 1;
                } else {
                        /* a well-formed multibyte sequence stays as it is */
                        size_t sl = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
                        uint32_t cp = 0;
                        if (sl && i + sl <= n && utf8_valid((const uint8_t *)in + i, sl)) {
                                cp = sl == 2 ? (c & 0x1Fu) : sl == 3 ? (c & 0x0Fu) : (c & 0x07u);
                                for (size_t j = 1; j < sl; j++)
                                        cp = cp << 6 | ((unsigned char)in[i + j] & 0x3Fu);
                        }
                        if (sl && cp && !escaped_cp(cp)) {
                                memcpy(piece, in + i, sl);
                                plen = used = sl;
                        } else
                                plen = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", c);
                }
                if (k + plen > max || k + plen + 4 > size) {
                        if (k + 4 <= size) {
                                memcpy(out + k, "...", 3);
                                k += 3;
                        }
                        break;
                }
                memcpy(out + k, piece, plen);
                k += plen;
                i += used;
        }
        out[k < size ? k : size - 1] = 0;
}

/* The blocker a message is about when several are named: what the tool tried to do (a write
 * before the read that comes with O_RDWR, a creation before the refer that comes with a
 * rename), in this order. */
static const enum pol_ka_blocker primary_order[] = {
        POL_KA_FS_WRITE_FILE, POL_KA_FS_TRUNCATE, POL_KA_FS_MAKE_REG, POL_KA_FS_MAKE_DIR, POL_KA_FS_MAKE_SYM,
        POL_KA_FS_MAKE_FIFO, POL_KA_FS_MAKE_SOCK, POL_KA_FS_MAKE_CHAR, POL_KA_FS_MAKE_BLOCK, POL_KA_FS_REMOVE_FILE,
        POL_KA_FS_REMOVE_DIR, POL_KA_FS_EXECUTE, POL_KA_FS_READ_FILE, POL_KA_FS_READ_DIR, POL_KA_FS_REFER,
        POL_KA_FS_IOCTL_DEV, POL_KA_FS_CHANGE_TOPOLOGY, POL_KA_NET_CONNECT_TCP, POL_KA_NET_BIND_TCP,
        POL_KA_SCOPE_SIGNAL, POL_KA_SCOPE_ABSTRACT_UNIX_SOCKET, POL_KA_PTRACE,
};

static const struct {
        const char *verb; /* with the object's text after it */
        enum pol_why why;
} explain[_POL_KA_BLOCKER_MAX] = {
        [POL_KA_FS_EXECUTE] = { "execute", POL_WHY_LL_EXECUTE },
        [POL_KA_FS_WRITE_FILE] = { "write", POL_WHY_LL_WRITE },
        [POL_KA_FS_READ_FILE] = { "read", POL_WHY_LL_READ },
        [POL_KA_FS_READ_DIR] = { "list", POL_WHY_LL_READ },
        [POL_KA_FS_REMOVE_DIR] = { "remove a directory from", POL_WHY_LL_WRITE },
        [POL_KA_FS_REMOVE_FILE] = { "remove a file from", POL_WHY_LL_WRITE },
        [POL_KA_FS_MAKE_CHAR] = { "create a character device in", POL_WHY_LL_SPECIAL },
        [POL_KA_FS_MAKE_DIR] = { "create a directory in", POL_WHY_LL_WRITE },
        [POL_KA_FS_MAKE_REG] = { "create a file in", POL_WHY_LL_WRITE },
        [POL_KA_FS_MAKE_SOCK] = { "create a socket file in", POL_WHY_LL_SPECIAL },
        [POL_KA_FS_MAKE_FIFO] = { "create a fifo in", POL_WHY_LL_SPECIAL },
        [POL_KA_FS_MAKE_BLOCK] = { "create a block device in", POL_WHY_LL_SPECIAL },
        [POL_KA_FS_MAKE_SYM] = { "create a symlink in", POL_WHY_LL_WRITE },
        [POL_KA_FS_REFER] = { "move or link a file across", POL_WHY_LL_WRITE },
        [POL_KA_FS_TRUNCATE] = { "truncate", POL_WHY_LL_WRITE },
        [POL_KA_FS_IOCTL_DEV] = { "ioctl", POL_WHY_LL_IOCTL },
        [POL_KA_FS_CHANGE_TOPOLOGY] = { "change mounts at", POL_WHY_LL_TOPOLOGY },
        [POL_KA_NET_BIND_TCP] = { "bind a TCP socket to", POL_WHY_LL_NETWORK },
        [POL_KA_NET_CONNECT_TCP] = { "connect to", POL_WHY_LL_NETWORK },
        [POL_KA_SCOPE_ABSTRACT_UNIX_SOCKET] = { "connect to abstract unix socket", POL_WHY_LL_ABSTRACT_UNIX },
        [POL_KA_SCOPE_SIGNAL] = { "signal", POL_WHY_LL_SIGNAL },
        [POL_KA_PTRACE] = { "trace", POL_WHY_LL_PTRACE },
};

#define SHOWN_MAX 512 /* bytes of a path shown in a message */

void pol_ka_explain(const struct pol_ka_record *rec, char *op, size_t op_size, enum pol_why *why, char *msg,
                    size_t msg_size, char *blockers, size_t blockers_size)
{
        enum pol_ka_blocker b = POL_KA_FS_READ_FILE;
        for (unsigned i = 0; i < ELEMENTSOF(primary_order); i++)
                if (rec->blockers & (1u << primary_order[i])) {
                        b = primary_order[i];
                        break;
                }
        size_t k = 0;
        blockers[0] = 0;
        for (unsigned i = 0; i < _POL_KA_BLOCKER_MAX; i++)
                if (rec->blockers & (1u << i) && k < blockers_size)
                        k += (size_t)snprintf(blockers + k, blockers_size - k, "%s%s", k ? "," : "", blocker_names[i]);
        char shown[SHOWN_MAX + 8];
        const char *verb = explain[b].verb;
        switch (rec->object) {
        case POL_KA_OBJ_PATH:
        case POL_KA_OBJ_NAME:
                pol_ka_escape(rec->path, rec->path_len, SHOWN_MAX, shown, sizeof(shown));
                if (b == POL_KA_FS_IOCTL_DEV && rec->has_ioctl)
                        snprintf(op, op_size, "ioctl 0x%x on '%s'", rec->ioctlcmd, shown);
                else if (b == POL_KA_FS_IOCTL_DEV)
                        snprintf(op, op_size, "ioctl on '%s'", shown);
                else
                        snprintf(op, op_size, "%s '%s'", verb, shown);
                break;
        case POL_KA_OBJ_NET:
                if (rec->addr[0] && rec->port)
                        snprintf(op, op_size, "%s %s port %u", verb, rec->addr, rec->port);
                else if (rec->addr[0])
                        snprintf(op, op_size, "%s %s", verb, rec->addr);
                else
                        snprintf(op, op_size, "%s port %u", verb, rec->port);
                break;
        case POL_KA_OBJ_TASK:
                pol_ka_escape(rec->ocomm, strlen(rec->ocomm), 64, shown, sizeof(shown));
                snprintf(op, op_size, "%s pid %ld ('%s')", verb, rec->opid, shown);
                break;
        case POL_KA_OBJ_NONE:
                snprintf(op, op_size, "%s", b == POL_KA_FS_CHANGE_TOPOLOGY ? "change mounts" : blockers);
                break;
        }
        *why = explain[b].why;
        POL_REASON(msg, msg_size, LANDLOCK_BLOCKED, op, pol_why_text(*why));
}
