/* An input of a run opened as the calling user (ctl/client.h ctl_open_input): anvilctl's
 * --input and anvil-mcp's run_python inputs, passed to the broker as open fds (SCM_RIGHTS). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/client.h"
#include "lib/cleanup.h"

/* NAME (what the tool sees in ./inputs) is PATH's last component unless given before the
 * first '='; a path with '=' in it is given as NAME=PATH. */
int ctl_open_input(const char *what, const char *arg, struct proto_input *in, int *fds, size_t *n_fds, char *why,
                   size_t why_size)
{
        const char *eq = strchr(arg, '=');
        const char *path = eq ? eq + 1 : arg;
        _cleanup_free_ char *copy = strdup(path);
        if (!copy) {
                snprintf(why, why_size, "out of memory");
                return -1;
        }
        size_t l = strlen(copy);
        while (l > 1 && copy[l - 1] == '/')
                copy[--l] = 0;
        in->name = eq ? strndup(arg, (size_t)(eq - arg)) : strdup(basename(copy));
        if (!in->name || !path[0]) {
                snprintf(why, why_size, "%s %s: expected [NAME=]PATH", what, arg);
                return -1;
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                snprintf(why, why_size, "%s %s: cannot open it: %s", what, path, strerror(errno));
                return -1;
        }
        struct stat st;
        if (fstat(fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
                (void)close(fd);
                snprintf(why, why_size, "%s %s: not a regular file or a directory", what, path);
                return -1;
        }
        in->fd.set = true;
        in->fd.v = (int64_t)*n_fds;
        fds[(*n_fds)++] = fd;
        return 0;
}
