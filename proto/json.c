#include "proto/json.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- back from JSON ---- */

static int field_from(const struct proto_field *f, json_t *v, uint8_t *base);

static int str_from(json_t *v, uint64_t max, char **out)
{
        if (!json_is_string(v))
                return -EINVAL;
        size_t n = json_string_length(v);
        const char *s = json_string_value(v);
        if (strlen(s) != n || (max && n > max))
                return -EINVAL;
        return (*out = strdup(s)) ? 0 : -ENOMEM;
}

int proto_from_json(const struct proto_schema *s, json_t *o, void *obj)
{
        if (!json_is_object(o))
                return -EINVAL;
        for (size_t i = 0; i < s->n_fields; i++) {
                const struct proto_field *f = &s->fields[i];
                json_t *v = f->internal ? NULL : json_object_get(o, f->name);
                if (!v || json_is_null(v)) {
                        if (f->required && f->type != PF_BIN)
                                return -EINVAL;
                        continue;
                }
                int r = field_from(f, v, obj);
                if (r < 0)
                        return r;
                if (s->given_offset && i < 64)
                        *(uint64_t *)((uint8_t *)obj + s->given_offset) |= (uint64_t)1 << i;
        }
        return 0;
}

static int field_from(const struct proto_field *f, json_t *v, uint8_t *base)
{
        void *p = base + f->offset;
        switch (f->type) {
        case PF_STR:
                return str_from(v, f->max, p);
        case PF_BIN: /* rendered as its length: not carried back */
                return 0;
        case PF_UINT:
                if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                    (f->max && (uint64_t)json_integer_value(v) > f->max))
                        return -EINVAL;
                *(uint64_t *)p = (uint64_t)json_integer_value(v);
                return 0;
        case PF_OPT_INT:
                if (!json_is_integer(v))
                        return -EINVAL;
                *(struct proto_opt_int *)p = (struct proto_opt_int){ .set = true, .v = json_integer_value(v) };
                return 0;
        case PF_DOUBLE:
                if (!json_is_number(v))
                        return -EINVAL;
                *(double *)p = json_number_value(v);
                return 0;
        case PF_BOOL:
                if (!json_is_boolean(v))
                        return -EINVAL;
                *(bool *)p = json_is_true(v);
                return 0;
        case PF_STRUCT:
                return proto_from_json(f->sub, v, p);
        case PF_OPT_STRUCT: {
                void *sub = calloc(1, f->sub->size);
                if (!sub)
                        return -ENOMEM;
                *(void **)p = sub; /* freed with the whole by proto_schema_free */
                return proto_from_json(f->sub, v, sub);
        }
        case PF_ARRAY: {
                struct proto_array *a = p;
                size_t n = json_array_size(v);
                if (!json_is_array(v) || (f->max && n > f->max))
                        return -EINVAL;
                if (n && !(a->items = calloc(n, f->sub->size)))
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        a->n = i + 1;
                        int r = proto_from_json(f->sub, json_array_get(v, i), (uint8_t *)a->items + i * f->sub->size);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        case PF_STRV: {
                struct proto_strv *sv = p;
                size_t n = json_array_size(v);
                if (!json_is_array(v) || (f->max && n > f->max))
                        return -EINVAL;
                if (n && !(sv->items = calloc(n, sizeof(char *))))
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        sv->n = i + 1;
                        int r = str_from(json_array_get(v, i), 0, &sv->items[i]);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        }
        return -EINVAL;
}
