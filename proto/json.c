#include "proto/json.h"

#include <stdint.h>

static json_t *field_json(const struct proto_field *f, const uint8_t *base)
{
        const void *p = base + f->offset;
        switch (f->type) {
        case PF_STR: {
                const char *v = *(char *const *)p;
                return v ? json_string(v) : json_null();
        }
        case PF_BIN:
                return json_integer((json_int_t)((const struct proto_bytes *)p)->len);
        case PF_UINT:
                return json_integer((json_int_t) * (const uint64_t *)p);
        case PF_OPT_INT: {
                const struct proto_opt_int *v = p;
                return v->set ? json_integer((json_int_t)v->v) : json_null();
        }
        case PF_DOUBLE:
                return json_real(*(const double *)p);
        case PF_BOOL:
                return json_boolean(*(const bool *)p);
        case PF_STRUCT:
                return proto_to_json(f->sub, p);
        case PF_OPT_STRUCT: {
                const void *sub = *(void *const *)p;
                return sub ? proto_to_json(f->sub, sub) : json_null();
        }
        case PF_ARRAY: {
                const struct proto_array *a = p;
                json_t *arr = json_array();
                for (size_t i = 0; arr && i < a->n; i++)
                        if (json_array_append_new(arr, proto_to_json(f->sub, (const uint8_t *)a->items +
                                                                             i * f->sub->size)) < 0) {
                                json_decref(arr);
                                return NULL;
                        }
                return arr;
        }
        case PF_STRV: {
                const struct proto_strv *v = p;
                json_t *arr = json_array();
                for (size_t i = 0; arr && i < v->n; i++)
                        if (json_array_append_new(arr, json_string(v->items[i] ? v->items[i] : "")) < 0) {
                                json_decref(arr);
                                return NULL;
                        }
                return arr;
        }
        }
        return NULL;
}

json_t *proto_to_json(const struct proto_schema *s, const void *obj)
{
        json_t *o = json_object();
        if (!o)
                return NULL;
        for (size_t i = 0; i < s->n_fields; i++) {
                if (s->fields[i].internal)
                        continue; /* the supervisor's facts, for the broker alone */
                json_t *v = field_json(&s->fields[i], obj);
                /* json_object_set_new refuses a NULL value: the whole rendering fails. */
                if (json_object_set_new(o, s->fields[i].name, v) < 0) {
                        json_decref(o);
                        return NULL;
                }
        }
        return o;
}
