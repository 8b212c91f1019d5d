/* Unit tests for proto/: every message type round-trips with every field set; every class of
 * malformed input is refused with its exact error text and field path; the frame reader copes
 * with frames split or joined arbitrarily; RunResult JSON has the names DESIGN §4 promises.
 *
 * The round trip and the comparison walk the schema tables rather than 13 hand-written
 * fillers and comparers, so a field added to a schema is covered without touching this file.
 * Malformed inputs are packed with msgpack_packer directly, because proto_encode cannot make
 * them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "proto/json.h"
#include "proto/names.h"
#include "proto/proto.h"

/* ---- a generic filler: every field of a schema set to a distinct, non-default value ---- */

static char *fill_text(const char *stem, unsigned k, uint64_t max)
{
        /* Characters of 1, 2, 3 and 4 bytes; cut at a character boundary to fit `max`. */
        char buf[160];
        snprintf(buf, sizeof(buf), "%s·%u ✓ é 𝄞", stem, k);
        size_t len = strlen(buf);
        if (max && len > max) {
                len = max;
                while (len > 0 && ((uint8_t)buf[len] & 0xC0) == 0x80)
                        len--;
                buf[len] = 0;
        }
        char *s = strdup(buf);
        assert_non_null(s);
        return s;
}

/* all: set optional fields too; otherwise only what is required, so optional ones travel as nil. */
static void fill_struct(const struct proto_schema *s, void *obj, unsigned *k, bool all)
{
        for (size_t i = 0; i < s->n_fields; i++) {
                const struct proto_field *f = &s->fields[i];
                void *p = (uint8_t *)obj + f->offset;
                unsigned n = ++*k;
                if (!all && !f->required && f->type != PF_STRUCT)
                        continue;
                switch (f->type) {
                case PF_STR:
                        *(char **)p = fill_text(f->name, n, f->max);
                        break;
                case PF_BIN: {
                        /* NULs inside, and a byte that is not UTF-8: bin is not text. */
                        static const uint8_t bytes[] = { 'a', 0, 0xff, 0, 'z' };
                        struct proto_bytes *b = p;
                        b->data = malloc(sizeof(bytes) + 1);
                        assert_non_null(b->data);
                        memcpy(b->data, bytes, sizeof(bytes));
                        b->data[sizeof(bytes)] = (uint8_t)n;
                        b->len = sizeof(bytes) + 1;
                        break;
                }
                case PF_UINT:
                        /* Values above INT64_MAX where the schema allows them: all 64 bits travel. */
                        *(uint64_t *)p = f->max ? 1 + n % f->max : UINT64_MAX - n;
                        break;
                case PF_OPT_INT: {
                        struct proto_opt_int *v = p;
                        v->set = true;
                        v->v = n % 2 ? INT64_MIN + n : -(int64_t)n * 1000003;
                        break;
                }
                case PF_DOUBLE:
                        *(double *)p = -(double)n * 1.5 - 0.1;
                        break;
                case PF_BOOL:
                        *(bool *)p = true;
                        break;
                case PF_STRUCT:
                        fill_struct(f->sub, p, k, all);
                        break;
                case PF_OPT_STRUCT: {
                        void *sub = calloc(1, f->sub->size);
                        assert_non_null(sub);
                        *(void **)p = sub;
                        fill_struct(f->sub, sub, k, all);
                        break;
                }
                case PF_ARRAY: {
                        struct proto_array *a = p;
                        for (int j = 0; j < 2; j++) {
                                void *item = proto_array_push(a, f->sub->size);
                                assert_non_null(item);
                                fill_struct(f->sub, item, k, all);
                        }
                        break;
                }
                case PF_STRV: {
                        struct proto_strv *v = p;
                        for (int j = 0; j < 2; j++) {
                                _cleanup_free_ char *t = fill_text("item", ++*k, 0);
                                assert_int_equal(proto_strv_push(v, t), 0);
                        }
                        break;
                }
                }
        }
}

/* ---- a generic comparer: fails naming the first field that differs ---- */

static void cmp_struct(const struct proto_schema *s, const void *a, const void *b, const char *path)
{
        for (size_t i = 0; i < s->n_fields; i++) {
                const struct proto_field *f = &s->fields[i];
                const void *pa = (const uint8_t *)a + f->offset, *pb = (const uint8_t *)b + f->offset;
                char sub[256];
                snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
                switch (f->type) {
                case PF_STR: {
                        const char *x = *(char *const *)pa, *y = *(char *const *)pb;
                        if (!x != !y || (x && strcmp(x, y) != 0))
                                fail_msg("%s: '%s' != '%s'", sub, x ? x : "(null)", y ? y : "(null)");
                        break;
                }
                case PF_BIN: {
                        const struct proto_bytes *x = pa, *y = pb;
                        if (x->len != y->len || (x->len && memcmp(x->data, y->data, x->len) != 0))
                                fail_msg("%s: bytes differ", sub);
                        break;
                }
                case PF_UINT:
                        if (*(const uint64_t *)pa != *(const uint64_t *)pb)
                                fail_msg("%s: %llu != %llu", sub, (unsigned long long)*(const uint64_t *)pa,
                                         (unsigned long long)*(const uint64_t *)pb);
                        break;
                case PF_OPT_INT: {
                        const struct proto_opt_int *x = pa, *y = pb;
                        if (x->set != y->set || (x->set && x->v != y->v))
                                fail_msg("%s: %d/%lld != %d/%lld", sub, x->set, (long long)x->v, y->set,
                                         (long long)y->v);
                        break;
                }
                case PF_DOUBLE:
                        if (memcmp(pa, pb, sizeof(double)) != 0)
                                fail_msg("%s: %g != %g", sub, *(const double *)pa, *(const double *)pb);
                        break;
                case PF_BOOL:
                        if (*(const bool *)pa != *(const bool *)pb)
                                fail_msg("%s: booleans differ", sub);
                        break;
                case PF_STRUCT:
                        cmp_struct(f->sub, pa, pb, sub);
                        break;
                case PF_OPT_STRUCT: {
                        const void *x = *(void *const *)pa, *y = *(void *const *)pb;
                        if (!x != !y)
                                fail_msg("%s: set on one side only", sub);
                        if (x)
                                cmp_struct(f->sub, x, y, sub);
                        break;
                }
                case PF_ARRAY: {
                        const struct proto_array *x = pa, *y = pb;
                        if (x->n != y->n)
                                fail_msg("%s: %zu items != %zu items", sub, x->n, y->n);
                        for (size_t j = 0; j < x->n; j++) {
                                char item[sizeof(sub) + 24];
                                snprintf(item, sizeof(item), "%s[%zu]", sub, j);
                                cmp_struct(f->sub, (const uint8_t *)x->items + j * f->sub->size,
                                           (const uint8_t *)y->items + j * f->sub->size, item);
                        }
                        break;
                }
                case PF_STRV: {
                        const struct proto_strv *x = pa, *y = pb;
                        if (x->n != y->n)
                                fail_msg("%s: %zu items != %zu items", sub, x->n, y->n);
                        for (size_t j = 0; j < x->n; j++)
                                if (strcmp(x->items[j], y->items[j]) != 0)
                                        fail_msg("%s[%zu]: '%s' != '%s'", sub, j, x->items[j], y->items[j]);
                        break;
                }
                }
        }
}

