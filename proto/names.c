#include "proto/names.h"

#include <string.h>

#include "proto/proto.h"

#define X(id, name) name,
static const char *const layer_names[] = { "unknown", PROTO_LAYERS(X) };
static const char *const kind_names[] = { "unknown", PROTO_EVENT_KINDS(X) };
static const char *const task_kind_names[] = { "unknown", PROTO_TASK_EVENT_KINDS(X) };
static const char *const error_code_names[] = { "unknown", PROTO_ERROR_CODES(X) };
static const char *const mech_names[] = { "unknown", PROTO_MECHANISMS(X) };
#undef X
_Static_assert(sizeof(layer_names) / sizeof(*layer_names) == _PROTO_LAYER_MAX, "one name per layer");
_Static_assert(sizeof(kind_names) / sizeof(*kind_names) == _PROTO_KIND_MAX, "one name per kind");
_Static_assert(sizeof(task_kind_names) / sizeof(*task_kind_names) == _PROTO_TASK_MAX, "one name per task kind");
_Static_assert(sizeof(error_code_names) / sizeof(*error_code_names) == _PROTO_ERR_MAX, "one name per code");
_Static_assert(sizeof(mech_names) / sizeof(*mech_names) == _PROTO_MECH_MAX, "one name per mechanism");

/* A linear walk: the lists are short (at most a few dozen), and a name is looked up once per
 * event or frame. */
static unsigned from_name(const char *const *names, unsigned n, const char *s)
{
        if (!s)
                return 0;
        for (unsigned i = 1; i < n; i++)
                if (strcmp(names[i], s) == 0)
                        return i;
        return 0;
}

#define NAMES(fn, type, table, max)                                                             \
        const char *proto_##fn##_name(enum type v)                                             \
        {                                                                                       \
                return (unsigned)v < max ? table[v] : table[0];                                 \
        }                                                                                       \
        enum type proto_##fn##_from_name(const char *s)                                        \
        {                                                                                       \
                return (enum type)from_name(table, max, s);                                     \
        }
NAMES(layer, proto_layer, layer_names, _PROTO_LAYER_MAX)
NAMES(kind, proto_event_kind, kind_names, _PROTO_KIND_MAX)
NAMES(task_kind, proto_task_kind, task_kind_names, _PROTO_TASK_MAX)
NAMES(error_code, proto_error_code, error_code_names, _PROTO_ERR_MAX)
NAMES(mech, proto_mech, mech_names, _PROTO_MECH_MAX)
#undef NAMES

bool proto_event_is(const struct proto_event *e, enum proto_layer l, enum proto_event_kind k)
{
        return proto_layer_from_name(e->layer) == l && (k == PROTO_KIND_UNKNOWN || proto_kind_from_name(e->kind) == k);
}

bool proto_mechanisms_include(const struct proto_strv *v, const char *name)
{
        for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->items[i], name) == 0)
                        return true;
        return false;
}

const char *proto_mechanisms_find(const struct proto_strv *v, const char *prefix)
{
        for (size_t i = 0; i < v->n; i++)
                if (strncmp(v->items[i], prefix, strlen(prefix)) == 0)
                        return v->items[i];
        return NULL;
}
