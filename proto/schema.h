/* A message is a C struct described by a table of fields; one generic codec walks the table
 * to encode, decode strictly, free, and render JSON. Adding a message is adding a struct and
 * its table, never another hand-written decoder.
 *
 * Strictness, field by field: the msgpack type must match (an unsigned field refuses a negative
 * integer, a string refuses bin); strings are valid UTF-8 without NUL and at most `max` bytes;
 * arrays hold at most `max` items; unknown keys, duplicate keys and missing required fields
 * are errors; optional fields may be absent or nil. Every error names the field by its path,
 * e.g. "run_request.limits.wall_s". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum proto_ftype {
        PF_STR,        /* char *, NULL = nil (only when optional) */
        PF_BIN,        /* struct proto_bytes */
        PF_UINT,       /* uint64_t */
        PF_OPT_INT,    /* struct proto_opt_int: absent/nil or a signed integer */
        PF_DOUBLE,     /* double; integers are accepted too */
        PF_BOOL,       /* bool */
        PF_STRUCT,     /* an embedded struct described by `sub` */
        PF_OPT_STRUCT, /* a pointer to a struct described by `sub`, NULL = nil */
        PF_ARRAY,      /* struct proto_array of `sub` structs */
        PF_STRV,       /* struct proto_strv */
};

struct proto_bytes {
        uint8_t *data;
        size_t len;
};

struct proto_opt_int {
        bool set;
        int64_t v;
};

struct proto_array {
        void *items; /* n contiguous structs of sub->size bytes */
        size_t n;
};

struct proto_strv {
        char **items;
        size_t n;
};

struct proto_schema;

struct proto_field {
        const char *name;
        enum proto_ftype type;
        size_t offset;
        bool required;
        uint64_t max; /* bytes for PF_STR/PF_BIN, items for arrays, value for PF_UINT; 0 = none */
        const struct proto_schema *sub;
        /* The supervisor's facts for the broker to render (an optional PF_OPT_STRUCT): never
         * rendered as JSON, and left off the wire when unset, so that what the broker relays
         * to its clients, once it has rendered them, is what it was before they existed. */
        bool internal;
};

struct proto_schema {
        const char *name;
        size_t size;
        const struct proto_field *fields;
        size_t n_fields;
        /* Nonzero for a struct whose unset fields must stay apart from fields given as 0 (the
         * limits: absent means the default, an explicit 0 is out of range): the offset of a
         * uint64_t in it where the decoder sets bit i when field i was present and not nil. The
         * encoder then writes an unsigned field that is 0 and not marked given as nil, so a
         * struct built in memory with 0 for "unset" goes out as unset. */
        size_t given_offset;
};

/* Frees everything a decoded (or built) struct owns; the struct itself is not freed. */
void proto_schema_free(const struct proto_schema *s, void *obj);
