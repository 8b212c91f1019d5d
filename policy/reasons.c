#include "policy/reasons.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const formats[_POL_REASON_MAX] = {
#define X(id, fmt) [POL_##id] = fmt,
        POL_REASONS(X)
#undef X
};

const char *pol_reason_format(enum pol_reason r)
{
        return (unsigned)r < _POL_REASON_MAX ? formats[r] : "unknown reason";
}

char *pol_format(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return buf;
}

static const char *const whys[_POL_WHY_MAX] = {
        [POL_WHY_NONE] = "allowed",
#define X(id, text) [POL_WHY_##id] = text,
        POL_WHYS(X)
#undef X
};

const char *pol_why_text(enum pol_why w)
{
        return (unsigned)w < _POL_WHY_MAX ? whys[w] : "unknown";
}

static const char *const startup_formats[_POL_STARTUP_MAX] = {
#define X(id, fmt) [POL_STARTUP_##id] = fmt,
        POL_STARTUP(X)
#undef X
};

const char *pol_startup_format(enum pol_startup m)
{
        return (unsigned)m < _POL_STARTUP_MAX ? startup_formats[m] : "unknown start-up message";
}
