/* The mount namespace: a root of our own on tmpfs, built from the table of the jail's paths
 * (policy/jail_paths.h, its mount column), holding only
 *   /usr and a few named files of /etc, read-only (no host secrets: no
 *     passwd, shadow, ssh, ssl keys, hostname, resolv.conf),
 *   a synthetic /etc (passwd, group, hosts, hostname, nsswitch.conf),
 *   a fresh /proc for the jail's own pid namespace,
 *   /dev with null, zero and urandom only,
 *   a private tmpfs /tmp (thrown away with the jail), with matplotlib's font cache bound
 *     read-only into it,
 *   /work/inputs read-only, the run's own directory; /work/artifacts writable, the run's
 *     own tmpfs (made by the supervisor, see struct jail_go),
 *   /anvil/anvil-py, the runner, read-only.
 * then pivot_root into it, the old root detached, and the root itself made read-only.
 *
 * Read-only binds use mount_setattr(AT_RECURSIVE) (Linux 5.12) so that submounts of /usr are
 * read-only too and mount flags the host locked (in a user namespace they cannot be
 * cleared) are left alone rather than failing a remount. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail/jail.h"
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "policy/jail_paths.h"

/* The synthetic files' contents (mount SYNTH in policy/jail_paths.h). */
static const struct {
        const char *path;
        const char *text;
} synthetic[] = {
        { "/etc/passwd", "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                         "tool:x:1000:1000:Anvil tool:/work:/usr/sbin/nologin\n"
                         "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" },
        { "/etc/group", "root:x:0:\ntool:x:1000:\nnogroup:x:65534:\n" },
        { "/etc/hostname", JAIL_HOSTNAME "\n" },
        { "/etc/hosts", "127.0.0.1\tlocalhost " JAIL_HOSTNAME "\n::1\tlocalhost\n" },
        { "/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n" },
};

static int setattr(const char *path, unsigned flags, uint64_t set, struct anvil_err *err)
{
        struct mount_attr a = { .attr_set = set };
        if (mount_setattr(AT_FDCWD, path, flags, &a, sizeof(a)) < 0)
                return anvil_err_sys(err, errno, "Failed to set mount attributes on %s", path);
        return 0;
}

static int make_target(const char *dst, bool is_dir, struct anvil_err *err)
{
        if (is_dir) {
                if (mkdir(dst, 0755) < 0 && errno != EEXIST)
                        return anvil_err_sys(err, errno, "Failed to create %s", dst);
                return 0;
        }
        _cleanup_close_ int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0444);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", dst);
        return 0;
}

/* dst is relative to the new root (the cwd); src a host path. */
static int bind(const char *src, const char *dst, bool writable, struct anvil_err *err)
{
        struct stat st;
        if (stat(src, &st) < 0)
                return anvil_err_sys(err, errno, "Failed to stat %s", src);
        int r = make_target(dst, S_ISDIR(st.st_mode), err);
        if (r < 0)
                return r;
        if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
                return anvil_err_sys(err, errno, "Failed to bind %s", src);
        uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        attrs |= writable ? MOUNT_ATTR_NOEXEC : MOUNT_ATTR_RDONLY;
        return setattr(dst, AT_RECURSIVE, attrs, err);
}

static int tmpfs(const char *dst, const char *opts, unsigned long flags, struct anvil_err *err)
{
        if (mkdir(dst, 0755) < 0 && errno != EEXIST)
                return anvil_err_sys(err, errno, "Failed to create %s", dst);
        if (mount("tmpfs", dst, "tmpfs", flags, opts) < 0)
                return anvil_err_sys(err, errno, "Failed to mount a tmpfs on %s", dst);
        return 0;
}

const char *jail_mountns_synthetic(const char *path)
{
        for (unsigned i = 0; i < ELEMENTSOF(synthetic); i++)
                if (strcmp(synthetic[i].path, path) == 0)
                        return synthetic[i].text;
        return NULL;
}

