#include "policy/limits.h"

#include <string.h>

/* One rule for every limit: a field not given takes its default; a given one, 0 included,
 * must be in its range (no range holds 0). Given means marked by the decoder or, for a
 * struct built in memory, nonzero. */
static int range(const struct proto_limits *req, enum proto_limit_field which, const char *field, uint64_t v,
                 uint64_t dflt, uint64_t min, uint64_t max, uint64_t *out, struct anvil_err *err)
{
        bool given = v != 0 || (req->given & (1ull << which));
        if (!given)
                v = dflt;
        if (v < min)
                return anvil_err_set(err, EINVAL, "run_request.limits.%s: %llu is below the minimum of %llu",
                                     field, (unsigned long long)v, (unsigned long long)min);
        if (v > max)
                return anvil_err_set(err, EINVAL, "run_request.limits.%s: %llu is over the maximum of %llu",
                                     field, (unsigned long long)v, (unsigned long long)max);
        *out = v;
        return 0;
}

int pol_limits_resolve(const struct proto_limits *req, struct proto_limits *out, struct anvil_err *err)
{
        int r;
        memset(out, 0, sizeof(*out));
        if ((r = range(req, PROTO_LIMIT_WALL_S, "wall_s", req->wall_s, POL_WALL_S_DEFAULT, POL_WALL_S_MIN,
                       POL_WALL_S_MAX, &out->wall_s, err)) < 0 ||
            (r = range(req, PROTO_LIMIT_CPU_S, "cpu_s", req->cpu_s, POL_CPU_S_DEFAULT, POL_CPU_S_MIN, POL_CPU_S_MAX,
                       &out->cpu_s, err)) < 0 ||
            (r = range(req, PROTO_LIMIT_MEMORY_MB, "memory_mb", req->memory_mb, POL_MEMORY_MB_DEFAULT,
                       POL_MEMORY_MB_MIN, POL_MEMORY_MB_MAX, &out->memory_mb, err)) < 0 ||
            (r = range(req, PROTO_LIMIT_OUTPUT_BYTES, "output_bytes", req->output_bytes, POL_OUTPUT_DEFAULT,
                       POL_OUTPUT_MIN, POL_OUTPUT_MAX, &out->output_bytes, err)) < 0 ||
            (r = range(req, PROTO_LIMIT_FILES_BYTES, "files_bytes", req->files_bytes, POL_FILES_DEFAULT,
                       POL_FILES_MIN, POL_FILES_MAX, &out->files_bytes, err)) < 0 ||
            (r = range(req, PROTO_LIMIT_PIDS, "pids", req->pids, POL_PIDS_DEFAULT, POL_PIDS_MIN, POL_PIDS_MAX,
                       &out->pids, err)) < 0)
                return r;
        if (req->cpu_quota_pct.set)
                return anvil_err_set(err, EINVAL,
                                     "run_request.limits.cpu_quota_pct: the CPU quota is the supervisor's "
                                     "(--cpu-quota), not a request's");
        return 0;
}

static int name_ok(const char *n)
{
        size_t len = strlen(n);
        if (len == 0 || len > PROTO_NAME_MAX || n[0] == '.')
                return 0;
        for (size_t i = 0; i < len; i++) {
                char c = n[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-'))
                        return 0;
        }
        return 1;
}

int pol_inputs_check(const struct proto_array *inputs, const char *field, struct anvil_err *err)
{
        const struct proto_input *in = inputs->items;
        for (size_t i = 0; i < inputs->n; i++) {
                if (!name_ok(in[i].name))
                        return anvil_err_set(err, EINVAL,
                                             "%s[%zu].name: '%.64s' is not a plain file name "
                                             "(letters, digits, '.', '_', '-'; not starting with '.')",
                                             field, i, in[i].name);
                for (size_t j = 0; j < i; j++)
                        if (strcmp(in[i].name, in[j].name) == 0)
                                return anvil_err_set(err, EINVAL, "%s[%zu].name: '%s' is given twice",
                                                     field, i, in[i].name);
        }
        return 0;
}
