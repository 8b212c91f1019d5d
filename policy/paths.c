/* Paths against roots. Resolution follows symlinks where the path exists (so a link out of
 * the roots is judged by where it leads) and applies "." and ".." where it does not yet (so
 * './artifacts/../outside.txt' is /work/outside.txt, outside). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/rules.h"

/* Drops the last component of an absolute path, in place; "/" stays "/". */
static void parent(char *p)
{
        char *s = strrchr(p, '/');
        if (!s || s == p)
                p[1] = 0;
        else
                *s = 0;
}

int pol_path_resolve(const char *path, const char *cwd, pol_realpath_fn rp, void *ctx, char *out, size_t size)
{
        char full[4096], cur[4096], tmp[4096];
        int n = path[0] == '/' ? snprintf(full, sizeof(full), "%s", path)
                               : snprintf(full, sizeof(full), "%s/%s", cwd, path);
        if (n < 0 || (size_t)n >= sizeof(full))
                return -ENAMETOOLONG;
        strcpy(cur, "/");
        char *save = NULL;
        for (char *comp = strtok_r(full, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
                if (strcmp(comp, ".") == 0)
                        continue;
                if (strcmp(comp, "..") == 0) {
                        parent(cur);
                        continue;
                }
                n = snprintf(tmp, sizeof(tmp), "%s%s%s", cur, strcmp(cur, "/") == 0 ? "" : "/", comp);
                if (n < 0 || (size_t)n >= sizeof(tmp))
                        return -ENAMETOOLONG;
                /* Where it exists, the kernel's answer: symlinks followed, to wherever. */
                if (rp(tmp, cur, sizeof(cur), ctx) < 0)
                        strcpy(cur, tmp);
        }
        if (strlen(cur) >= size)
                return -ENAMETOOLONG;
        strcpy(out, cur);
        return 0;
}

bool pol_path_under(const char *resolved, const char *root)
{
        size_t n = strlen(root);
        if (n == 1 && root[0] == '/')
                return resolved[0] == '/';
        return strncmp(resolved, root, n) == 0 && (resolved[n] == 0 || resolved[n] == '/');
}

enum pol_why pol_path_verdict(const char *resolved, enum pol_access access, const struct pol_roots *roots)
{
        if (roots->scratch && pol_path_under(resolved, roots->scratch))
                return POL_WHY_NONE;
        bool write = access == POL_ACCESS_WRITE;
        if (!write && roots->workdir && strcmp(resolved, roots->workdir) == 0)
                return POL_WHY_NONE;
        if (!write && roots->system && pol_path_under(resolved, roots->system))
                return POL_WHY_NONE;
        const char *const *list = write ? roots->write : roots->read;
        size_t count = write ? roots->n_write : roots->n_read;
        for (size_t i = 0; i < count; i++)
                if (pol_path_under(resolved, list[i]))
                        return POL_WHY_NONE;
        return write ? POL_WHY_WRITE : POL_WHY_READ;
}

void pol_roots_display(const struct pol_roots *roots, bool write, char *buf, size_t size)
{
        const char *const *list = write ? roots->write : roots->read;
        size_t count = write ? roots->n_write : roots->n_read;
        size_t o = 0;
        if (!size)
                return; /* not even room for the terminator */
        buf[0] = 0;
        size_t wl = roots->workdir ? strlen(roots->workdir) : 0;
        for (size_t i = 0; i < count && o < size; i++) {
                const char *p = list[i];
                bool rel = wl && strncmp(p, roots->workdir, wl) == 0 && p[wl] == '/';
                int n = snprintf(buf + o, size - o, "%s%s%s", i ? ", " : "", rel ? "./" : "", rel ? p + wl + 1 : p);
                if (n < 0)
                        break;
                o += (size_t)n;
        }
}
