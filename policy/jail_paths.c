/* The jail's paths (policy/jail_paths.h): the table, and the views of it that more than one
 * side needs. Pure: lookups and string building, no file system but the caller's exists(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/cleanup.h"
#include "policy/jail_paths.h"

const struct pol_jail_path pol_jail_paths[] = {
#define X(p, k, m, l, a, b, d, s, n)                                                                                  \
        { .path = p,                                                                                                 \
          .kind = POL_JP_##k,                                                                                        \
          .mount = POL_JP_MOUNT_##m,                                                                                 \
          .landlock = POL_JP_LL_##l,                                                                                 \
          .audit = POL_JP_AUDIT_##a,                                                                                 \
          .blast = POL_JP_BLAST_##b,                                                                                 \
          .direct = POL_JP_DIRECT_##d,                                                                               \
          .sub = s,                                                                                                  \
          .note = n },
        POL_JAIL_PATHS(X)
#undef X
};
const size_t pol_jail_n_paths = ELEMENTSOF(pol_jail_paths);

const struct pol_jail_path *pol_jail_path_find(const char *path)
{
        for (size_t i = 0; i < pol_jail_n_paths; i++)
                if (strcmp(pol_jail_paths[i].path, path) == 0)
                        return &pol_jail_paths[i];
        return NULL;
}

int pol_jail_path_where(const struct pol_jail_path *e, const char *run_dir, const char *runner, char *buf,
                        size_t size)
{
        int n;
        if (!run_dir)
                n = snprintf(buf, size, "%s", e->path);
        else if (e->direct == POL_JP_DIRECT_HOST)
                n = snprintf(buf, size, "%s", e->path);
        else if (e->direct == POL_JP_DIRECT_RUNNER && runner)
                n = snprintf(buf, size, "%s", runner);
        else if (e->direct == POL_JP_DIRECT_RUN)
                n = snprintf(buf, size, "%s%s", run_dir, e->sub);
        else
                return -ENOENT;
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

bool pol_jail_ll_reads(enum pol_jp_landlock l)
{
        return l != POL_JP_LL_NONE;
}

bool pol_jail_ll_writes(enum pol_jp_landlock l)
{
        return l == POL_JP_LL_WRITE || l == POL_JP_LL_DEV_RW;
}

bool pol_jail_device(const char *path)
{
        const struct pol_jail_path *e = pol_jail_path_find(path);
        return e && e->audit == POL_JP_AUDIT_DEVICE;
}

const char *pol_jail_system_root(void)
{
        for (size_t i = 0; i < pol_jail_n_paths; i++)
                if (pol_jail_paths[i].audit == POL_JP_AUDIT_SYSTEM)
                        return pol_jail_paths[i].path;
        return NULL;
}

/* Appends to a line being built; a line past its buffer is cut (the paths are the table's,
 * far shorter). */
static void cat(char *line, size_t size, const char *a, const char *b)
{
        size_t o = strlen(line);
        if (o < size)
                snprintf(line + o, size - o, "%s%s", a, b);
}

static bool shown(const struct pol_jail_path *e, bool direct, bool (*exists)(const char *path))
{
        return !(direct && e->direct == POL_JP_DIRECT_NONE) &&
               !(e->mount == POL_JP_MOUNT_RO_BIND_OPT && exists && !exists(e->path));
}

/* Appends the shown entries of group g, joined by ", ": all of them (want 0), those Landlock
 * lets be read (1), those it does not (2); synthetic files by their names. */
static void join(enum pol_jp_blast g, int want, bool direct, bool (*exists)(const char *path), char *line,
                 size_t size)
{
        bool first = true;
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                if (e->blast != g || !shown(e, direct, exists) ||
                    (want && pol_jail_ll_reads(e->landlock) != (want == 1)))
                        continue;
                cat(line, size, first ? "" : ", ", g == POL_JP_BLAST_SYNTH ? strrchr(e->path, '/') + 1 : e->path);
                first = false;
        }
}

static bool any_unreadable(enum pol_jp_blast g)
{
        for (size_t i = 0; i < pol_jail_n_paths; i++)
                if (pol_jail_paths[i].blast == g && !pol_jail_ll_reads(pol_jail_paths[i].landlock))
                        return true;
        return false;
}

/* One line for a group: the synthetic /etc names its files, and under Landlock those it lets
 * be read, then "; not" the others. Direct: " (landlock)" after. */
static void group_line(enum pol_jp_blast g, bool direct, bool ll, bool (*exists)(const char *path), char *line,
                       size_t size)
{
        line[0] = 0;
        if (g == POL_JP_BLAST_SYNTH) {
                cat(line, size, "/etc (synthetic: ", "");
                join(g, ll ? 1 : 0, direct, exists, line, size);
                if (ll && any_unreadable(g)) {
                        cat(line, size, "; not ", "");
                        join(g, 2, direct, exists, line, size);
                }
                cat(line, size, ")", "");
        } else {
                join(g, 0, direct, exists, line, size);
        }
        if (direct)
                cat(line, size, " (landlock)", "");
}

void pol_jail_blast_lines(bool direct, bool ll, bool (*exists)(const char *path),
                          void (*push)(void *ctx, const char *line), void *ctx)
{
        char line[512];
        /* Direct without Landlock: nothing of the host's is out of reach. */
        if (direct && !ll) {
                push(ctx, "the host's file system (no landlock in force)");
                return;
        }
        bool done[POL_JP_BLAST_RUN + 1] = { false };
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                if (e->blast == POL_JP_BLAST_NONE || e->blast == POL_JP_BLAST_RUN ||
                    (direct && e->direct == POL_JP_DIRECT_NONE))
                        continue;
                bool one = e->blast == POL_JP_BLAST_LINE || (e->blast == POL_JP_BLAST_HOST && !direct);
                if (one) {
                        if (!shown(e, direct, exists))
                                continue;
                        snprintf(line, sizeof(line), "%s%s%s", e->path, e->note, direct ? " (landlock)" : "");
                        push(ctx, line);
                        continue;
                }
                if (done[e->blast])
                        continue;
                done[e->blast] = true;
                group_line(e->blast, direct, ll, exists, line, sizeof(line));
                push(ctx, line);
        }
}

int pol_jail_roots(const char *run_dir, struct pol_jail_roots *out)
{
        size_t used = 0;
        out->workdir = out->scratch = NULL;
        out->n_read = out->n_write = 0;
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                enum pol_jp_audit a = e->audit;
                if (a != POL_JP_AUDIT_WORKDIR && a != POL_JP_AUDIT_READ_ROOT && a != POL_JP_AUDIT_WRITE_ROOT &&
                    a != POL_JP_AUDIT_SCRATCH)
                        continue;
                if (used == ELEMENTSOF(out->buf) || out->n_read == POL_JAIL_ROOTS_MAX)
                        return -E2BIG;
                char *p = out->buf[used++];
                int r = pol_jail_path_where(e, run_dir, NULL, p, POL_JAIL_ROOT_SIZE);
                if (r < 0)
                        return r;
                if (a == POL_JP_AUDIT_WORKDIR)
                        out->workdir = p;
                else if (a == POL_JP_AUDIT_SCRATCH)
                        out->scratch = p;
                else
                        out->read[out->n_read++] = p;
                if (a == POL_JP_AUDIT_WRITE_ROOT)
                        out->write[out->n_write++] = p;
        }
        return 0;
}
