/* Walking the lines of a text, bounded by its length (a NUL is not needed, and nothing past
 * len is read). Each line comes without its '\n'; a last line without one counts; "a\n" is one
 * line, "" none, "\n" one empty line. A '\r' before the '\n' is kept: the /proc, cgroupfs and
 * tool texts walked here have none, and a caller that may see CRLF trims it (line_trim_cr).
 *
 *     struct lines it = lines_of_str(text);
 *     const char *l;
 *     size_t n;
 *     while (lines_next(&it, &l, &n))
 *             if (line_starts(l, n, "Seccomp:")) ...
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct lines {
        const char *p, *end;
};

static inline struct lines lines_of(const char *buf, size_t len)
{
        return (struct lines){ buf, buf ? buf + len : NULL };
}

static inline struct lines lines_of_str(const char *s)
{
        return lines_of(s, s ? strlen(s) : 0);
}

/* The next line: its start and length (no '\n'); false at the end. */
static inline bool lines_next(struct lines *it, const char **line, size_t *len)
{
        if (!it->p || it->p >= it->end)
                return false;
        const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
        *line = it->p;
        *len = (size_t)((nl ? nl : it->end) - it->p);
        it->p = nl ? nl + 1 : it->end;
        return true;
}

/* Whether the line of len bytes starts with prefix (what follows is line + strlen(prefix)). */
static inline bool line_starts(const char *line, size_t len, const char *prefix)
{
        size_t n = strlen(prefix);
        return len >= n && memcmp(line, prefix, n) == 0;
}

/* The line's length without a '\r' that ends it. */
static inline size_t line_trim_cr(const char *line, size_t len)
{
        return len && line[len - 1] == '\r' ? len - 1 : len;
}
