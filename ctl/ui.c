/* anvilctl ui: a one-time login link to the broker's web UI (docs/web-api.md "Logging in").
 * Run by any user, unprivileged: it asks the broker over its socket (ui_login; the broker
 * knows the caller from SO_PEERCRED), prints the link and, with a display and without
 * --no-browser, opens it with xdg-open. --inputs DIR: the directory's regular files are
 * opened here, as the calling user, and passed with the request (SCM_RIGHTS), so that the
 * page may choose its inputs among them without the broker opening a user's path. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/client.h"
#include "ctl/ui.h"
#include "lib/cleanup.h"

extern char **environ;

struct folder {
        char *names[PROTO_INPUTS_MAX];
        int fds[PROTO_INPUTS_MAX];
        size_t n;
};

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR's regular files (links not followed), sorted, at most PROTO_INPUTS_MAX: 0, or the exit status. */
static int open_folder(const char *dir, struct folder *f)
{
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d) {
                fprintf(stderr, "anvilctl ui: --inputs %s: %s\n", dir, strerror(errno));
                return EXIT_USAGE;
        }
        dfd = -EBADF;
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat st;
                if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                if (f->n == PROTO_INPUTS_MAX) {
                        fprintf(stderr, "anvilctl ui: --inputs %s: more than %u files; the UI takes at most %u\n", dir,
                                PROTO_INPUTS_MAX, PROTO_INPUTS_MAX);
                        closedir(d);
                        return EXIT_USAGE;
                }
                f->names[f->n++] = strdup(de->d_name);
        }
        qsort(f->names, f->n, sizeof(char *), cmp_str);
        for (size_t i = 0; i < f->n; i++) {
                f->fds[i] = openat(dirfd(d), f->names[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
                if (f->fds[i] < 0) {
                        fprintf(stderr, "anvilctl ui: --inputs %s: %s: %s\n", dir, f->names[i], strerror(errno));
                        closedir(d);
                        return EXIT_USAGE;
                }
        }
        closedir(d);
        return 0;
}

static void open_browser(const char *url)
{
        if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY"))
                return;
        pid_t pid;
        char *argv[] = { "xdg-open", (char *)url, NULL };
        if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ) != 0)
                fprintf(stderr, "anvilctl ui: xdg-open could not be started: open the link yourself\n");
}

struct ui_ctx {
        bool no_browser;
};

static int on_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        const struct ui_ctx *x = ctx;
        (void)fd;
        if (in->type != PROTO_UI_LINK)
                return -1;
        printf("%s\n", in->u.ui_link.url);
        fprintf(stderr, "anvilctl ui: open this link within %llu s; it works once, and its session is yours (uid %u)\n",
                (unsigned long long)in->u.ui_link.expires_s, (unsigned)getuid());
        fflush(stdout);
        if (!x->no_browser)
                open_browser(in->u.ui_link.url);
        *rc = 0;
        return 0;
}

void ctl_ui_help(void)
{
        printf("Usage: anvilctl ui [--no-browser] [--inputs DIR]\n"
               "Prints a one-time link to the broker's web UI for you (valid 60 s, used once), and opens it\n"
               "with xdg-open when there is a display.\n"
               "\nOptions:\n"
               "  --no-browser  only print the link\n"
               "  --inputs DIR  the page may take its inputs from DIR's files (opened now, as you)\n"
               "  -h, --help    this text\n");
        ctl_help_tail();
}

int ctl_cmd_ui(int argc, char **argv)
{
        static const struct option opts[] = { { "no-browser", no_argument, NULL, 'n' },
                                              { "inputs", required_argument, NULL, 'i' },
                                              { "help", no_argument, NULL, 'h' },
                                              { 0 } };
        struct ui_ctx x = { 0 };
        const char *dir = NULL;
        int c;
        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                if (c == 'n')
                        x.no_browser = true;
                else if (c == 'i')
                        dir = optarg;
                else if (c == 'h') {
                        ctl_ui_help();
                        return 0;
                } else {
                        fprintf(stderr, "usage: anvilctl ui [--no-browser] [--inputs DIR]\n");
                        return EXIT_USAGE;
                }
        }
        if (optind != argc) {
                fprintf(stderr, "anvilctl ui: unexpected argument '%s'\n", argv[optind]);
                return EXIT_USAGE;
        }
        struct folder f = { .n = 0 };
        int rc = dir ? open_folder(dir, &f) : 0;
        if (rc == 0) {
                struct proto_msg m = { .type = PROTO_UI_LOGIN };
                m.u.ui_login.inputs = (struct proto_strv){ .items = f.names, .n = f.n };
                int fd = ctl_send_request_fds(&m, "the login link", f.fds, f.n);
                rc = fd < 0 ? -fd : ctl_follow(fd, "the login link", on_frame, &x, NULL);
        }
        for (size_t i = 0; i < f.n; i++) {
                free(f.names[i]);
                if (f.fds[i] > 0)
                        (void)close(f.fds[i]);
        }
        return rc;
}
