/* The generic codec: encode, strict decode and free, driven by the schema tables. */
#include "proto/proto.h"

#include <arpa/inet.h>
#include <math.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/utf8.h"

/* ---- free ---- */

static void free_field(const struct proto_field *f, uint8_t *base)
{
        void *p = base + f->offset;
        switch (f->type) {
        case PF_STR:
                free(*(char **)p);
                *(char **)p = NULL;
                break;
        case PF_BIN: {
                struct proto_bytes *b = p;
                free(b->data);
                b->data = NULL;
                b->len = 0;
                break;
        }
        case PF_STRUCT:
                proto_schema_free(f->sub, p);
                break;
        case PF_OPT_STRUCT: {
                void **sp = p;
                if (*sp) {
                        proto_schema_free(f->sub, *sp);
                        free(*sp);
                        *sp = NULL;
                }
                break;
        }
        case PF_ARRAY: {
                struct proto_array *a = p;
                for (size_t i = 0; i < a->n; i++)
                        proto_schema_free(f->sub, (uint8_t *)a->items + i * f->sub->size);
                free(a->items);
                a->items = NULL;
                a->n = 0;
                break;
        }
        case PF_STRV:
                proto_strv_free(p);
                break;
        case PF_UINT:
        case PF_OPT_INT:
        case PF_DOUBLE:
        case PF_BOOL:
                break;
        }
}

void proto_schema_free(const struct proto_schema *s, void *obj)
{
        if (!obj)
                return;
        for (size_t i = 0; i < s->n_fields; i++)
                free_field(&s->fields[i], obj);
}

/* ---- decode ---- */

struct dec {
        char path[192];
        size_t path_len;
        struct anvil_err *err;
};