/* ---- round trips ---- */

static const char *const type_names[_PROTO_TYPE_MAX] = {
#define X(up, low) [PROTO_##up] = #low,
        PROTO_MESSAGES(X)
#undef X
};

static const enum proto_type all_types[_PROTO_TYPE_MAX] = {
#define X(up, low) [PROTO_##up] = PROTO_##up,
        PROTO_MESSAGES(X)
#undef X
};

static void roundtrip(enum proto_type t, bool all)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m = { .type = t }, d, d2;
        unsigned k = 0;
        fill_struct(proto_schemas[t], &m.u, &k, all);

        _cleanup_free_ uint8_t *buf = NULL;
        size_t len;
        assert_int_equal(proto_encode(&m, &buf, &len, &err), 0);
        assert_true(len > 4);
        uint32_t be;
        memcpy(&be, buf, 4);
        assert_int_equal(ntohl(be), len - 4);

        if (proto_decode(buf + 4, len - 4, &d, &err) < 0)
                fail_msg("decode failed: %s", err.msg);
        assert_int_equal(d.type, t);
        cmp_struct(proto_schemas[t], &m.u, &d.u, type_names[t]);

        /* The encoding is canonical: what was decoded encodes to the same bytes. */
        _cleanup_free_ uint8_t *buf2 = NULL;
        size_t len2;
        assert_int_equal(proto_encode(&d, &buf2, &len2, &err), 0);
        assert_int_equal(len2, len);
        assert_memory_equal(buf2, buf, len);

        /* proto_read_msg over a socket gives the same message. */
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(write(sv[0], buf, len), (ssize_t)len);
        (void)close(sv[0]);
        struct proto_reader r;
        proto_reader_init(&r, 0);
        assert_int_equal(proto_read_msg(sv[1], &r, &d2, &err), 1);
        cmp_struct(proto_schemas[t], &m.u, &d2.u, type_names[t]);
        proto_msg_free(&d2);
        assert_int_equal(proto_read_msg(sv[1], &r, &d2, &err), 0); /* clean end of stream */
        proto_reader_free(&r);
        (void)close(sv[1]);

        proto_msg_free(&d);
        proto_msg_free(&m);
}

static void test_roundtrip_full(void **state)
{
        roundtrip(*(const enum proto_type *)*state, true);
}

static void test_roundtrip_required_only(void **state)
{
        roundtrip(*(const enum proto_type *)*state, false);
}

/* dec_struct tracks fields in a 64-bit mask, so every struct, nested ones too, must stay under
 * 64 fields; a field named "v" or "type" would be shadowed by the envelope at the top level. */
static void check_schema(const struct proto_schema *s, bool top)
{
        assert_non_null(s->name);
        assert_true(s->n_fields > 0 && s->n_fields < 64);
        for (size_t i = 0; i < s->n_fields; i++) {
                const struct proto_field *f = &s->fields[i];
                assert_true(f->offset < s->size);
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(f->name, s->fields[j].name);
                if (top) {
                        assert_string_not_equal(f->name, "v");
                        assert_string_not_equal(f->name, "type");
                }
                bool has_sub = f->type == PF_STRUCT || f->type == PF_OPT_STRUCT || f->type == PF_ARRAY;
                assert_true(has_sub == (f->sub != NULL));
                if (has_sub)
                        check_schema(f->sub, false);
        }
}

static void test_schema_table(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        for (unsigned t = 0; t < _PROTO_TYPE_MAX; t++) {
                const struct proto_schema *s = proto_schemas[t];
                assert_non_null(s);
                assert_string_equal(s->name, type_names[t]);
                assert_string_equal(proto_type_name((enum proto_type)t), type_names[t]);
                assert_true(s->size <= sizeof(((struct proto_msg *)NULL)->u));
                check_schema(s, true);

                /* The name on the wire decodes back to the same type. */
                struct proto_msg m = { .type = (enum proto_type)t }, d;
                unsigned k = 0;
                fill_struct(s, &m.u, &k, false);
                _cleanup_free_ uint8_t *buf = NULL;
                size_t len;
                assert_int_equal(proto_encode(&m, &buf, &len, &err), 0);
                assert_int_equal(proto_decode(buf + 4, len - 4, &d, &err), 0);
                assert_int_equal(d.type, t);
                assert_string_equal(proto_type_name(d.type), type_names[t]);
                proto_msg_free(&d);
                proto_msg_free(&m);
        }
        assert_string_equal(proto_type_name(_PROTO_TYPE_MAX), "unknown");
        assert_string_equal(proto_type_name((enum proto_type)-1), "unknown");
}

/* ---- malformed messages, packed by hand ---- */

struct mp {
        msgpack_sbuffer sb;
        msgpack_packer pk;
};

static void mp_str(msgpack_packer *pk, const char *s, size_t n)
{
        msgpack_pack_str(pk, n);
        msgpack_pack_str_body(pk, s, n);
}

#define S(pk, lit) mp_str(pk, lit, sizeof(lit) - 1)

/* The envelope: a map of n fields plus "v" and "type". */
static void mp_head(msgpack_packer *pk, size_t n, const char *type)
{
        msgpack_pack_map(pk, n + 2);
        S(pk, "v");
        msgpack_pack_uint64(pk, PROTO_VERSION);
        S(pk, "type");
        mp_str(pk, type, strlen(type));
}

static void mp_nested_arrays(msgpack_packer *pk, int depth)
{
        for (int i = 0; i < depth; i++)
                msgpack_pack_array(pk, 1);
        msgpack_pack_nil(pk);
}

