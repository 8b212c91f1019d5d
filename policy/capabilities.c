#include <stdio.h>
#include <string.h>

#include "policy/rules.h"
#include "policy/variables.h"

static const char *const cap_names[_POL_CAP_MAX] = {
#define X(id, name) [POL_CAP_##id] = name,
        POL_CAPS(X)
#undef X
};

const char *pol_cap_name(enum pol_cap c)
{
        return (unsigned)c < _POL_CAP_MAX ? cap_names[c] : "unknown";
}

int pol_cap_from_name(const char *name)
{
        for (int c = 0; c < _POL_CAP_MAX; c++)
                if (strcmp(cap_names[c], name) == 0)
                        return c;
        return -1;
}

char *pol_cap_unknown(const char *field, const char *name, char *buf, size_t size)
{
        char shown[64], known[128] = "";
        pol_var_show(name, strlen(name), shown, sizeof(shown));
        for (int k = 0; k < _POL_CAP_MAX; k++)
                snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", k ? ", " : "",
                         pol_cap_name((enum pol_cap)k));
        return POL_REASON(buf, size, CAP_NOT_A_CAPABILITY, field, shown, known);
}

enum pol_why pol_cap_server_policy(enum pol_cap c)
{
        switch (c) {
        case POL_CAP_PROCESS:
                return POL_WHY_CAP_NEVER;
        case POL_CAP_NETWORK:
                /* DESIGN §7: network means egress to the hosts the user approved, through a
                 * broker-side proxy. Until that proxy exists there is nothing to grant. */
                return POL_WHY_CAP_NO_EGRESS;
        case _POL_CAP_MAX:
                break;
        }
        return POL_WHY_CAP_UNKNOWN;
}

static bool listed(const char *const *v, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (v[i] && strcmp(v[i], name) == 0)
                        return true;
        return false;
}

void pol_caps_resolve(const char *const *requested, size_t n_requested, const char *const *approved,
                      size_t n_approved, pol_cap_policy_fn server, struct pol_caps *granted, enum pol_why *why)
{
        if (!server)
                server = pol_cap_server_policy;
        memset(granted, 0, sizeof(*granted));
        for (size_t i = 0; i < n_requested; i++) {
                int c = requested[i] ? pol_cap_from_name(requested[i]) : -1;
                enum pol_why w;
                if (c < 0)
                        w = POL_WHY_CAP_UNKNOWN;
                else if (server((enum pol_cap)c) == POL_WHY_CAP_NEVER)
                        w = POL_WHY_CAP_NEVER;
                else if (!listed(approved, n_approved, requested[i]))
                        w = POL_WHY_CAP_NOT_APPROVED;
                else
                        w = server((enum pol_cap)c);
                why[i] = w;
                if (w == POL_WHY_NONE)
                        granted->granted[c] = true;
        }
}
