/* Pre-warm, don't whitelist (DESIGN §5): what the data stack would do in a run that the jail
 * refuses is done once at start-up, outside any jail, by an unprivileged uid (uid_base, which
 * no run uses), and its result handed to every run.
 *   matplotlib's font cache: building it means a fork of fc-list and writes. Built by
 *     Debian's python3, then handed to root and bound read-only into every jail.
 *   platform's processor: pandas asks platform.uname() at import, and platform runs
 *     `uname -p` for it. Run here once; the runner puts the answer where platform caches it.
 *   platform.architecture() runs `file -b` on the interpreter. Run here once on Debian's
 *     python3; the runner answers platform's _syscmd_file with it. No `file` installed: the
 *     answer is "", as platform's own is on such a host. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/proc.h"
#include "supervisor/supervisor.h"

/* Runs argv as the builder uid with env, stdout to out_fd (or /dev/null if -1), and waits. */
uid_t sup_builder_uid(const struct sup_server *srv)
{
        return srv->cfg.rootless ? geteuid() : srv->cfg.uid_base;
}

gid_t sup_builder_gid(const struct sup_server *srv)
{
        return srv->cfg.rootless ? getegid() : (gid_t)srv->cfg.uid_base;
}

int sup_builder_run(struct sup_server *srv, const char *path, char *const argv[], char *const env[], int out_fd,
                    int *status, struct anvil_err *err)
{
        uid_t builder = sup_builder_uid(srv);
        gid_t group = sup_builder_gid(srv);
        pid_t pid = fork();
        if (pid < 0)
                return anvil_err_sys(err, errno, "Failed to fork %s", path);
        if (pid == 0) {
                /* Rootless, the builder is ourselves: nothing to drop. */
                if ((!srv->cfg.rootless && setgroups(0, NULL) < 0) || setresgid(group, group, group) < 0 ||
                    setresuid(builder, builder, builder) < 0)
                        _exit(126);
                int null = open("/dev/null", O_RDWR);
                if (null >= 0) {
                        (void)dup2(null, 0);
                        (void)dup2(out_fd >= 0 ? out_fd : null, 1);
                }
                /* Not the supervisor's ignored SIGPIPE, nor a mask libuv set. */
                bool reset = true;
#ifdef ANVIL_TEST_BUILD
                reset = !srv->cfg.test_no_signal_reset;
#endif
                if (reset && anvil_reset_signals() < 0)
                        _exit(126);
                execve(path, argv, env);
                _exit(127);
        }
        while (waitpid(pid, status, 0) < 0)
                if (errno != EINTR)
                        return anvil_err_sys(err, errno, "Failed to wait for %s", path);
        return 0;
}

static char *const builder_env[] = { "HOME=/nonexistent", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };

/* Runs argv as the builder and reads what it prints, up to size - 1 bytes, into buf. */
int sup_builder_output(struct sup_server *srv, const char *path, char *const argv[], char *const env[], char *buf,
                       size_t size, int *status, struct anvil_err *err)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return anvil_err_sys(err, errno, "Failed to create a pipe");
        /* The pipe holds 64 KiB: the commands run here print a line. */
        int r = sup_builder_run(srv, path, argv, env, p[1], status, err);
        (void)close(p[1]);
        size_t got = 0;
        while (r >= 0 && got < size - 1) {
                ssize_t n = read(p[0], buf + got, size - 1 - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                got += (size_t)n;
        }
        buf[got] = 0;
        (void)close(p[0]);
        return r;
}

