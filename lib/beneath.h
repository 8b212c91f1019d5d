/* Files made below a directory fd with no link followed, for the unprivileged programs that
 * write what others named (the broker's copies of a task's artifacts, anvilctl's -o DIR).
 * Its own file, apart from fd.c, so that the supervisor, which writes no such path, does not
 * link it. */
#pragma once

#include <sys/types.h>

/* The file for path (components separated by '/', none empty, "." or "..": checked by the
 * caller) below root, made anew (O_EXCL): its directories opened, made with dir_mode if
 * missing, each with O_NOFOLLOW; the file made with file_mode, O_NOFOLLOW. The fd (write
 * only), or -errno: -ELOOP for a link or a file where a directory was. */
int fd_create_beneath(int root, const char *path, mode_t dir_mode, mode_t file_mode);
