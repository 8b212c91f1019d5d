/* Logging for the daemons' main()s and their event loops: one line to stderr (journald under
 * systemd) with the program name and level. Shared code never logs; it fills an anvil_err. */
#pragma once

void log_set_program(const char *name);
void log_msg(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_info(...) log_msg("info", __VA_ARGS__)
#define log_warn(...) log_msg("warning", __VA_ARGS__)
#define log_error(...) log_msg("error", __VA_ARGS__)