static void b_wrongtype(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request");
        S(pk, "source"), S(pk, "print(1)");
        S(pk, "limits"), msgpack_pack_map(pk, 1), S(pk, "wall_s"), S(pk, "10");
}
static void b_missing(msgpack_packer *pk) { mp_head(pk, 1, "run_request"), S(pk, "request_id"), S(pk, "r1"); }
static void b_required_nil(msgpack_packer *pk) { mp_head(pk, 1, "run_request"), S(pk, "source"), msgpack_pack_nil(pk); }
static void b_deep12(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request");
        S(pk, "source"), S(pk, "x");
        S(pk, "junk"), mp_nested_arrays(pk, 12);
}
/* The deepest nesting allowed: checked depth passes, so the unknown field is what is refused. */
static void b_deep7(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request");
        S(pk, "source"), S(pk, "x");
        S(pk, "junk"), mp_nested_arrays(pk, 7);
}
static void b_deep8(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request");
        S(pk, "source"), S(pk, "x");
        S(pk, "junk"), mp_nested_arrays(pk, 8);
}
static void b_deep40(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request");
        S(pk, "source"), S(pk, "x");
        S(pk, "junk"), mp_nested_arrays(pk, 40);
}
static void b_trailing(msgpack_packer *pk)
{
        mp_head(pk, 1, "run_request"), S(pk, "source"), S(pk, "x");
        msgpack_pack_nil(pk), msgpack_pack_nil(pk), msgpack_pack_nil(pk);
}
static void b_unknowntype(msgpack_packer *pk) { mp_head(pk, 0, "bogus"); }
static void b_type_not_str(msgpack_packer *pk)
{
        msgpack_pack_map(pk, 2), S(pk, "v"), msgpack_pack_uint64(pk, 1), S(pk, "type"), msgpack_pack_uint64(pk, 1);
}
static void b_no_type(msgpack_packer *pk) { msgpack_pack_map(pk, 1), S(pk, "v"), msgpack_pack_uint64(pk, 1); }
static void b_unknownfield(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), S(pk, "bogus"), msgpack_pack_true(pk);
}
static void b_duplicate(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "a"), S(pk, "source"), S(pk, "b");
}
/* A second "type" must not be ignored: another decoder might take the last one. */
static void b_duplicate_type(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "a"), S(pk, "type"), S(pk, "hello");
}
static void b_version(msgpack_packer *pk)
{
        msgpack_pack_map(pk, 3), S(pk, "v"), msgpack_pack_uint64(pk, 2);
        S(pk, "type"), S(pk, "run_request"), S(pk, "source"), S(pk, "x");
}
static void b_version_str(msgpack_packer *pk)
{
        msgpack_pack_map(pk, 3), S(pk, "v"), S(pk, "1");
        S(pk, "type"), S(pk, "run_request"), S(pk, "source"), S(pk, "x");
}
static void b_no_version(msgpack_packer *pk)
{
        msgpack_pack_map(pk, 2), S(pk, "type"), S(pk, "run_request"), S(pk, "source"), S(pk, "x");
}
static void b_utf8(msgpack_packer *pk) { mp_head(pk, 1, "run_request"), S(pk, "source"), S(pk, "a\xC0\xAF"); }
static void b_nul(msgpack_packer *pk) { mp_head(pk, 1, "run_request"), S(pk, "source"), S(pk, "a\0b"); }
static void b_str_as_bin(msgpack_packer *pk)
{
        mp_head(pk, 1, "run_request"), S(pk, "source");
        msgpack_pack_bin(pk, 1), msgpack_pack_bin_body(pk, "x", 1);
}
static void b_negative(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x");
        S(pk, "limits"), msgpack_pack_map(pk, 1), S(pk, "wall_s"), msgpack_pack_int64(pk, -1);
}
static void b_key_int(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), msgpack_pack_uint64(pk, 7), S(pk, "y");
}
static void b_key_nested(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x");
        S(pk, "limits"), msgpack_pack_map(pk, 1), msgpack_pack_nil(pk), msgpack_pack_uint64(pk, 1);
}
static void b_not_map(msgpack_packer *pk) { msgpack_pack_array(pk, 2), S(pk, "v"), msgpack_pack_uint64(pk, 1); }
static void b_item_missing(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), S(pk, "inputs"), msgpack_pack_array(pk, 2);
        msgpack_pack_map(pk, 2), S(pk, "name"), S(pk, "a.csv"), S(pk, "data");
        msgpack_pack_bin(pk, 0), msgpack_pack_bin_body(pk, "", 0);
        msgpack_pack_map(pk, 1), S(pk, "data"), msgpack_pack_bin(pk, 0), msgpack_pack_bin_body(pk, "", 0);
}
static void b_bin_as_str(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), S(pk, "inputs"), msgpack_pack_array(pk, 1);
        msgpack_pack_map(pk, 2), S(pk, "name"), S(pk, "a.csv"), S(pk, "data"), S(pk, "text");
}
static void b_too_many_inputs(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), S(pk, "inputs");
        msgpack_pack_array(pk, PROTO_INPUTS_MAX + 1);
        for (unsigned i = 0; i < PROTO_INPUTS_MAX + 1; i++)
                msgpack_pack_map(pk, 0);
}
static void b_strv_item(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), S(pk, "capabilities_requested");
        msgpack_pack_array(pk, 2), S(pk, "network"), msgpack_pack_uint64(pk, 5);
}
static void b_egress_str(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), S(pk, "egress"), S(pk, "0");
}
static void b_uint_over_max(msgpack_packer *pk)
{
        mp_head(pk, 2, "task_submit"), S(pk, "task"), S(pk, "t"), S(pk, "max_steps"), msgpack_pack_uint64(pk, 101);
}
static void b_opt_int_range(msgpack_packer *pk)
{
        mp_head(pk, 1, "runner_event"), S(pk, "event"), msgpack_pack_map(pk, 4);
        S(pk, "t_ms"), msgpack_pack_uint64(pk, 1), S(pk, "layer"), S(pk, "python"), S(pk, "kind"), S(pk, "x");
        S(pk, "line"), msgpack_pack_uint64(pk, UINT64_MAX);
}
static void b_opt_struct_type(msgpack_packer *pk)
{
        mp_head(pk, 2, "task_submit"), S(pk, "task"), S(pk, "t"), S(pk, "model"), S(pk, "gpt");
}
static void b_nan(msgpack_packer *pk)
{
        /* A run_result is long; only the double matters, so stop at the first refused field. */
        mp_head(pk, 1, "run_result"), S(pk, "peak_rss_mb"), msgpack_pack_double(pk, NAN);
}
/* More values than any legitimate frame holds, each one byte: msgpack-c would allocate 24
 * bytes for each before the schema saw any of them. */
static void b_many_values(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), S(pk, "junk");
        msgpack_pack_array(pk, PROTO_VALUES_MAX);
        for (unsigned i = 0; i < PROTO_VALUES_MAX; i++)
                msgpack_pack_nil(pk);
}
/* A 5-byte header claiming 4 billion entries: msgpack-c would allocate 128 GiB for it. */
static void b_huge_count(msgpack_packer *pk)
{
        mp_head(pk, 2, "run_request"), S(pk, "source"), S(pk, "x"), S(pk, "limits");
        msgpack_pack_map(pk, UINT32_MAX);
        S(pk, "wall_s"), msgpack_pack_uint64(pk, 1);
}

