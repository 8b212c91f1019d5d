#include "lib/ids.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>

int parse_group(const char *s, gid_t *out, struct anvil_err *err)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (*s && *s != '-' && !*end && !errno && v < 0xFFFFFFFFul) {
                *out = (gid_t)v;
                return 0;
        }
        struct group *g = getgrnam(s);
        if (!g)
                return anvil_err_set(err, ENOENT, "'%s' is neither a group name nor a gid", s);
        *out = g->gr_gid;
        return 0;
}

int parse_user(const char *s, uid_t *out, struct anvil_err *err)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (*s && *s != '-' && !*end && !errno && v < 0xFFFFFFFFul) {
                *out = (uid_t)v;
                return 0;
        }
        struct passwd *pw = *s ? getpwnam(s) : NULL;
        if (!pw)
                return anvil_err_set(err, ENOENT, "'%s' is neither a user name nor a uid", s);
        *out = pw->pw_uid;
        return 0;
}