static void path_push(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void path_push(struct dec *d, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(d->path + d->path_len, sizeof(d->path) - d->path_len, fmt, ap);
        va_end(ap);
        if (n > 0)
                d->path_len = strlen(d->path);
}

static void path_pop(struct dec *d, size_t len)
{
        d->path_len = len;
        d->path[len] = 0;
}

static int dec_fail(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int dec_fail(struct dec *d, const char *fmt, ...)
{
        char what[160];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return anvil_err_set(d->err, EBADMSG, "%s: %s", d->path, what);
}

static const char *mp_type_name(msgpack_object_type t)
{
        switch (t) {
        case MSGPACK_OBJECT_NIL: return "nil";
        case MSGPACK_OBJECT_BOOLEAN: return "a boolean";
        case MSGPACK_OBJECT_POSITIVE_INTEGER: return "an unsigned integer";
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "a negative integer";
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64: return "a float";
        case MSGPACK_OBJECT_STR: return "a string";
        case MSGPACK_OBJECT_ARRAY: return "an array";
        case MSGPACK_OBJECT_MAP: return "a map";
        case MSGPACK_OBJECT_BIN: return "binary";
        case MSGPACK_OBJECT_EXT: return "an extension";
        }
        return "an unknown type";
}

static int want(struct dec *d, const msgpack_object *o, msgpack_object_type t, const char *what)
{
        if (o->type == t)
                return 0;
        return dec_fail(d, "expected %s, got %s", what, mp_type_name(o->type));
}

/* A short, printable rendering of an attacker-chosen key for an error message: no spaces,
 * quotes or control bytes, so that it can stand in a field path. */
static void printable(const char *p, size_t n, char *out, size_t size)
{
        size_t o = 0;
        for (size_t i = 0; i < n && o + 2 < size; i++)
                out[o++] = (p[i] > 0x20 && p[i] < 0x7f && p[i] != '\'') ? p[i] : '?';
        if (n > 0 && o + 2 >= size && size > 4)
                memcpy(out + size - 4, "...", 3), o = size - 1;
        out[o] = 0;
}

static int dec_str(struct dec *d, const msgpack_object *o, uint64_t max, char **out)
{
        int r = want(d, o, MSGPACK_OBJECT_STR, "a string");
        if (r < 0)
                return r;
        size_t n = o->via.str.size;
        if (max && n > max)
                return dec_fail(d, "string of %zu bytes is over the limit of %llu", n,
                                (unsigned long long)max);
        if (memchr(o->via.str.ptr, 0, n))
                return dec_fail(d, "string contains a NUL byte");
        if (!utf8_valid((const uint8_t *)o->via.str.ptr, n))
                return dec_fail(d, "string is not valid UTF-8");
        char *s = malloc(n + 1);
        if (!s)
                return anvil_err_set(d->err, ENOMEM, "Out of memory");
        memcpy(s, o->via.str.ptr, n);
        s[n] = 0;
        *out = s;
        return 0;
}

static int dec_struct(struct dec *d, const struct proto_schema *s, const msgpack_object *o,
                      void *dst, bool top);

static int dec_field(struct dec *d, const struct proto_field *f, const msgpack_object *o, uint8_t *base)
{
        void *p = base + f->offset;
        int r;
        if (o->type == MSGPACK_OBJECT_NIL) {
                if (f->required)
                        return dec_fail(d, "is required, got nil");
                return 0;
        }
        switch (f->type) {
        case PF_STR:
                return dec_str(d, o, f->max, p);
        case PF_BIN: {
                if ((r = want(d, o, MSGPACK_OBJECT_BIN, "binary")) < 0)
                        return r;
                size_t n = o->via.bin.size;
                if (f->max && n > f->max)
                        return dec_fail(d, "%zu bytes is over the limit of %llu", n,
                                        (unsigned long long)f->max);
                struct proto_bytes *b = p;
                b->data = malloc(n ? n : 1);
                if (!b->data)
                        return anvil_err_set(d->err, ENOMEM, "Out of memory");
                memcpy(b->data, o->via.bin.ptr, n);
                b->len = n;
                return 0;
        }
        case PF_UINT:
                if ((r = want(d, o, MSGPACK_OBJECT_POSITIVE_INTEGER, "an unsigned integer")) < 0)
                        return r;
                if (f->max && o->via.u64 > f->max)
                        return dec_fail(d, "%llu is over the limit of %llu",
                                        (unsigned long long)o->via.u64, (unsigned long long)f->max);
                *(uint64_t *)p = o->via.u64;
                return 0;
        case PF_OPT_INT: {
                struct proto_opt_int *v = p;
                if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
                        v->v = o->via.i64;
                else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT64_MAX)
                        v->v = (int64_t)o->via.u64;
                else
                        return dec_fail(d, "expected an integer, got %s", mp_type_name(o->type));
                v->set = true;
                return 0;
        }
        case PF_DOUBLE: {
                double x;
                if (o->type == MSGPACK_OBJECT_FLOAT32 || o->type == MSGPACK_OBJECT_FLOAT64)
                        x = o->via.f64;
                else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                        x = (double)o->via.u64;
                else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
                        x = (double)o->via.i64;
                else
                        return dec_fail(d, "expected a number, got %s", mp_type_name(o->type));
                if (!isfinite(x))
                        return dec_fail(d, "number is not finite");
                *(double *)p = x;
                return 0;
        }
        case PF_BOOL:
                if ((r = want(d, o, MSGPACK_OBJECT_BOOLEAN, "a boolean")) < 0)
                        return r;
                *(bool *)p = o->via.boolean;
                return 0;
        case PF_STRUCT:
                return dec_struct(d, f->sub, o, p, false);
        case PF_OPT_STRUCT: {
                void *sub = calloc(1, f->sub->size);
                if (!sub)
                        return anvil_err_set(d->err, ENOMEM, "Out of memory");
                *(void **)p = sub; /* owned by the message from here, freed with it on error */
                return dec_struct(d, f->sub, o, sub, false);
        }
        case PF_ARRAY: {
                if ((r = want(d, o, MSGPACK_OBJECT_ARRAY, "an array")) < 0)
                        return r;
                size_t n = o->via.array.size;
                if (f->max && n > f->max)
                        return dec_fail(d, "%zu items is over the limit of %llu", n,
                                        (unsigned long long)f->max);
                struct proto_array *a = p;
                a->items = calloc(n ? n : 1, f->sub->size);
                if (!a->items)
                        return anvil_err_set(d->err, ENOMEM, "Out of memory");
                a->n = n;
                size_t saved = d->path_len;
                for (size_t i = 0; i < n; i++) {
                        path_push(d, "[%zu]", i);
                        r = dec_struct(d, f->sub, &o->via.array.ptr[i],
                                       (uint8_t *)a->items + i * f->sub->size, false);
                        if (r < 0)
                                return r;
                        path_pop(d, saved);
                }
                return 0;
        }
        case PF_STRV: {
                if ((r = want(d, o, MSGPACK_OBJECT_ARRAY, "an array")) < 0)
                        return r;
                size_t n = o->via.array.size;
                if (f->max && n > f->max)
                        return dec_fail(d, "%zu items is over the limit of %llu", n,
                                        (unsigned long long)f->max);
                struct proto_strv *v = p;
                v->items = calloc(n ? n : 1, sizeof(char *));
                if (!v->items)
                        return anvil_err_set(d->err, ENOMEM, "Out of memory");
                v->n = n;
                size_t saved = d->path_len;
                for (size_t i = 0; i < n; i++) {
                        path_push(d, "[%zu]", i);
                        if ((r = dec_str(d, &o->via.array.ptr[i], PROTO_PATH_MAX, &v->items[i])) < 0)
                                return r;
                        path_pop(d, saved);
                }
                return 0;
        }
        }
        return dec_fail(d, "unsupported field type");
}

static int dec_struct(struct dec *d, const struct proto_schema *s, const msgpack_object *o,
                      void *dst, bool top)
{
        int r = want(d, o, MSGPACK_OBJECT_MAP, "a map");
        if (r < 0)
                return r;
        uint64_t seen = 0; /* schemas have fewer than 64 fields (checked by the unit tests) */
        unsigned envelope = 0; /* "v" and "type" seen, at the top level */
        size_t saved = d->path_len;
        for (uint32_t i = 0; i < o->via.map.size; i++) {
                const msgpack_object *k = &o->via.map.ptr[i].key;
                const msgpack_object *v = &o->via.map.ptr[i].val;
                if (k->type != MSGPACK_OBJECT_STR)
                        return dec_fail(d, "map key is %s, expected a string", mp_type_name(k->type));
                const char *kp = k->via.str.ptr;
                size_t kn = k->via.str.size;
                if (top && ((kn == 1 && kp[0] == 'v') || (kn == 4 && memcmp(kp, "type", 4) == 0))) {
                        /* Checked by proto_decode, which reads the first of each. A second one is
                         * refused like any duplicate: another decoder might take the last. */
                        unsigned bit = kn == 1 ? 1u : 2u;
                        if (envelope & bit)
                                return anvil_err_set(d->err, EBADMSG, "message.%s: duplicate field",
                                                     kn == 1 ? "v" : "type");
                        envelope |= bit;
                        continue;
                }
                size_t fi;
                for (fi = 0; fi < s->n_fields; fi++)
                        if (strlen(s->fields[fi].name) == kn && memcmp(s->fields[fi].name, kp, kn) == 0)
                                break;
                if (fi == s->n_fields) {
                        char pk[48];
                        printable(kp, kn, pk, sizeof(pk));
                        path_push(d, ".%s", pk);
                        return dec_fail(d, "unknown field");
                }
                path_push(d, ".%s", s->fields[fi].name);
                if (seen & (1ull << fi))
                        return dec_fail(d, "duplicate field");
                seen |= 1ull << fi;
                r = dec_field(d, &s->fields[fi], v, dst);
                if (r < 0)
                        return r;
                if (s->given_offset && v->type != MSGPACK_OBJECT_NIL)
                        *(uint64_t *)((uint8_t *)dst + s->given_offset) |= 1ull << fi;
                path_pop(d, saved);
        }
        for (size_t fi = 0; fi < s->n_fields; fi++)
                if (s->fields[fi].required && !(seen & (1ull << fi))) {
                        path_push(d, ".%s", s->fields[fi].name);
                        return dec_fail(d, "required field is missing");
                }
        return 0;
}

/* Depth is checked on the whole tree before any field is decoded, so that an unknown field
 * cannot smuggle a deep structure past the schema. msgpack-c itself stops at 32 levels. */
static int check_depth(struct dec *d, const msgpack_object *o, unsigned depth)
{
        if (o->type != MSGPACK_OBJECT_MAP && o->type != MSGPACK_OBJECT_ARRAY)
                return 0;
        if (depth > PROTO_DEPTH_MAX)
                return dec_fail(d, "nesting too deep (more than %d levels)", PROTO_DEPTH_MAX);
        size_t saved = d->path_len;
        if (o->type == MSGPACK_OBJECT_ARRAY) {
                for (uint32_t i = 0; i < o->via.array.size; i++) {
                        path_push(d, "[%u]", i);
                        int r = check_depth(d, &o->via.array.ptr[i], depth + 1);
                        if (r < 0)
                                return r;
                        path_pop(d, saved);
                }
                return 0;
        }
        for (uint32_t i = 0; i < o->via.map.size; i++) {
                const msgpack_object *k = &o->via.map.ptr[i].key;
                char pk[48] = "?";
                if (k->type == MSGPACK_OBJECT_STR)
                        printable(k->via.str.ptr, k->via.str.size, pk, sizeof(pk));
                path_push(d, ".%s", pk);
                int r = check_depth(d, &o->via.map.ptr[i].val, depth + 1);
                if (r < 0)
                        return r;
                path_pop(d, saved);
        }
        return 0;
}

static const msgpack_object *map_get(const msgpack_object *m, const char *key)
{
        size_t kn = strlen(key);
        for (uint32_t i = 0; i < m->via.map.size; i++) {
                const msgpack_object *k = &m->via.map.ptr[i].key;
                if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == kn &&
                    memcmp(k->via.str.ptr, key, kn) == 0)
                        return &m->via.map.ptr[i].val;
        }
        return NULL;
}

