#include "err.h"

#include <stdio.h>
#include <string.h>

static int err_vset(struct anvil_err *err, int code, int with_errno, const char *fmt, va_list ap)
{
        if (code <= 0)
                code = EIO;
        if (!err)
                return -code;
        err->code = code;
        int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        if (with_errno && n >= 0 && (size_t)n < sizeof(err->msg))
                snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s", strerror(code));
        return -code;
}

int anvil_err_set(struct anvil_err *err, int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = err_vset(err, code, 0, fmt, ap);
        va_end(ap);
        return r;
}

int anvil_err_sys(struct anvil_err *err, int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = err_vset(err, code, 1, fmt, ap);
        va_end(ap);
        return r;
}

int anvil_err_prefix(struct anvil_err *err, const char *fmt, ...)
{
        if (!err)
                return -EIO;
        char old[sizeof(err->msg)];
        memcpy(old, err->msg, sizeof(old));
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < sizeof(err->msg))
                snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s", old);
        return -(err->code ? err->code : EIO);
}
