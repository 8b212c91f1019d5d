#include "policy/limits.h"

#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/reasons.h"

/* The compiled ranges, in the order of enum proto_limit_field. */
static const struct {
        const char *name;
        size_t offset;
        uint64_t dflt, min, max;
} compiled[POL_LIMITS_N] = {
        { "wall_s", offsetof(struct proto_limits, wall_s), POL_WALL_S_DEFAULT, POL_WALL_S_MIN, POL_WALL_S_MAX },
        { "cpu_s", offsetof(struct proto_limits, cpu_s), POL_CPU_S_DEFAULT, POL_CPU_S_MIN, POL_CPU_S_MAX },
        { "memory_mb", offsetof(struct proto_limits, memory_mb), POL_MEMORY_MB_DEFAULT, POL_MEMORY_MB_MIN,
          POL_MEMORY_MB_MAX },
        { "output_bytes", offsetof(struct proto_limits, output_bytes), POL_OUTPUT_DEFAULT, POL_OUTPUT_MIN,
          POL_OUTPUT_MAX },
        { "files_bytes", offsetof(struct proto_limits, files_bytes), POL_FILES_DEFAULT, POL_FILES_MIN, POL_FILES_MAX },
        { "pids", offsetof(struct proto_limits, pids), POL_PIDS_DEFAULT, POL_PIDS_MIN, POL_PIDS_MAX },
};
_Static_assert(PROTO_LIMIT_PIDS + 1 == POL_LIMITS_N, "the table follows enum proto_limit_field");

void pol_limits_table_init(struct pol_limits_table *t)
{
        for (unsigned f = 0; f < POL_LIMITS_N; f++)
                t->r[f] = (struct pol_limit_range){ compiled[f].dflt, compiled[f].max };
}

const char *pol_limit_name(unsigned field)
{
        return field < POL_LIMITS_N ? compiled[field].name : NULL;
}

int pol_limit_key(const char *key, unsigned *field, bool *is_max)
{
        for (unsigned f = 0; f < POL_LIMITS_N; f++) {
                size_t n = strlen(compiled[f].name);
                if (strncmp(key, compiled[f].name, n) != 0)
                        continue;
                if (key[n] == 0 || strcmp(key + n, "_max") == 0) {
                        *field = f;
                        *is_max = key[n] != 0;
                        return 0;
                }
        }
        return -ENOENT;
}

int pol_limits_table_set(struct pol_limits_table *t, unsigned field, bool is_max, uint64_t v, struct anvil_err *err)
{
        if (field >= POL_LIMITS_N)
                return anvil_err_set(err, EINVAL, "no such limit");
        if (v < compiled[field].min || v > compiled[field].max)
                return anvil_err_set(err, ERANGE, "expected %llu..%llu", (unsigned long long)compiled[field].min,
                                     (unsigned long long)compiled[field].max);
        if (is_max)
                t->r[field].max = v;
        else
                t->r[field].dflt = v;
        return 0;
}

int pol_limits_table_check(const struct pol_limits_table *t, unsigned *field, struct anvil_err *err)
{
        for (unsigned f = 0; f < POL_LIMITS_N; f++)
                if (t->r[f].dflt > t->r[f].max) {
                        *field = f;
                        return anvil_err_set(err, EINVAL, "%s = %llu is over %s_max = %llu", compiled[f].name,
                                             (unsigned long long)t->r[f].dflt, compiled[f].name,
                                             (unsigned long long)t->r[f].max);
                }
        return 0;
}

/* One rule for every limit: a field not given takes its default; a given one, 0 included,
 * must be in its range (no range holds 0), up to the table's maximum. Given means marked by
 * the decoder or, for a struct built in memory, nonzero. */
int pol_limits_resolve(const struct pol_limits_table *t, const struct proto_limits *req, struct proto_limits *out,
                       struct anvil_err *err)
{
        memset(out, 0, sizeof(*out));
        for (unsigned f = 0; f < POL_LIMITS_N; f++) {
                uint64_t v = *(const uint64_t *)((const char *)req + compiled[f].offset);
                bool given = v != 0 || (req->given & (1ull << f));
                if (!given)
                        v = t->r[f].dflt;
                if (v < compiled[f].min)
                        return anvil_err_set(err, EINVAL, "run_request.limits.%s: %llu is below the minimum of %llu",
                                             compiled[f].name, (unsigned long long)v,
                                             (unsigned long long)compiled[f].min);
                if (v > t->r[f].max)
                        return anvil_err_set(err, EINVAL, "run_request.limits.%s: %llu is over the maximum of %llu",
                                             compiled[f].name, (unsigned long long)v, (unsigned long long)t->r[f].max);
                *(uint64_t *)((char *)out + compiled[f].offset) = v;
        }
        if (req->cpu_quota_pct.set)
                return anvil_err_set(err, EINVAL,
                                     "run_request.limits.cpu_quota_pct: the CPU quota is the supervisor's "
                                     "(--cpu-quota), not a request's");
        return 0;
}