struct bad_case {
        void (*build)(msgpack_packer *pk);
        int code; /* positive errno */
        const char *msg;
        const char *field;
};

#define BAD(n, c, m, f) static const struct bad_case bad_##n = { b_##n, c, m, f };
BAD(wrongtype, EBADMSG, "run_request.limits.wall_s: expected an unsigned integer, got a string",
    "run_request.limits.wall_s")
BAD(missing, EBADMSG, "run_request.source: required field is missing", "run_request.source")
BAD(required_nil, EBADMSG, "run_request.source: is required, got nil", "run_request.source")
BAD(deep12, EBADMSG, "run_request.junk[0][0][0][0][0][0][0]: nesting too deep (more than 8 levels)",
    "run_request.junk[0][0][0][0][0][0][0]")
BAD(deep8, EBADMSG, "run_request.junk[0][0][0][0][0][0][0]: nesting too deep (more than 8 levels)",
    "run_request.junk[0][0][0][0][0][0][0]")
BAD(deep7, EBADMSG, "run_request.junk: unknown field", "run_request.junk")
BAD(deep40, EBADMSG, "message: nesting too deep (more than 32 levels) or out of memory", "")
BAD(trailing, EBADMSG, "message: 3 trailing bytes after the map", "")
BAD(unknowntype, EBADMSG, "message.type: unknown message type 'bogus'", "message.type")
BAD(type_not_str, EBADMSG, "message.type: expected a string, got an unsigned integer", "message.type")
BAD(no_type, EBADMSG, "message.type: required field is missing", "message.type")
BAD(unknownfield, EBADMSG, "run_request.bogus: unknown field", "run_request.bogus")
BAD(duplicate, EBADMSG, "run_request.source: duplicate field", "run_request.source")
BAD(duplicate_type, EBADMSG, "message.type: duplicate field", "message.type")
BAD(version, EPROTO, "message.v: unsupported protocol version (expected 1)", "message.v")
BAD(version_str, EPROTO, "message.v: unsupported protocol version (expected 1)", "message.v")
BAD(no_version, EBADMSG, "message.v: required field is missing", "message.v")
BAD(utf8, EBADMSG, "run_request.source: string is not valid UTF-8", "run_request.source")
BAD(nul, EBADMSG, "run_request.source: string contains a NUL byte", "run_request.source")
BAD(str_as_bin, EBADMSG, "run_request.source: expected a string, got binary", "run_request.source")
BAD(negative, EBADMSG, "run_request.limits.wall_s: expected an unsigned integer, got a negative integer",
    "run_request.limits.wall_s")
BAD(key_int, EBADMSG, "run_request: map key is an unsigned integer, expected a string", "run_request")
BAD(key_nested, EBADMSG, "run_request.limits: map key is nil, expected a string", "run_request.limits")
BAD(not_map, EBADMSG, "message: expected a map, got an array", "")
BAD(item_missing, EBADMSG, "run_request.inputs[1].name: required field is missing", "run_request.inputs[1].name")
BAD(bin_as_str, EBADMSG, "run_request.inputs[0].data: expected binary, got a string", "run_request.inputs[0].data")
BAD(too_many_inputs, EBADMSG, "run_request.inputs: 33 items is over the limit of 32", "run_request.inputs")
BAD(strv_item, EBADMSG, "run_request.capabilities_requested[1]: expected a string, got an unsigned integer",
    "run_request.capabilities_requested[1]")
BAD(egress_str, EBADMSG, "run_request.egress: expected an integer, got a string", "run_request.egress")
BAD(uint_over_max, EBADMSG, "task_submit.max_steps: 101 is over the limit of 100", "task_submit.max_steps")
BAD(opt_int_range, EBADMSG, "runner_event.event.line: expected an integer, got an unsigned integer",
    "runner_event.event.line")
BAD(opt_struct_type, EBADMSG, "task_submit.model: expected a map, got a string", "task_submit.model")
BAD(huge_count, EBADMSG, "message: truncated msgpack (the frame ends inside a value)", "")
BAD(many_values, E2BIG, "message: more than 262144 values in one frame", "")
BAD(nan, EBADMSG, "run_result.peak_rss_mb: number is not finite", "run_result.peak_rss_mb")
#undef BAD

static void expect_fail(const uint8_t *buf, size_t len, int code, const char *msg, const char *field)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m;
        assert_int_equal(proto_decode(buf, len, &m, &err), -code);
        assert_int_equal(err.code, code);
        assert_string_equal(err.msg, msg);
        char f[256];
        proto_err_field(&err, f, sizeof(f));
        assert_string_equal(f, field);
        /* A refused message owns nothing: freeing it again is harmless. */
        proto_msg_free(&m);
}

static void test_malformed(void **state)
{
        const struct bad_case *c = *state;
        struct mp m;
        msgpack_sbuffer_init(&m.sb);
        msgpack_packer_init(&m.pk, &m.sb, msgpack_sbuffer_write);
        c->build(&m.pk);
        expect_fail((const uint8_t *)m.sb.data, m.sb.size, c->code, c->msg, c->field);
        msgpack_sbuffer_destroy(&m.sb);
}

static uint8_t *encode_filled(enum proto_type t, size_t *len)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m = { .type = t };
        unsigned k = 0;
        uint8_t *buf;
        fill_struct(proto_schemas[t], &m.u, &k, true);
        assert_int_equal(proto_encode(&m, &buf, len, &err), 0);
        proto_msg_free(&m);
        return buf;
}

/* Every proper prefix of a valid payload ends inside a value. */
static void test_malformed_truncated(void **state)
{
        (void)state;
        size_t len;
        _cleanup_free_ uint8_t *buf = encode_filled(PROTO_RUN_REQUEST, &len);
        for (size_t cut = 0; cut < len - 4; cut++)
                expect_fail(buf + 4, cut, EBADMSG, "message: truncated msgpack (the frame ends inside a value)", "");
}