const char *proto_type_name(enum proto_type t)
{
        return (unsigned)t < _PROTO_TYPE_MAX ? proto_schemas[t]->name : "unknown";
}

static uint64_t be_uint(const uint8_t *p, size_t n)
{
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++)
                v = v << 8 | p[i];
        return v;
}

/* msgpack-c allocates a container's objects as soon as it reads the header, before any item
 * arrives: a 5-byte map32 header claiming 4 billion entries asks for 128 GiB (found by the
 * fuzzer). Every item takes at least one byte, so a container claiming more items than there
 * are bytes left is a frame that ends inside a value. Saying so before msgpack-c runs bounds
 * what it allocates by the frame's size; and no frame may hold more than PROTO_VALUES_MAX
 * values in all (the largest legitimate one holds some ten thousand), so a 16 MiB frame of
 * one-byte values cannot make it allocate 400 MB either. This walks the first value without
 * allocating; anything else odd is left for msgpack-c.
 * Returns 0, -EBADMSG (a count beyond the bytes left) or -E2BIG (too many values). */
static int counts_fit(const uint8_t *p, size_t len)
{
        size_t off = 0;
        uint64_t items = 1; /* values still to walk */
        uint64_t total = 1; /* values claimed so far */
        while (items > 0 && off < len) {
                uint8_t b = p[off++];
                uint64_t v = 0;   /* bytes to skip, or a count of items */
                size_t n = 0;     /* bytes after the type byte that hold v */
                unsigned per = 0; /* items per count: 1 for an array, 2 for a map, 0 for bytes */
                unsigned extra = 0;
                items--;
                if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
                        continue;
                if (b <= 0x8f)
                        v = b & 0x0f, per = 2;
                else if (b <= 0x9f)
                        v = b & 0x0f, per = 1;
                else if (b <= 0xbf)
                        v = b & 0x1f;
                else
                        switch (b) {
                        case 0xc4: case 0xd9: n = 1; break;             /* bin8, str8 */
                        case 0xc5: case 0xda: n = 2; break;             /* bin16, str16 */
                        case 0xc6: case 0xdb: n = 4; break;             /* bin32, str32 */
                        case 0xc7: n = 1, extra = 1; break;             /* ext8: length, then type */
                        case 0xc8: n = 2, extra = 1; break;
                        case 0xc9: n = 4, extra = 1; break;
                        case 0xcc: case 0xd0: v = 1; break;             /* (u)int8 */
                        case 0xcd: case 0xd1: v = 2; break;
                        case 0xca: case 0xce: case 0xd2: v = 4; break;  /* float32, (u)int32 */
                        case 0xcb: case 0xcf: case 0xd3: v = 8; break;
                        case 0xd4: v = 2; break;                        /* fixext: type, data */
                        case 0xd5: v = 3; break;
                        case 0xd6: v = 5; break;
                        case 0xd7: v = 9; break;
                        case 0xd8: v = 17; break;
                        case 0xdc: n = 2, per = 1; break;               /* array16 */
                        case 0xdd: n = 4, per = 1; break;
                        case 0xde: n = 2, per = 2; break;               /* map16 */
                        case 0xdf: n = 4, per = 2; break;
                        default: return 0;                              /* 0xc1, never used */
                        }
                if (n) {
                        if (len - off < n)
                                return 0;
                        v = be_uint(p + off, n) + extra;
                        off += n;
                }
                if (per) {
                        if (v * per > len - off)
                                return -EBADMSG;
                        items += v * per;
                        total += v * per;
                        if (total > PROTO_VALUES_MAX)
                                return -E2BIG;
                } else {
                        if (v > len - off)
                                return 0; /* a short string: msgpack-c allocates nothing for it */
                        off += (size_t)v;
                }
        }
        return 0;
}

