/* Scoped cleanup (CONVENTIONS §2), after systemd's macros: a variable marked _cleanup_free_ is
 * freed when it leaves scope; TAKE_PTR/TAKE_FD hand ownership on. fds start at -EBADF. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                (void)close(*fd);
                errno = saved;
        }
}
/* Closes *fd if it is open and marks it closed (-EBADF), errno kept: for an fd held in a struct
 * or an array, which _cleanup_close_ does not reach. */
static inline void close_reset(int *fd)
{
        closep(fd);
        *fd = -EBADF;
}

static inline void close_reset_many(int *fds, size_t n)
{
        for (size_t i = 0; i < n; i++)
                close_reset(&fds[i]);
}

static inline void fclosep(FILE **f) { if (*f) (void)fclose(*f); }
static inline void closedirp(DIR **d) { if (*d) (void)closedir(*d); }

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
#define TAKE_FD(fd) ({ int _t = (fd); (fd) = -EBADF; _t; })

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