static void test_malformed_oversize(void **state)
{
        (void)state;
        _cleanup_free_ uint8_t *big = calloc(1, PROTO_FRAME_MAX + 1);
        assert_non_null(big);
        expect_fail(big, PROTO_FRAME_MAX + 1, EMSGSIZE, "message: frame of 16777217 bytes is over the limit of 16777216",
                    "");
        /* At the limit the size is fine; the zeros are one integer and trailing bytes. */
        expect_fail(big, PROTO_FRAME_MAX, EBADMSG, "message: 16777215 trailing bytes after the map", "");

        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_reader r;
        const uint8_t *p;
        size_t n;
        uint8_t hdr[4] = { 0x01, 0x00, 0x00, 0x01 }; /* PROTO_FRAME_MAX + 1 */
        proto_reader_init(&r, 0);
        assert_int_equal(proto_reader_feed(&r, hdr, sizeof(hdr), &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), -EMSGSIZE);
        assert_string_equal(err.msg, "message: frame of 16777217 bytes is over the limit of 16777216");
        proto_reader_free(&r);

        uint8_t at_max[4] = { 0x01, 0x00, 0x00, 0x00 };
        proto_reader_init(&r, 0);
        assert_int_equal(proto_reader_feed(&r, at_max, sizeof(at_max), &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 0); /* waits for the payload */
        assert_true(proto_reader_partial(&r));
        proto_reader_free(&r);

        /* A lowered limit, both ways. */
        uint8_t h100[4] = { 0, 0, 0, 100 }, h101[4] = { 0, 0, 0, 101 };
        proto_reader_init(&r, 100);
        assert_int_equal(proto_reader_feed(&r, h100, 4, &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 0);
        proto_reader_free(&r);
        proto_reader_init(&r, 100);
        assert_int_equal(proto_reader_feed(&r, h101, 4, &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), -EMSGSIZE);
        assert_string_equal(err.msg, "message: frame of 101 bytes is over the limit of 100");
        proto_reader_free(&r);
}

static void pack_source(size_t n, msgpack_sbuffer *sb)
{
        msgpack_packer pk;
        msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
        _cleanup_free_ char *src = malloc(n);
        assert_non_null(src);
        memset(src, 'a', n);
        mp_head(&pk, 1, "run_request");
        S(&pk, "source");
        mp_str(&pk, src, n);
}

static void test_malformed_oversize_string(void **state)
{
        (void)state;
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        pack_source(PROTO_SOURCE_MAX + 1, &sb);
        expect_fail((const uint8_t *)sb.data, sb.size, EBADMSG,
                    "run_request.source: string of 1048577 bytes is over the limit of 1048576", "run_request.source");
        msgpack_sbuffer_destroy(&sb);

        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m;
        msgpack_sbuffer_init(&sb);
        pack_source(PROTO_SOURCE_MAX, &sb);
        assert_int_equal(proto_decode((const uint8_t *)sb.data, sb.size, &m, &err), 0);
        assert_int_equal(strlen(m.u.run_request.source), PROTO_SOURCE_MAX);
        proto_msg_free(&m);
        msgpack_sbuffer_destroy(&sb);
}

/* ---- the frame reader ---- */

static void test_reader_zero_length(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_reader r;
        const uint8_t *p;
        size_t n;
        static const uint8_t zero[4] = { 0, 0, 0, 0 };
        proto_reader_init(&r, 0);
        assert_int_equal(proto_reader_feed(&r, zero, 4, &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), -EBADMSG);
        assert_string_equal(err.msg, "message: empty frame");
        proto_reader_free(&r);
}

static void test_reader_huge_header(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_reader r;
        const uint8_t *p;
        size_t n;
        static const uint8_t huge[4] = { 0xff, 0xff, 0xff, 0xff };
        proto_reader_init(&r, 0);
        assert_int_equal(proto_reader_feed(&r, huge, 4, &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), -EMSGSIZE);
        assert_string_equal(err.msg, "message: frame of 4294967295 bytes is over the limit of 16777216");
        proto_reader_free(&r);
}

/* Two frames (a small and a large one) back to back, and where each ends. */
static uint8_t *two_frames(size_t *len, size_t *first)
{
        size_t a, b;
        _cleanup_free_ uint8_t *fa = encode_filled(PROTO_HELLO, &a);
        _cleanup_free_ uint8_t *fb = encode_filled(PROTO_TASK_RESULT, &b);
        uint8_t *s = malloc(a + b);
        assert_non_null(s);
        memcpy(s, fa, a);
        memcpy(s + a, fb, b);
        *len = a + b;
        *first = a;
        return s;
}

static void check_frame(const uint8_t *payload, size_t n, enum proto_type t)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m;
        assert_int_equal(proto_decode(payload, n, &m, &err), 0);
        assert_int_equal(m.type, t);
        proto_msg_free(&m);
}

static void test_reader_byte_at_a_time(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        size_t len, first;
        _cleanup_free_ uint8_t *s = two_frames(&len, &first);
        struct proto_reader r;
        proto_reader_init(&r, 0);
        unsigned got = 0;
        for (size_t i = 0; i < len; i++) {
                assert_int_equal(proto_reader_feed(&r, s + i, 1, &err), 0);
                const uint8_t *p;
                size_t n;
                int k = proto_reader_next(&r, &p, &n, &err);
                assert_true(k >= 0);
                if (k == 0) {
                        assert_true(proto_reader_partial(&r));
                        continue;
                }
                /* A frame comes out exactly when its last byte arrives, and only then. */
                got++;
                if (got == 1) {
                        assert_int_equal(i + 1, first);
                        assert_int_equal(n, first - 4);
                        assert_memory_equal(p, s + 4, n);
                        check_frame(p, n, PROTO_HELLO);
                } else {
                        assert_int_equal(i + 1, len);
                        assert_int_equal(n, len - first - 4);
                        assert_memory_equal(p, s + first + 4, n);
                        check_frame(p, n, PROTO_TASK_RESULT);
                }
                assert_false(proto_reader_partial(&r));
                const uint8_t *p2;
                assert_int_equal(proto_reader_next(&r, &p2, &n, &err), 0);
        }
        assert_int_equal(got, 2);
        assert_false(proto_reader_partial(&r));
        proto_reader_free(&r);
}

/* The reader's memory (issue 9, F4): a frame's buffer grows with what has arrived, never past
 * the size its header declares (16 MiB + 4 took 32 MiB before), and is given back once the
 * frame is taken out, so a connection that sent one large frame holds nothing while idle. */
static void test_reader_memory(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_reader r;
        const uint8_t *p;
        size_t n;
        const size_t fl = 1000000;
        _cleanup_free_ uint8_t *frame = calloc(1, fl + 4);
        assert_non_null(frame);
        uint32_t be = htonl((uint32_t)fl);
        memcpy(frame, &be, 4);
        proto_reader_init(&r, 0);
        assert_int_equal(proto_reader_feed(&r, frame, 4 + 10, &err), 0);
        assert_true(r.cap < 65536); /* the header alone allocates nothing like the frame */
        for (size_t off = 14; off < fl + 4; off += 65536) {
                size_t k = fl + 4 - off < 65536 ? fl + 4 - off : 65536;
                assert_int_equal(proto_reader_next(&r, &p, &n, &err), 0);
                assert_int_equal(proto_reader_feed(&r, frame + off, k, &err), 0);
                assert_true(r.cap <= fl + 4);
        }
        assert_int_equal(r.cap, fl + 4);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 1);
        assert_int_equal(n, fl);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 0);
        assert_null(r.buf);
        assert_int_equal(r.cap, 0);
        assert_false(proto_reader_partial(&r));
        proto_reader_free(&r);
}

