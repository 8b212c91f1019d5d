/* anvilctl ui (ctl/ui.c): the web UI's one-time login link. */
#pragma once

int ctl_cmd_ui(int argc, char **argv);
void ctl_ui_help(void);