int proto_decode(const uint8_t *buf, size_t len, struct proto_msg *out, struct anvil_err *err)
{
        struct dec d = { .path = "message", .path_len = 7, .err = err };
        memset(out, 0, sizeof(*out));
        if (len > PROTO_FRAME_MAX)
                return anvil_err_set(err, EMSGSIZE, "message: frame of %zu bytes is over the limit of %u",
                                     len, PROTO_FRAME_MAX);
        int fit = counts_fit(buf, len);
        if (fit == -EBADMSG)
                return anvil_err_set(err, EBADMSG, "message: truncated msgpack (the frame ends inside a value)");
        if (fit < 0)
                return anvil_err_set(err, E2BIG, "message: more than %u values in one frame", PROTO_VALUES_MAX);
        msgpack_unpacked up;
        msgpack_unpacked_init(&up);
        size_t off = 0;
        int r;
        char *tname = NULL;
        msgpack_unpack_return ur = msgpack_unpack_next(&up, (const char *)buf, len, &off);
        switch (ur) {
        case MSGPACK_UNPACK_SUCCESS:
                break;
        case MSGPACK_UNPACK_EXTRA_BYTES:
        case MSGPACK_UNPACK_CONTINUE:
                r = anvil_err_set(err, EBADMSG, "message: truncated msgpack (the frame ends inside a value)");
                goto out;
        case MSGPACK_UNPACK_NOMEM_ERROR:
                /* msgpack-c answers this too when nesting exceeds its 32-level stack. */
                r = anvil_err_set(err, EBADMSG, "message: nesting too deep (more than 32 levels) or out of memory");
                goto out;
        case MSGPACK_UNPACK_PARSE_ERROR:
        default:
                r = anvil_err_set(err, EBADMSG, "message: malformed msgpack");
                goto out;
        }
        if (off != len) {
                r = anvil_err_set(err, EBADMSG, "message: %zu trailing bytes after the map", len - off);
                goto out;
        }
        const msgpack_object *o = &up.data;
        if (o->type != MSGPACK_OBJECT_MAP) {
                r = dec_fail(&d, "expected a map, got %s", mp_type_name(o->type));
                goto out;
        }
        const msgpack_object *v = map_get(o, "v");
        if (!v) {
                r = anvil_err_set(err, EBADMSG, "message.v: required field is missing");
                goto out;
        }
        if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER || v->via.u64 != PROTO_VERSION) {
                r = anvil_err_set(err, EPROTO, "message.v: unsupported protocol version (expected %d)",
                                  PROTO_VERSION);
                goto out;
        }
        const msgpack_object *t = map_get(o, "type");
        if (!t) {
                r = anvil_err_set(err, EBADMSG, "message.type: required field is missing");
                goto out;
        }
        d.path_len = 0;
        path_push(&d, "message.type");
        if ((r = dec_str(&d, t, 32, &tname)) < 0)
                goto out;
        unsigned ti;
        for (ti = 0; ti < _PROTO_TYPE_MAX; ti++)
                if (strcmp(proto_schemas[ti]->name, tname) == 0)
                        break;
        if (ti == _PROTO_TYPE_MAX) {
                char pt[48];
                printable(tname, strlen(tname), pt, sizeof(pt));
                r = anvil_err_set(err, EBADMSG, "message.type: unknown message type '%s'", pt);
                goto out;
        }
        out->type = (enum proto_type)ti;
        d.path_len = 0;
        path_push(&d, "%s", proto_schemas[ti]->name);
        /* Depth is checked on the whole tree before any field is decoded, so that an unknown
         * field cannot smuggle a deep structure past the schema. */
        if ((r = check_depth(&d, o, 1)) < 0)
                goto out;
        r = dec_struct(&d, proto_schemas[ti], o, &out->u, true);
        if (r < 0)
                proto_msg_free(out);