static void test_reader_two_in_one_feed(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        size_t len, first;
        _cleanup_free_ uint8_t *s = two_frames(&len, &first);
        struct proto_reader r;
        const uint8_t *p;
        size_t n;
        proto_reader_init(&r, 0);
        assert_int_equal(proto_reader_feed(&r, s, len, &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 1);
        check_frame(p, n, PROTO_HELLO);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 1);
        check_frame(p, n, PROTO_TASK_RESULT);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 0);
        assert_false(proto_reader_partial(&r));

        /* The same again with the second frame cut short: the first comes out, the rest waits. */
        assert_int_equal(proto_reader_feed(&r, s, len - 1, &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 1);
        check_frame(p, n, PROTO_HELLO);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 0);
        assert_true(proto_reader_partial(&r));
        assert_int_equal(proto_reader_feed(&r, s + len - 1, 1, &err), 0);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 1);
        check_frame(p, n, PROTO_TASK_RESULT);
        assert_int_equal(proto_reader_next(&r, &p, &n, &err), 0);
        assert_false(proto_reader_partial(&r));
        proto_reader_free(&r);
}

static void test_read_msg_truncated_stream(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        size_t len;
        _cleanup_free_ uint8_t *buf = encode_filled(PROTO_HELLO, &len);
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(write(sv[0], buf, len - 1), (ssize_t)(len - 1));
        (void)close(sv[0]);
        struct proto_reader r;
        struct proto_msg m;
        proto_reader_init(&r, 0);
        assert_int_equal(proto_read_msg(sv[1], &r, &m, &err), -EBADMSG);
        assert_string_equal(err.msg, "message: truncated frame at end of stream");
        proto_reader_free(&r);
        (void)close(sv[1]);
}

static void test_encode_error_frame(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len;
        struct proto_msg m;
        assert_int_equal(proto_encode_error("bad_message", "run_request.source: required field is missing",
                                            "run_request.source", "r-7", &buf, &len),
                         0);
        assert_int_equal(proto_decode(buf + 4, len - 4, &m, &err), 0);
        assert_int_equal(m.type, PROTO_ERROR);
        assert_string_equal(m.u.error.code, "bad_message");
        assert_string_equal(m.u.error.message, "run_request.source: required field is missing");
        assert_string_equal(m.u.error.field, "run_request.source");
        assert_string_equal(m.u.error.request_id, "r-7");
        proto_msg_free(&m);
        free(TAKE_PTR(buf));
        /* An empty field means "no field": it travels as nil. */
        assert_int_equal(proto_encode_error("bad_frame", "message: empty frame", "", NULL, &buf, &len), 0);
        assert_int_equal(proto_decode(buf + 4, len - 4, &m, &err), 0);
        assert_null(m.u.error.field);
        assert_null(m.u.error.request_id);
        proto_msg_free(&m);
        /* The message the supervisor and the broker send (proto_error_msg): the whole of it
         * set, whatever was in it before. */
        memset(&m, 0x5a, sizeof(m));
        proto_error_msg(&m, "busy", "try again", NULL, "r-8");
        assert_int_equal(m.type, PROTO_ERROR);
        assert_string_equal(m.u.error.code, "busy");
        assert_string_equal(m.u.error.message, "try again");
        assert_null(m.u.error.field);
        assert_string_equal(m.u.error.request_id, "r-8");
        proto_error_msg(&m, "busy", "try again", "", NULL);
        assert_null(m.u.error.field);
        assert_null(m.u.error.request_id);
}

static void test_encode_required_unset(void **state)
{
        (void)state;
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m = { .type = PROTO_HELLO };
        uint8_t *buf = NULL;
        size_t len;
        assert_int_equal(proto_encode(&m, &buf, &len, &err), -EINVAL);
        assert_string_equal(err.msg, "hello.role: required field is unset");
        assert_null(buf);
}

/* ---- RunResult JSON (DESIGN §4) ---- */

static void assert_keys(json_t *o, const char *const *want, size_t n_want, const char *const *extra, size_t n_extra)
{
        assert_true(json_is_object(o));
        for (size_t i = 0; i < n_want; i++)
                if (!json_object_get(o, want[i]))
                        fail_msg("missing key '%s'", want[i]);
        for (size_t i = 0; i < n_extra; i++)
                if (!json_object_get(o, extra[i]))
                        fail_msg("missing key '%s'", extra[i]);
        assert_int_equal(json_object_size(o), n_want + n_extra);
}

