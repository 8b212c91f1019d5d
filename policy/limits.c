#include "policy/limits.h"

#include <string.h>

static int range(const char *field, uint64_t v, uint64_t dflt, uint64_t min, uint64_t max, uint64_t *out,
                 struct anvil_err *err)
{
        if (v == 0)
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
        if ((r = range("wall_s", req->wall_s, POL_WALL_S_DEFAULT, 1, POL_WALL_S_MAX, &out->wall_s, err)) < 0 ||
            (r = range("cpu_s", req->cpu_s, POL_CPU_S_DEFAULT, 1, POL_CPU_S_MAX, &out->cpu_s, err)) < 0 ||
            (r = range("memory_mb", req->memory_mb, POL_MEMORY_MB_DEFAULT, POL_MEMORY_MB_MIN,
                       POL_MEMORY_MB_MAX, &out->memory_mb, err)) < 0 ||
            (r = range("output_bytes", req->output_bytes, POL_OUTPUT_DEFAULT, 1, POL_OUTPUT_MAX,
                       &out->output_bytes, err)) < 0 ||
            (r = range("files_bytes", req->files_bytes, POL_FILES_DEFAULT, 4096, POL_FILES_MAX,
                       &out->files_bytes, err)) < 0 ||
            (r = range("pids", req->pids, POL_PIDS_DEFAULT, 8, POL_PIDS_MAX, &out->pids, err)) < 0)
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