out:
        free(tname);
        msgpack_unpacked_destroy(&up);
        return r < 0 ? r : 0;
}

void proto_msg_free(struct proto_msg *m)
{
        if ((unsigned)m->type < _PROTO_TYPE_MAX)
                proto_schema_free(proto_schemas[m->type], &m->u);
        memset(&m->u, 0, sizeof(m->u));
}

void proto_err_field(const struct anvil_err *err, char *buf, size_t size)
{
        /* Decoder messages are "<path>: <what>", and a path has no spaces; "message" alone is
         * the frame as a whole, which no single field is to blame for. */
        buf[0] = 0;
        const char *colon = strstr(err->msg, ": ");
        if (!colon)
                return;
        size_t n = (size_t)(colon - err->msg);
        if (n == 0 || n >= size || memchr(err->msg, ' ', n))
                return;
        if (n == 7 && memcmp(err->msg, "message", 7) == 0)
                return;
        memcpy(buf, err->msg, n);
        buf[n] = 0;
}

/* ---- encode ---- */

static int enc_struct(msgpack_packer *pk, const struct proto_schema *s, const void *src,
                      const char *type_name, struct anvil_err *err);

static void pack_cstr(msgpack_packer *pk, const char *s)
{
        size_t n = strlen(s);
        msgpack_pack_str(pk, n);
        msgpack_pack_str_body(pk, s, n);
}

