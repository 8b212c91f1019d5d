/* anvilctl ui (ctl/ui.c): the web UI's one-time login link. */
#pragma once

int ctl_cmd_ui(int argc, char **argv);
void ctl_ui_help(void);
/* ctl/main.c's: the tail every command's help shares (the broker, the exit status). */
void ctl_help_tail(void);
