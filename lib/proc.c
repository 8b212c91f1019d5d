#include "lib/proc.h"

#include <stdlib.h>
#include <string.h>

bool proc_status_get(const char *status, const char *key, char *out, size_t size)
{
        size_t kn = strlen(key);
        for (const char *l = status; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (strncmp(l, key, kn) == 0 && l[kn] == ':') {
                        const char *v = l + kn + 1;
                        v += strspn(v, " \t");
                        size_t n = strcspn(v, "\n");
                        if (n >= size)
                                n = size - 1;
                        memcpy(out, v, n);
                        out[n] = 0;
                        return true;
                }
        return false;
}

long proc_status_long(const char *status, const char *key)
{
        char v[32];
        return proc_status_get(status, key, v, sizeof(v)) ? strtol(v, NULL, 10) : -1;
}
