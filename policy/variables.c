#include "policy/variables.h"

#include <stdio.h>
#include <string.h>

#include "proto/proto.h"

_Static_assert(POL_VARIABLE_NAME_MAX <= PROTO_NAME_MAX, "a name not kept is listed in a field of PROTO_NAME_MAX");

enum pol_why pol_var_name(const char *name, size_t len, bool identifier, bool keyword, bool builtin)
{
        if (len > POL_VARIABLE_NAME_MAX)
                return POL_WHY_VAR_NAME_LONG;
        if (len > 0 && name[0] == '_')
                return POL_WHY_VAR_PRIVATE;
        if (!identifier || len == 0)
                return POL_WHY_VAR_NOT_IDENTIFIER;
        if (keyword)
                return POL_WHY_VAR_KEYWORD;
        if (builtin)
                return POL_WHY_VAR_BUILTIN;
        return POL_WHY_NONE;
}

uint64_t pol_var_cost(size_t kept_before, size_t name_len, size_t value_len)
{
        return (kept_before ? 1u : 0u) + 2u + (uint64_t)name_len + 1u + (uint64_t)value_len;
}

uint64_t pol_var_min_json(enum pol_var_shape shape, uint64_t n)
{
        switch (shape) {
        case POL_VAR_LIST: /* [0,0,...]: a digit each, commas between */
                return n ? 2 * n + 1 : 2;
        case POL_VAR_DICT: /* {"":0,...}: four bytes each, commas between */
                return n ? 5 * n + 1 : 2;
        case POL_VAR_STR: /* "...": a byte each at least */
                return n + 2;
        }
        return 0;
}

void pol_var_show(const char *s, size_t n, char *out, size_t size)
{
        if (!size)
                return;
        size_t o = 0, i;
        for (i = 0; i < n && i < 64; i++) {
                unsigned char c = (unsigned char)s[i];
                char piece[8];
                if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
                        piece[0] = (char)c, piece[1] = 0;
                else
                        snprintf(piece, sizeof(piece), "\\x%02x", c);
                size_t pl = strlen(piece);
                if (o + pl + 4 > size) /* room for "..." and the NUL */
                        break;
                memcpy(out + o, piece, pl);
                o += pl;
        }
        if (i < n && o + 4 <= size) {
                memcpy(out + o, "...", 3);
                o += 3;
        }
        out[o] = 0;
}