int sup_prewarm_platform(struct sup_server *srv, struct anvil_err *err)
{
        char *const argv[] = { "uname", "-p", NULL };
        char buf[256];
        int status, r = sup_builder_output(srv, "/usr/bin/uname", argv, builder_env, buf, sizeof(buf), &status, err);
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return anvil_err_set(err, EIO, "/usr/bin/uname -p failed (status %d)", status);
        buf[strcspn(buf, "\n")] = 0;
        /* As platform does: "unknown" is blank. */
        snprintf(srv->platform_processor, sizeof(srv->platform_processor), "%s", strcmp(buf, "unknown") ? buf : "");
        /* As platform's _syscmd_file does: LC_ALL=C, the interpreter's real path, the output
         * kept whole (trailing newline and all) for platform to parse. */
        char python[PATH_MAX];
        if (!realpath("/usr/bin/python3", python))
                return anvil_err_sys(err, errno, "Failed to resolve /usr/bin/python3");
        char *const fargv[] = { "file", "-b", python, NULL };
        char *const fenv[] = { "HOME=/nonexistent", "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
        srv->platform_file[0] = 0;
        if (access("/usr/bin/file", X_OK) == 0) {
                r = sup_builder_output(srv, "/usr/bin/file", fargv, fenv, srv->platform_file, sizeof(srv->platform_file),
                                   &status, err);
                if (r < 0)
                        return r;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        srv->platform_file[0] = 0; /* as platform: a failed `file` is no answer */
        }
        srv->have_platform_processor = true;
        return 0;
}

static const char build_script[] =
        "import sys, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "from matplotlib import font_manager\n"
        "sys.exit(0 if font_manager.fontManager.ttflist else 3)\n";

int sup_fontcache_build(struct sup_server *srv, struct anvil_err *err)
{
        char dir[PATH_MAX];
        if (snprintf(dir, sizeof(dir), "%s/mplcache", srv->cfg.state_dir) >= (int)sizeof(dir))
                return anvil_err_set(err, ENAMETOOLONG, "State directory path is too long");
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return anvil_err_sys(err, errno, "Failed to create %s", dir);
        uid_t builder = sup_builder_uid(srv);
        gid_t group = sup_builder_gid(srv);
        if (chown(dir, builder, group) < 0 || chmod(dir, 0755) < 0)
                return anvil_err_sys(err, errno, "Failed to hand %s to uid %u", dir, (unsigned)builder);
        {
                /* A cache from an earlier start is the builder's again, so that matplotlib can
                 * replace it if its version changed. */
                _cleanup_closedir_ DIR *old = opendir(dir);
                struct dirent *de;
                while (old && (de = readdir(old)))
                        if (de->d_name[0] != '.' &&
                            fchownat(dirfd(old), de->d_name, builder, group, AT_SYMLINK_NOFOLLOW) < 0)
                                return anvil_err_sys(err, errno, "Failed to hand %s/%s to uid %u", dir, de->d_name,
                                                     (unsigned)builder);
        }
        char env_dir[PATH_MAX + 16];
        snprintf(env_dir, sizeof(env_dir), "MPLCONFIGDIR=%s", dir);
        char *const env[] = { env_dir, builder_env[0], builder_env[1], builder_env[2], NULL };
        char *const argv[] = { "python3", "-I", "-c", (char *)build_script, NULL };
        int status, r = sup_builder_run(srv, "/usr/bin/python3", argv, env, -1, &status, err);
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return anvil_err_set(err, EIO,
                                     "Building matplotlib's font cache with /usr/bin/python3 failed (status %d); "
                                     "is python3-matplotlib installed?",
                                     status);
        /* Back to root, read-only to everyone else. */
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d)
                return anvil_err_sys(err, errno, "Failed to open %s", dir);
        struct dirent *de;
        bool found = false;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (!S_ISREG(st.st_mode)) {
                        /* Only regular files are bound into jails; anything else is dropped. */
                        (void)unlinkat(dirfd(d), de->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
                        continue;
                }
                if (fchownat(dirfd(d), de->d_name, geteuid(), getegid(), AT_SYMLINK_NOFOLLOW) < 0 ||
                    fchmodat(dirfd(d), de->d_name, 0644, 0) < 0)
                        return anvil_err_sys(err, errno, "Failed to hand %s/%s to root", dir, de->d_name);
                if (strncmp(de->d_name, "fontlist-", 9) == 0)
                        found = true;
        }
        if (chown(dir, geteuid(), getegid()) < 0)
                return anvil_err_sys(err, errno, "Failed to hand %s to root", dir);
        if (!found)
                return anvil_err_set(err, ENOENT, "matplotlib wrote no fontlist-*.json into %s", dir);
        snprintf(srv->font_cache_dir, sizeof(srv->font_cache_dir), "%s", dir);
        return 0;
}