/* Debian 12 is /usr-merged: /bin, /lib, ... are symlinks into /usr, recreated as such. */
static int usr_link(const char *host, const char *dst, struct anvil_err *err)
{
        char target[64];
        ssize_t n = readlink(host, target, sizeof(target) - 1);
        if (n < 0)
                return 0; /* absent, or a real directory: not on a /usr-merged host */
        target[n] = 0;
        if (symlink(target, dst) < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", host);
        return 0;
}

static int synth(const char *path, const char *dst, struct anvil_err *err)
{
        const char *text = jail_mountns_synthetic(path);
        if (!text)
                return anvil_err_set(err, ENOENT, "No contents for the jail's %s", path);
        return fd_write_file_at(AT_FDCWD, dst, text, strlen(text), 0644, err);
}

/* /dev: nodes bound into it (DEV entries) and links into /proc/self/fd; read-only once built
 * (build_root). */
static int dev_tmpfs(const char *dst, struct anvil_err *err)
{
        int r;
        if ((r = tmpfs(dst, "mode=0755,size=64k", MS_NOSUID | MS_NOEXEC, err)) < 0)
                return r;
        static const char *const links[][2] = {
                { "/proc/self/fd", "fd" },
                { "/proc/self/fd/0", "stdin" },
                { "/proc/self/fd/1", "stdout" },
                { "/proc/self/fd/2", "stderr" },
        };
        for (unsigned i = 0; i < ELEMENTSOF(links); i++) {
                char p[64];
                snprintf(p, sizeof(p), "%s/%s", dst, links[i][1]);
                if (symlink(links[i][0], p) < 0)
                        return anvil_err_sys(err, errno, "Failed to create /%s", p);
        }
        return 0;
}

static int dev_node(const char *src, const char *dst, struct anvil_err *err)
{
        int r;
        if ((r = make_target(dst, false, err)) < 0)
                return r;
        if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
                return anvil_err_sys(err, errno, "Failed to bind %s", src);
        return setattr(dst, 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
}

/* /tmp is mounted before GO with one page of room and given the run's size after it (the
 * remount keeps its nr_inodes). */
static int build_tmp(const struct jail_static *st, const char *dst, struct anvil_err *err)
{
        int r;
        char opts[64];
        snprintf(opts, sizeof(opts), "mode=1777,size=4k,nr_inodes=%u", JAIL_TMP_ENTRIES + 1);
        if ((r = tmpfs(dst, opts, MS_NOSUID | MS_NODEV | MS_NOEXEC, err)) < 0)
                return r;
        if (mkdir(JAIL_MPLCONFIGDIR + 1, 0755) < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", JAIL_MPLCONFIGDIR);
        if (!st->font_cache_dir)
                return 0;
        /* matplotlib wants its config directory writable, and rebuilds its font cache (with a
         * fork of fc-list) when the file is missing: the directory is the jail's own, the
         * cache files in it are the supervisor's, read-only. Read with getdents64, not opendir:
         * opendir allocates, and the jail's child allocates nothing before exec (contain.c,
         * step_wait_go). */
        _cleanup_close_ int dfd = open(st->font_cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s", st->font_cache_dir);
        char buf[4096] __attribute__((aligned(8)));
        ssize_t n;
        while ((n = getdents64(dfd, buf, sizeof(buf))) > 0)
                for (ssize_t off = 0; off < n;) {
                        const struct dirent64 *de = (const struct dirent64 *)(buf + off);
                        off += de->d_reclen;
                        if (de->d_type != DT_REG)
                                continue;
                        char src[4096], to[512];
                        snprintf(src, sizeof(src), "%s/%s", st->font_cache_dir, de->d_name);
                        snprintf(to, sizeof(to), "%s/%s", JAIL_MPLCONFIGDIR + 1, de->d_name);
                        if ((r = bind(src, to, false, err)) < 0)
                                return r;
                }
        if (n < 0)
                return anvil_err_sys(err, errno, "Failed to read %s", st->font_cache_dir);
        return 0;
}

static int resize_tmp(const char *dst, uint64_t bytes, struct anvil_err *err)
{
        char opts[64];
        snprintf(opts, sizeof(opts), "size=%llu", (unsigned long long)bytes);
        if (mount(NULL, dst, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
                return anvil_err_sys(err, errno, "Failed to size %s", JAIL_TMP);
        return 0;
}

/* One entry of the table, before GO, in the new root (the cwd): dst is its path there. The
 * run's own entries get their mount points now and their mounts after GO (run_entry). */
static int prepare_entry(const struct jail_static *st, const struct pol_jail_path *e, struct anvil_err *err)
{
        const char *dst = e->path + 1;
        switch (e->mount) {
        case POL_JP_MOUNT_DIR:
        case POL_JP_MOUNT_INPUTS:
        case POL_JP_MOUNT_ARTIFACTS:
                if (mkdir(dst, 0755) < 0)
                        return anvil_err_sys(err, errno, "Failed to create %s", e->path);
                return 0;
        case POL_JP_MOUNT_RO_BIND_OPT:
                if (access(e->path, F_OK) < 0)
                        return 0;
                return bind(e->path, dst, false, err);
        case POL_JP_MOUNT_RO_BIND: return bind(e->path, dst, false, err);
        case POL_JP_MOUNT_USR_LINK: return usr_link(e->path, dst, err);
        case POL_JP_MOUNT_SYNTH: return synth(e->path, dst, err);
        case POL_JP_MOUNT_PROC:
                if (mkdir(dst, 0555) < 0)
                        return anvil_err_sys(err, errno, "Failed to create %s", e->path);
                if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                        return anvil_err_sys(err, errno, "Failed to mount %s", e->path);
                return 0;
        case POL_JP_MOUNT_DEV_TMPFS: return dev_tmpfs(dst, err);
        case POL_JP_MOUNT_DEV: return dev_node(e->path, dst, err);
        case POL_JP_MOUNT_TMPFS: return build_tmp(st, dst, err);
        case POL_JP_MOUNT_RUNNER: return bind(st->runner_path, dst, false, err);
        }
        return anvil_err_set(err, EINVAL, "No way to mount %s", e->path);
}

/* After GO: the run's own, its inputs, read-only, and its artifacts tmpfs, moved in from the
 * supervisor's detached mount (nosuid, nodev, noexec, sized to the files cap): the only
 * writable place besides /tmp, which gets the run's size. */
static int run_entry(const struct jail_config *cfg, const struct pol_jail_path *e, struct anvil_err *err)
{
        const char *dst = e->path + 1;
        switch (e->mount) {
        case POL_JP_MOUNT_INPUTS: {
                int r = bind(cfg->go->inputs_dir, dst, false, err);
                /* The inputs passed as fds: each onto its mount point, by name (checked again:
                 * one component, never "." or ".."). */
                for (uint32_t i = 0; r == 0 && cfg->inputs && i < cfg->inputs->n - (cfg->go->egress ? 1 : 0); i++) {
                        const char *name = cfg->inputs->names[i];
                        char at[PATH_MAX];
                        if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
                            snprintf(at, sizeof(at), "%s/%s", dst, name) >= (int)sizeof(at))
                                return anvil_err_set(err, EINVAL, "An input's name is not one file name");
                        if (move_mount(cfg->input_fds[i], "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                                return anvil_err_sys(err, errno, "Failed to attach the input %s", name);
                }
                return r;
        }
        case POL_JP_MOUNT_ARTIFACTS:
                if (move_mount(cfg->artifacts_mount_fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return anvil_err_sys(err, errno, "Failed to attach the artifacts tmpfs at %s", e->path);
                return 0;
        case POL_JP_MOUNT_TMPFS: return resize_tmp(dst, cfg->go->tmp_bytes, err);
        default: return 0;
        }
}

int jail_mountns_prepare(const struct jail_static *st)
{
        return st->direct ? 0 : CLONE_NEWNS;
}

int jail_mountns_child(const struct jail_static *st, struct anvil_err *err)
{
        int r;
        umask(022);
        /* Nothing done here may reach the host's mount table. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return anvil_err_sys(err, errno, "Failed to make the mount tree private");
        if (mount("tmpfs", st->root_dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
                return anvil_err_sys(err, errno, "Failed to mount the jail's root");
        if (chdir(st->root_dir) < 0)
                return anvil_err_sys(err, errno, "Failed to enter the jail's root");
        /* In table order: a directory comes before what is in it. */
        for (size_t i = 0; i < pol_jail_n_paths; i++)
                if ((r = prepare_entry(st, &pol_jail_paths[i], err)) < 0)
                        return r;
        for (size_t i = 0; i < pol_jail_n_paths; i++)
                if (pol_jail_paths[i].mount == POL_JP_MOUNT_DEV_TMPFS &&
                    (r = setattr(pol_jail_paths[i].path + 1, 0, MOUNT_ATTR_RDONLY, err)) < 0)
                        return r;
        return 0;
}

int jail_mountns_child_go(const struct jail_config *cfg, struct anvil_err *err)
{
        int r;
        for (size_t i = 0; i < pol_jail_n_paths; i++)
                if ((r = run_entry(cfg, &pol_jail_paths[i], err)) < 0)
                        return r;
        /* pivot_root(".", "."): the old root ends up stacked on the new one, and is detached. */
        if (syscall(SYS_pivot_root, ".", ".") < 0)
                return anvil_err_sys(err, errno, "Failed to pivot_root");
        if (umount2(".", MNT_DETACH) < 0)
                return anvil_err_sys(err, errno, "Failed to detach the host's root");
        if (chdir("/") < 0)
                return anvil_err_sys(err, errno, "Failed to enter /");
        if ((r = setattr("/", 0, MOUNT_ATTR_RDONLY, err)) < 0)
                return r;
        if (chdir(JAIL_WORKDIR) < 0)
                return anvil_err_sys(err, errno, "Failed to enter %s", JAIL_WORKDIR);
        return 0;
}

/* The artifacts tmpfs, as a detached mount: the kernel enforces the files cap (bytes) and
 * JAIL_ARTIFACTS_ENTRIES (inodes) as the tool writes, the jail moves it into its own
 * namespace, and the supervisor reads it through this fd afterwards. Owned by uid (as the
 * caller's user namespace maps it), mode 0700. */
int jail_artifacts_tmpfs(uid_t uid, uint64_t files_bytes, int *mount_fd, struct anvil_err *err)
{
        char size[32], id[16], inodes[16];
        snprintf(size, sizeof(size), "%llu", (unsigned long long)files_bytes);
        snprintf(id, sizeof(id), "%u", (unsigned)uid);
        snprintf(inodes, sizeof(inodes), "%u", JAIL_ARTIFACTS_ENTRIES + 1);
        _cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return anvil_err_sys(err, errno, "Failed to open a tmpfs context");
        if (fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "uid", id, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "gid", id, 0) < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return anvil_err_sys(err, errno, "Failed to configure the artifacts tmpfs");
        int m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (m < 0)
                return anvil_err_sys(err, errno, "Failed to create the artifacts tmpfs");
        *mount_fd = m;
        return 0;
}