static void test_run_result_json(void **state)
{
        (void)state;
        struct proto_run_result r = { 0 };
        r.run_id = "r-1";
        r.status = "killed";
        r.killed = "killed: timeout";
        r.isolation.tier = "full";
        char *mech[] = { "userns", "seccomp" };
        r.isolation.mechanisms = (struct proto_strv){ mech, 2 };
        struct proto_event ev[2] = {
                { .t_ms = 5, .layer = "python", .kind = "print" },
                { .t_ms = 10005, .layer = "supervisor", .kind = "kill", .op = "wall clock", .reason = "timeout",
                  .message = "killed: timeout", .line = { true, 3 } },
        };
        r.events = (struct proto_array){ ev, 2 };
        r.out_text = "héllo\n";
        r.err_text = "";
        struct proto_artifact art = { "out/report.csv", 12, "ab" };
        r.artifacts = (struct proto_array){ &art, 1 };
        r.peak_rss_mb = 612.5;
        r.cpu_ms = 4990;
        r.wall_ms = 10005;
        r.blast_radius.network = "none";
        r.blast_radius.processes = "64";
        /* The variables are JSON text, carried as a string: the tool's word, not parsed here. */
        r.variables = "{\"n\":3}";
        struct proto_variable_dropped dropped = { "df", "DataFrame", "is not JSON-serialisable" };
        r.variables_dropped = (struct proto_array){ &dropped, 1 };

        json_t *j = proto_to_json(&proto_run_result_schema, &r);
        assert_non_null(j);
        /* The names DESIGN §4 lists, spelled exactly; the wire also carries the extras. */
        static const char *const top[] = { "run_id", "status", "exit_code", "killed", "isolation", "events",
                                           "stdout", "stderr", "artifacts", "peak_rss_mb", "cpu_ms", "wall_ms",
                                           "capabilities", "blast_radius" };
        static const char *const top_extra[] = { "request_id", "signal", "stdout_truncated", "stdout_bytes",
                                                 "stderr_truncated", "stderr_bytes", "artifacts_dir", "cgroup",
                                                 "variables", "variables_dropped", "final_answer",
                                                 "not_stored", "connections" };
        static const char *const iso[] = { "tier", "mechanisms" };
        static const char *const evk[] = { "t_ms", "layer", "kind", "op", "reason", "message", "line" };
        static const char *const ev_extra[] = { "col", "traceback" };
        static const char *const artk[] = { "path", "bytes", "sha256" };
        assert_keys(j, top, ELEMENTSOF(top), top_extra, ELEMENTSOF(top_extra));
        assert_keys(json_object_get(j, "isolation"), iso, ELEMENTSOF(iso), NULL, 0);
        json_t *evs = json_object_get(j, "events");
        assert_int_equal(json_array_size(evs), 2);
        for (size_t i = 0; i < 2; i++)
                assert_keys(json_array_get(evs, i), evk, ELEMENTSOF(evk), ev_extra, ELEMENTSOF(ev_extra));
        json_t *arts = json_object_get(j, "artifacts");
        assert_int_equal(json_array_size(arts), 1);
        assert_keys(json_array_get(arts, 0), artk, ELEMENTSOF(artk), NULL, 0);

        /* Unset optional values are null, not absent and not zero. */
        assert_true(json_is_null(json_object_get(j, "exit_code")));
        assert_true(json_is_null(json_object_get(j, "request_id")));
        assert_true(json_is_null(json_object_get(j, "signal")));
        assert_true(json_is_null(json_object_get(j, "artifacts_dir")));
        assert_true(json_is_null(json_object_get(j, "cgroup")));
        assert_true(json_is_null(json_object_get(j, "final_answer")));
        assert_true(json_is_null(json_object_get(json_object_get(json_object_get(j, "blast_radius"), "limits"),
                                                 "cpu_quota_pct")));
        json_t *e0 = json_array_get(evs, 0);
        assert_true(json_is_null(json_object_get(e0, "op")));
        assert_true(json_is_null(json_object_get(e0, "line")));
        assert_int_equal(json_integer_value(json_object_get(json_array_get(evs, 1), "line")), 3);

        /* The whole rendering, verbatim: this is the stable surface scripts read. */
        _cleanup_free_ char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
        assert_string_equal(
                s,
                "{\"artifacts\":[{\"bytes\":12,\"path\":\"out/report.csv\",\"sha256\":\"ab\"}],\"artifacts_dir\":null,"
                "\"blast_radius\":{\"hosts\":[],\"limits\":{\"cpu_quota_pct\":null,\"cpu_s\":0,\"files_bytes\":0,\"memory_mb\":0,\"output_bytes\":0,"
                "\"pids\":0,\"wall_s\":0},\"network\":\"none\",\"processes\":\"64\",\"read\":[],\"write\":[]},"
                "\"capabilities\":{\"denied\":[],\"granted\":[],\"requested\":[]},\"cgroup\":null,\"connections\":[],\"cpu_ms\":4990,"
                "\"events\":[{\"col\":null,\"kind\":\"print\",\"layer\":\"python\",\"line\":null,\"message\":null,\"op\":null,"
                "\"reason\":null,\"t_ms\":5,\"traceback\":null},{\"col\":null,\"kind\":\"kill\",\"layer\":\"supervisor\","
                "\"line\":3,\"message\":\"killed: timeout\",\"op\":\"wall clock\",\"reason\":\"timeout\","
                "\"t_ms\":10005,\"traceback\":null}],\"exit_code\":null,\"final_answer\":null,\"isolation\":{\"mechanisms\":[\"userns\","
                "\"seccomp\"],\"tier\":\"full\"},\"killed\":\"killed: timeout\",\"not_stored\":null,\"peak_rss_mb\":612.5,"
                "\"request_id\":null,\"run_id\":\"r-1\",\"signal\":null,\"status\":\"killed\",\"stderr\":\"\","
                "\"stderr_bytes\":0,\"stderr_truncated\":false,\"stdout\":\"h\\u00E9llo\\n\",\"stdout_bytes\":0,"
                "\"stdout_truncated\":false,\"variables\":\"{\\\"n\\\":3}\",\"variables_dropped\":[{\"name\":\"df\","
                "\"reason\":\"is not JSON-serialisable\",\"type\":\"DataFrame\"}],\"wall_ms\":10005}");

        /* Back from JSON (the broker's show_request reads its stored results so): the same
         * rendering again, field for field. */
        struct proto_run_result back = { 0 };
        assert_int_equal(proto_from_json(&proto_run_result_schema, j, &back), 0);
        json_t *j2 = proto_to_json(&proto_run_result_schema, &back);
        _cleanup_free_ char *s2 = json_dumps(j2, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
        assert_string_equal(s2, s);
        assert_true(back.exit_code.set == false && back.events.n == 2 && back.peak_rss_mb == 612.5);
        json_decref(j2);
        proto_schema_free(&proto_run_result_schema, &back);
        /* Each field's type and bound checked: a wrong type, a string over its bound, a
         * required field missing are refused, not taken for another value. */
        const char *bad[] = { "status", "run_id", "cpu_ms" };
        json_t *vals[] = { json_integer(3), json_string("x"), json_integer(-1) };
        char big[PROTO_ID_MAX + 2];
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        json_decref(vals[1]);
        vals[1] = json_string(big);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                json_t *c = json_deep_copy(j);
                json_object_set_new(c, bad[i], vals[i]);
                struct proto_run_result b = { 0 };
                assert_int_equal(proto_from_json(&proto_run_result_schema, c, &b), -EINVAL);
                proto_schema_free(&proto_run_result_schema, &b);
                json_decref(c);
        }
        json_t *c = json_deep_copy(j);
        json_object_del(c, "run_id");
        struct proto_run_result b = { 0 };
        assert_int_equal(proto_from_json(&proto_run_result_schema, c, &b), -EINVAL);
        proto_schema_free(&proto_run_result_schema, &b);
        json_decref(c);
        json_decref(j);
}

/* ---- the closed vocabularies (proto/names.h) ----
 * Each list walked: every name goes to its value and back, no two entries share a name or a
 * value, and what is not in a list (a name from a newer peer, NULL) is UNKNOWN, named
 * "unknown" and equal to no entry. */
/* One entry of a list: its value v in (0, max), named nm both ways, neither seen before. */
static void vocab_entry(const char **seen, unsigned max, unsigned v, const char *nm, const char *name_of_v,
                        unsigned v_of_nm)
{
        assert_true(v > 0 && v < max);
        assert_string_equal(name_of_v, nm);
        assert_int_equal(v_of_nm, v);
        assert_null(seen[v]); /* no two entries with one value */
        for (unsigned q = 1; q < max; q++)
                if (seen[q])
                        assert_string_not_equal(seen[q], nm); /* nor with one name */
        seen[v] = nm;
}