int pol_input_name_ok(const char *n)
{
        size_t len = strlen(n);
        if (len == 0 || len > PROTO_NAME_MAX || n[0] == '.' || n[0] == ' ' || n[len - 1] == ' ')
                return 0;
        for (size_t i = 0; i < len; i++) {
                char c = n[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-' || c == ' '))
                        return 0;
        }
        return 1;
}

static const char *fd_kind(unsigned mode)
{
        switch (mode & S_IFMT) {
        case S_IFIFO: return "a pipe";
        case S_IFSOCK: return "a socket";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFLNK: return "a symbolic link";
        case S_IFREG: return "a regular file";
        case S_IFDIR: return "a directory";
        default: return "of an unknown type";
        }
}

/* egress: the index of the fd that is no input's (run_request.egress), or -1. */
static int inputs_check(const struct proto_array *inputs, const char *field, const unsigned *fd_modes, size_t n_fds,
                        long long egress, struct anvil_err *err)
{
        const struct proto_input *in = inputs->items;
        char msg[512];
        size_t named = 0;
        for (size_t i = 0; i < inputs->n; i++) {
                if (!pol_input_name_ok(in[i].name))
                        return anvil_err_set(err, EINVAL,
                                             "%s[%zu].name: '%.64s' is not a plain file name "
                                             "(letters, digits, spaces, '.', '_', '-'; not starting with '.', "
                                             "nor starting or ending with a space)",
                                             field, i, in[i].name);
                for (size_t j = 0; j < i; j++)
                        if (strcmp(in[i].name, in[j].name) == 0)
                                return anvil_err_set(err, EINVAL, "%s[%zu].name: '%s' is given twice", field, i,
                                                     in[i].name);
                if ((in[i].data.data != NULL) == in[i].fd.set)
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), INPUT_DATA_OR_FD, field, i, in[i].name));
                if (!in[i].fd.set)
                        continue;
                if (!fd_modes)
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), INPUT_FD_NOT_HERE, field, i, in[i].name));
                long long k = (long long)in[i].fd.v;
                if (k < 0 || (unsigned long long)k >= n_fds)
                        return anvil_err_set(
                                err, EINVAL, "%s",
                                POL_REASON(msg, sizeof(msg), INPUT_FD_INDEX, field, i, in[i].name, k, n_fds));
                if (k == egress)
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), EGRESS_FD_SHARED, field, i, in[i].name, k));
                for (size_t j = 0; j < i; j++)
                        if (in[j].fd.set && in[j].fd.v == in[i].fd.v)
                                return anvil_err_set(
                                        err, EINVAL, "%s",
                                        POL_REASON(msg, sizeof(msg), INPUT_FD_TWICE, field, i, in[i].name, k));
                if (!S_ISREG(fd_modes[k]) && !S_ISDIR(fd_modes[k]))
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), INPUT_FD_TYPE, field, i, in[i].name,
                                                        fd_kind(fd_modes[k])));
                named++;
        }
        if (egress >= 0 && named + 1 != n_fds)
                return anvil_err_set(err, EINVAL, "%s",
                                     POL_REASON(msg, sizeof(msg), EGRESS_FD_COUNT, field, n_fds, named));
        if (egress < 0 && named != n_fds)
                return anvil_err_set(err, EINVAL, "%s",
                                     POL_REASON(msg, sizeof(msg), INPUT_FD_COUNT, field, n_fds, named));
        return 0;
}

int pol_inputs_check(const struct proto_array *inputs, const char *field, const unsigned *fd_modes, size_t n_fds,
                     struct anvil_err *err)
{
        return inputs_check(inputs, field, fd_modes, n_fds, -1, err);
}

int pol_run_fds_check(const struct proto_run_request *req, const unsigned *fd_modes, size_t n_fds,
                      struct anvil_err *err)
{
        char msg[256];
        long long e = -1;
        if (req->egress.set) {
                e = (long long)req->egress.v;
                if (e < 0 || (unsigned long long)e >= n_fds)
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), EGRESS_FD_INDEX, e, n_fds));
                if (!S_ISSOCK(fd_modes[e]))
                        return anvil_err_set(err, EINVAL, "%s",
                                             POL_REASON(msg, sizeof(msg), EGRESS_FD_TYPE, fd_kind(fd_modes[e])));
        }
        return inputs_check(&req->inputs, "run_request.inputs", fd_modes, n_fds, e, err);
}

int pol_args_check(const struct proto_strv *args, const char *field, struct anvil_err *err)
{
        if (args->n > POL_ARGS_MAX)
                return anvil_err_set(err, E2BIG, "%s: %zu arguments is over the limit of %d", field, args->n,
                                     POL_ARGS_MAX);
        size_t bytes = 0;
        for (size_t i = 0; i < args->n; i++)
                bytes += strlen(args->items[i]);
        if (bytes > POL_ARGS_BYTES_MAX)
                return anvil_err_set(err, E2BIG, "%s: %zu bytes of arguments is over the limit of %d", field, bytes,
                                     POL_ARGS_BYTES_MAX);
        return 0;
}
