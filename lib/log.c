#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *program = "anvil";

void log_set_program(const char *name) { program = name; }

void log_msg(const char *level, const char *fmt, ...)
{
        char line[1024];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        (void)fprintf(stderr, "%s: %s: %s\n", program, level, line);
}