static int enc_field(msgpack_packer *pk, const struct proto_schema *s, const struct proto_field *f,
                     const uint8_t *base, struct anvil_err *err)
{
        const void *p = base + f->offset;
        switch (f->type) {
        case PF_STR: {
                const char *v = *(char *const *)p;
                if (!v) {
                        if (f->required)
                                return anvil_err_set(err, EINVAL, "%s.%s: required field is unset",
                                                     s->name, f->name);
                        msgpack_pack_nil(pk);
                } else
                        pack_cstr(pk, v);
                return 0;
        }
        case PF_BIN: {
                const struct proto_bytes *b = p;
                if (!b->data && !f->required) {
                        msgpack_pack_nil(pk); /* not given */
                        return 0;
                }
                msgpack_pack_bin(pk, b->len);
                msgpack_pack_bin_body(pk, b->data, b->len);
                return 0;
        }
        case PF_UINT:
                if (s->given_offset && *(const uint64_t *)p == 0 &&
                    !(*(const uint64_t *)(base + s->given_offset) & (1ull << (size_t)(f - s->fields))))
                        msgpack_pack_nil(pk); /* unset: the receiver's default */
                else
                        msgpack_pack_uint64(pk, *(const uint64_t *)p);
                return 0;
        case PF_OPT_INT: {
                const struct proto_opt_int *v = p;
                if (v->set)
                        msgpack_pack_int64(pk, v->v);
                else
                        msgpack_pack_nil(pk);
                return 0;
        }
        case PF_DOUBLE:
                msgpack_pack_double(pk, *(const double *)p);
                return 0;
        case PF_BOOL:
                if (*(const bool *)p)
                        msgpack_pack_true(pk);
                else
                        msgpack_pack_false(pk);
                return 0;
        case PF_STRUCT:
                return enc_struct(pk, f->sub, p, NULL, err);
        case PF_OPT_STRUCT: {
                const void *sub = *(void *const *)p;
                if (!sub) {
                        msgpack_pack_nil(pk);
                        return 0;
                }
                return enc_struct(pk, f->sub, sub, NULL, err);
        }
        case PF_ARRAY: {
                const struct proto_array *a = p;
                msgpack_pack_array(pk, a->n);
                for (size_t i = 0; i < a->n; i++) {
                        int r = enc_struct(pk, f->sub, (const uint8_t *)a->items + i * f->sub->size,
                                           NULL, err);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        case PF_STRV: {
                const struct proto_strv *v = p;
                msgpack_pack_array(pk, v->n);
                for (size_t i = 0; i < v->n; i++)
                        pack_cstr(pk, v->items[i] ? v->items[i] : "");
                return 0;
        }
        }
        return anvil_err_set(err, EINVAL, "%s.%s: unsupported field type", s->name, f->name);
}

static int enc_struct(msgpack_packer *pk, const struct proto_schema *s, const void *src,
                      const char *type_name, struct anvil_err *err)
{
        /* An internal field unset is left off (proto_field.internal). */
        size_t n = s->n_fields;
        for (size_t i = 0; i < s->n_fields; i++)
                if (s->fields[i].internal && !*(void *const *)((const uint8_t *)src + s->fields[i].offset))
                        n--;
        msgpack_pack_map(pk, n + (type_name ? 2 : 0));
        if (type_name) {
                pack_cstr(pk, "v");
                msgpack_pack_uint64(pk, PROTO_VERSION);
                pack_cstr(pk, "type");
                pack_cstr(pk, type_name);
        }
        for (size_t i = 0; i < s->n_fields; i++) {
                if (s->fields[i].internal && !*(void *const *)((const uint8_t *)src + s->fields[i].offset))
                        continue;
                pack_cstr(pk, s->fields[i].name);
                int r = enc_field(pk, s, &s->fields[i], src, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int proto_encode(const struct proto_msg *m, uint8_t **out, size_t *out_len, struct anvil_err *err)
{
        if ((unsigned)m->type >= _PROTO_TYPE_MAX)
                return anvil_err_set(err, EINVAL, "Cannot encode message of unknown type %d", m->type);
        const struct proto_schema *s = proto_schemas[m->type];
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        msgpack_packer pk;
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        (void)msgpack_sbuffer_write(&sb, "\0\0\0\0", 4);
        int r = enc_struct(&pk, s, &m->u, s->name, err);
        if (r < 0)
                goto fail;
        if (!sb.data) {
                r = anvil_err_set(err, ENOMEM, "Out of memory encoding %s", s->name);
                goto fail;
        }
        size_t payload = sb.size - 4;
        if (payload > PROTO_FRAME_MAX) {
                r = anvil_err_set(err, EMSGSIZE, "%s: encoded frame of %zu bytes is over the limit of %u",
                                  s->name, payload, PROTO_FRAME_MAX);
                goto fail;
        }
        uint32_t be = htonl((uint32_t)payload);
        memcpy(sb.data, &be, 4);
        *out = (uint8_t *)msgpack_sbuffer_release(&sb);
        *out_len = payload + 4;
        return 0;
fail:
        msgpack_sbuffer_destroy(&sb);
        return r;
}

void proto_error_msg(struct proto_msg *m, const char *code, const char *message, const char *field,
                     const char *request_id)
{
        *m = (struct proto_msg){ .type = PROTO_ERROR };
        m->u.error.code = (char *)code;
        m->u.error.message = (char *)message;
        m->u.error.field = (field && *field) ? (char *)field : NULL;
        m->u.error.request_id = (char *)request_id;
}

int proto_encode_error(const char *code, const char *message, const char *field,
                       const char *request_id, uint8_t **out, size_t *out_len)
{
        struct proto_msg m;
        proto_error_msg(&m, code, message, field, request_id);
        return proto_encode(&m, out, out_len, NULL);
}

/* ---- builders ---- */

char *proto_strdup(const char *s)
{
        return s ? strdup(s) : NULL;
}

void proto_strv_free(struct proto_strv *v)
{
        for (size_t i = 0; i < v->n; i++)
                free(v->items[i]);
        free(v->items);
        v->items = NULL;
        v->n = 0;
}

int proto_strv_push(struct proto_strv *v, const char *s)
{
        char *c = strdup(s);
        if (!c)
                return -ENOMEM;
        char **ni = realloc(v->items, (v->n + 1) * sizeof(char *));
        if (!ni) {
                free(c);
                return -ENOMEM;
        }
        v->items = ni;
        v->items[v->n++] = c;
        return 0;
}

void *proto_array_push(struct proto_array *a, size_t item_size)
{
        void *ni = realloc(a->items, (a->n + 1) * item_size);
        if (!ni)
                return NULL;
        a->items = ni;
        void *item = (uint8_t *)a->items + a->n * item_size;
        memset(item, 0, item_size);
        a->n++;
        return item;
}