static void test_vocabularies(void **state)
{
        (void)state;
        const char *seen[64];
        unsigned n;
#define WALK(LIST, E, MAX, name_of, from_name)                                                  \
        do {                                                                                    \
                assert_true(MAX <= 64);                                                         \
                memset(seen, 0, sizeof(seen));                                                  \
                n = 0;                                                                          \
                LIST(E)                                                                         \
                assert_int_equal(n + 1, MAX); /* every value is an entry */                     \
                assert_int_equal(from_name("no such name"), 0);                                 \
                assert_int_equal(from_name(NULL), 0);                                           \
                assert_int_equal(from_name("unknown"), 0);                                      \
                assert_string_equal(name_of(0), "unknown");                                     \
                assert_string_equal(name_of(MAX), "unknown");                                   \
        } while (0)
#define E_LAYER(id, nm)                                                                         \
        vocab_entry(seen, _PROTO_LAYER_MAX, PROTO_LAYER_##id, nm, proto_layer_name(PROTO_LAYER_##id), \
                    proto_layer_from_name(nm)), n++;
#define E_KIND(id, nm)                                                                          \
        vocab_entry(seen, _PROTO_KIND_MAX, PROTO_KIND_##id, nm, proto_kind_name(PROTO_KIND_##id),   \
                    proto_kind_from_name(nm)), n++;
#define E_TASK(id, nm)                                                                          \
        vocab_entry(seen, _PROTO_TASK_MAX, PROTO_TASK_##id, nm, proto_task_kind_name(PROTO_TASK_##id), \
                    proto_task_kind_from_name(nm)), n++;
#define E_ERR(id, nm)                                                                           \
        vocab_entry(seen, _PROTO_ERR_MAX, PROTO_ERR_##id, nm, proto_error_code_name(PROTO_ERR_##id), \
                    proto_error_code_from_name(nm)), n++;
#define E_MECH(id, nm)                                                                          \
        vocab_entry(seen, _PROTO_MECH_MAX, PROTO_MECH_##id, nm, proto_mech_name(PROTO_MECH_##id),   \
                    proto_mech_from_name(nm)), n++;
        WALK(PROTO_LAYERS, E_LAYER, _PROTO_LAYER_MAX, proto_layer_name, proto_layer_from_name);
        WALK(PROTO_EVENT_KINDS, E_KIND, _PROTO_KIND_MAX, proto_kind_name, proto_kind_from_name);
        WALK(PROTO_TASK_EVENT_KINDS, E_TASK, _PROTO_TASK_MAX, proto_task_kind_name, proto_task_kind_from_name);
        WALK(PROTO_ERROR_CODES, E_ERR, _PROTO_ERR_MAX, proto_error_code_name, proto_error_code_from_name);
        WALK(PROTO_MECHANISMS, E_MECH, _PROTO_MECH_MAX, proto_mech_name, proto_mech_from_name);
#undef WALK
#undef E_LAYER
#undef E_KIND
#undef E_TASK
#undef E_ERR
#undef E_MECH

        /* An event is compared by its names' values: a kind from a newer peer is no kind. */
        struct proto_event e = { .layer = "runner", .kind = "started" };
        assert_true(proto_event_is(&e, PROTO_LAYER_RUNNER, PROTO_KIND_STARTED));
        assert_true(proto_event_is(&e, PROTO_LAYER_RUNNER, PROTO_KIND_UNKNOWN));
        assert_false(proto_event_is(&e, PROTO_LAYER_AUDIT, PROTO_KIND_STARTED));
        e.kind = "started_later";
        assert_false(proto_event_is(&e, PROTO_LAYER_RUNNER, PROTO_KIND_STARTED));
        e.layer = NULL;
        assert_false(proto_event_is(&e, PROTO_LAYER_RUNNER, PROTO_KIND_UNKNOWN));

        /* The two questions of a list of mechanisms in force: a name exactly, a prefix. */
        char *items[] = { "netns", "landlock ABI 6" };
        struct proto_strv v = { .items = items, .n = 2 };
        assert_true(proto_mechanisms_include(&v, "netns"));
        assert_false(proto_mechanisms_include(&v, "landlock ABI"));
        assert_string_equal(proto_mechanisms_find(&v, "landlock ABI"), "landlock ABI 6");
        assert_null(proto_mechanisms_find(&v, "pidns"));
}

int main(void)
{
#define RT(up, low) { "roundtrip_" #low, test_roundtrip_full, NULL, NULL, (void *)&all_types[PROTO_##up] },
#define RQ(up, low) { "roundtrip_required_only_" #low, test_roundtrip_required_only, NULL, NULL, \
                      (void *)&all_types[PROTO_##up] },
#define BAD(n) { "malformed_" #n, test_malformed, NULL, NULL, (void *)&bad_##n }
        const struct CMUnitTest tests[] = {
                PROTO_MESSAGES(RT)
                PROTO_MESSAGES(RQ)
                cmocka_unit_test(test_schema_table),
                cmocka_unit_test(test_malformed_truncated),
                cmocka_unit_test(test_malformed_oversize),
                cmocka_unit_test(test_malformed_oversize_string),
                BAD(wrongtype),
                BAD(missing),
                BAD(required_nil),
                BAD(deep12),
                BAD(deep8),
                BAD(deep7),
                BAD(deep40),
                BAD(trailing),
                BAD(unknowntype),
                BAD(type_not_str),
                BAD(no_type),
                BAD(unknownfield),
                BAD(duplicate),
                BAD(duplicate_type),
                BAD(version),
                BAD(version_str),
                BAD(no_version),
                BAD(utf8),
                BAD(nul),
                BAD(str_as_bin),
                BAD(negative),
                BAD(key_int),
                BAD(key_nested),
                BAD(not_map),
                BAD(item_missing),
                BAD(bin_as_str),
                BAD(too_many_inputs),
                BAD(strv_item),
                BAD(egress_str),
                BAD(uint_over_max),
                BAD(opt_int_range),
                BAD(opt_struct_type),
                BAD(huge_count),
                BAD(many_values),
                BAD(nan),
                cmocka_unit_test(test_reader_zero_length),
                cmocka_unit_test(test_reader_huge_header),
                cmocka_unit_test(test_reader_byte_at_a_time),
                cmocka_unit_test(test_reader_two_in_one_feed),
                cmocka_unit_test(test_reader_memory),
                cmocka_unit_test(test_read_msg_truncated_stream),
                cmocka_unit_test(test_encode_error_frame),
                cmocka_unit_test(test_encode_required_unset),
                cmocka_unit_test(test_run_result_json),
                cmocka_unit_test(test_vocabularies),
        };
#undef RT
#undef RQ
#undef BAD
        return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
