/* Run directories: state/runs/<run_id>/
 *   tool.py      the source, as received (never inside the jail: the runner gets it on stdin)
 *   inputs/      the input files, root-owned, read-only in the jail: those sent as bytes, the
 *                copies of those passed as fds that are copied, and empty mount points for
 *                those the jail mounts from their fds (removed when the run ends)
 *   artifacts/   the copies of the regular files the tool left in its artifacts tmpfs (which
 *                is never attached on the host: see sup_rundir_artifacts_mount)
 *
 * Every directory on the way is 0711 or 0755 so the jail's uid can reach what is bound in,
 * but cannot list the runs; run ids carry 64 random bits. Nothing of a run is mounted on the
 * host: its jail builds its root in its own mount namespace. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "supervisor/supervisor.h"

#define COLLECT_MAX_DEPTH 16
/* How deep a run directory's removal descends: past the collect step's depth (artifacts'
 * copies) and what a direct run's tool can make in its tmp/ within PATH_MAX of short names
 * is its own choice; a tree deeper than this is left, its run still marked (the sweep at the
 * next start-up tries again) and the failure logged. */
#define RM_MAX_DEPTH 256

/* A copy of the regular file fd, up to the size fstat gave at request time (a file cut short
 * since ends the copy there; one grown is not read past it), read from the fd alone: the
 * client opened it, so its read was checked then. In the kernel where it can be
 * (copy_file_range), else through a small buffer: no memory grows with the file. */
static int copy_from_fd(int fd, int dirfd, const char *name, uint64_t size, const atomic_bool *cancel,
                        unsigned step_ms, struct anvil_err *err)
{
        _cleanup_close_ int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (out < 0)
                return anvil_err_sys(err, errno, "Failed to create the input %s", name);
        off_t off = 0;
        bool in_kernel = true;
        while ((uint64_t)off < size) {
                /* In steps of 16 MiB, so that a cancel (the run killed, the supervisor stopping)
                 * ends a copy of gigabytes within a step's time. */
                if (step_ms)
                        (void)nanosleep(&(struct timespec){ .tv_sec = step_ms / 1000, .tv_nsec = step_ms % 1000 * 1000000L },
                                        NULL);
                if (atomic_load(cancel))
                        return anvil_err_set(err, ECANCELED, "The copy of the input %s was cancelled", name);
                size_t want = size - (uint64_t)off > (16u << 20) ? (16u << 20) : (size_t)(size - (uint64_t)off);
                ssize_t k;
                if (in_kernel) {
                        k = copy_file_range(fd, &off, out, NULL, want, 0);
                        if (k < 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)) {
                                in_kernel = false;
                                continue;
                        }
                } else {
                        char buf[65536];
                        k = pread(fd, buf, want < sizeof(buf) ? want : sizeof(buf), off);
                        if (k > 0) {
                                int r = fd_write_all(out, buf, (size_t)k, err);
                                if (r < 0)
                                        return r;
                                off += k;
                        }
                }
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return anvil_err_sys(err, errno, "Failed to copy the input %s", name);
                if (k == 0)
                        break; /* cut short since it was sent */
        }
        return 0;
}

/* One input passed as an fd. As root, with a mount namespace, a detached clone of the fd's
 * mount (open_tree: the fd's own file or tree, whatever path now leads there), read-only,
 * nosuid, nodev, noexec, for the jail to attach over an empty mount point made here; nothing is
 * read from it. Otherwise, or for a file the jail's uid could not read (no read bit for
 * others) or whose mount is in another namespace, a copy: added to *cp, made on the thread
 * pool (sup_rundir_copy), never on the loop. Directories are never copied (inputs_check in
 * run.c refused them where no tree can be made). */
static int input_from_fd(struct sup_server *srv, int ifd, const char *name, int fd, struct jail_inputs *ji,
                         int *trees, struct sup_copies *cp, struct anvil_err *err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return anvil_err_sys(err, errno, "Failed to examine the input %s", name);
        bool dir = S_ISDIR(st.st_mode);
        if (!srv->cfg.rootless && !srv->cfg.direct && (dir || (st.st_mode & S_IROTH))) {
                unsigned rec = dir ? AT_RECURSIVE : 0;
                _cleanup_close_ int t = open_tree(fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec);
                struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                    MOUNT_ATTR_NOEXEC };
                if (t >= 0) {
                        if (mount_setattr(t, "", AT_EMPTY_PATH | rec, &a, sizeof(a)) < 0)
                                return anvil_err_sys(err, errno, "Failed to make the input %s read-only", name);
                        int r = dir ? (mkdirat(ifd, name, 0755) < 0 ? -errno : 0)
                                    : fd_write_file_at(ifd, name, "", 0, 0644, err);
                        if (r < 0)
                                return dir ? anvil_err_sys(err, -r, "Failed to make the mount point of %s", name) : r;
                        if (!dir)
                                ji->bound_bytes += (uint64_t)st.st_size; /* the blast radius's count */
                        trees[ji->n] = TAKE_FD(t);
                        snprintf(ji->names[ji->n], sizeof(ji->names[0]), "%s", name);
                        ji->n++;
                        return 0;
                }
                if (dir)
                        return anvil_err_sys(err, errno, "Failed to clone the mount of the directory input %s", name);
        }
        if (dir)
                return anvil_err_set(err, EINVAL, "The directory input %s cannot be mounted here", name);
        struct statfs sf; /* a mount in another namespace, world-readable, on FUSE: no copy either */
        if (fstatfs(fd, &sf) < 0 || sf.f_type == FUSE_SUPER_MAGIC)
                return anvil_err_set(err, EINVAL, "The input %s is on a FUSE file system: not copied", name);
        struct sup_copy *c = &cp->items[cp->n++];
        c->fd = fd;
        c->size = (uint64_t)st.st_size;
        snprintf(c->name, sizeof(c->name), "%s", name);
        return 0;
}

/* On the thread pool: the copies sup_rundir_create listed, then inputs/ made reachable. */
void sup_rundir_copy(struct sup_copies *cp)
{
        for (size_t i = 0; i < cp->n && cp->r >= 0; i++)
                cp->r = copy_from_fd(cp->items[i].fd, cp->ifd, cp->items[i].name, cp->items[i].size, &cp->cancel,
                                     cp->step_ms, &cp->err);
        (void)fchmod(cp->ifd, 0755);
}

int sup_rundir_create(struct sup_server *srv, const char *run_id, const struct proto_run_request *req,
                      const int *fds, struct jail_inputs *ji, int *trees, struct sup_copies *cp, char *dir,
                      size_t size, struct anvil_err *err)
{
        int r;
        if (snprintf(dir, size, "%s/%s", srv->runs_dir, run_id) >= (int)size)
                return anvil_err_set(err, ENAMETOOLONG, "Run directory path is too long");
        if (mkdir(dir, 0711) < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", dir);
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s", dir);
        if ((r = fd_write_file_at(dfd, "tool.py", req->source, strlen(req->source), 0644, err)) < 0)
                return r;
        if (mkdirat(dfd, "inputs", 0755) < 0 || mkdirat(dfd, "artifacts", 0755) < 0)
                return anvil_err_sys(err, errno, "Failed to create the directories of %s", dir);
        _cleanup_close_ int ifd = openat(dfd, "inputs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ifd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s/inputs", dir);
        const struct proto_input *in = req->inputs.items;
        ji->kind = JAIL_MSG_INPUTS;
        ji->n = 0;
        ji->bound_bytes = 0;
        for (size_t i = 0; i < req->inputs.n; i++) {
                if (in[i].fd.set)
                        r = input_from_fd(srv, ifd, in[i].name, fds[in[i].fd.v], ji, trees, cp, err);
                else
                        r = fd_write_file_at(ifd, in[i].name, in[i].data.data, in[i].data.len, 0644, err);
                if (r < 0)
                        return r;
        }
        if (cp->n) {
                cp->ifd = TAKE_FD(ifd);
                return 0;
        }
        (void)fchmod(ifd, 0755);
        return 0;
}

/* The artifacts tmpfs (jail/mountns.c), owned by the run's host uid: made here when the
 * supervisor is root; a rootless supervisor cannot, and its jails make their own (C5). */
int sup_rundir_artifacts_mount(uid_t uid, uint64_t files_bytes, int *mount_fd, struct anvil_err *err)
{
        return jail_artifacts_tmpfs(uid, files_bytes, mount_fd, err);
}

/* Direct (no namespaces, struct jail_static): the tool works in <dir>/jail, on the host's
 * paths: inputs a symlink to the run's inputs (read-only: root's files, or, rootless, held by
 * Landlock), artifacts and tmp directories of the run's uid. The artifacts are copied out of
 * jail/artifacts after the run, as they are out of the tmpfs otherwise; *art_fd is that
 * directory. The files cap is no tmpfs here: only RLIMIT_FSIZE bounds a file. */
/* The font cache, copied where the tool may write (matplotlib wants its config directory
 * writable, and would otherwise build a cache of its own with a fork of fc-list). */
static int copy_font_cache(const char *from, int tmp_fd, uid_t uid, gid_t gid, struct anvil_err *err)
{
        _cleanup_closedir_ DIR *d = opendir(from);
        if (!d)
                return 0; /* no cache: matplotlib will say so */
        if (mkdirat(tmp_fd, "matplotlib", 0700) < 0 || fchownat(tmp_fd, "matplotlib", uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
                return anvil_err_sys(err, errno, "Failed to make the font cache's directory");
        _cleanup_close_ int mfd = openat(tmp_fd, "matplotlib", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (mfd < 0)
                return anvil_err_sys(err, errno, "Failed to open the font cache's directory");
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat st;
                if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                uint8_t *data;
                size_t len;
                char path[PATH_MAX + 256];
                snprintf(path, sizeof(path), "%s/%s", from, de->d_name);
                int r = fd_read_file(path, 64u << 20, &data, &len, err);
                if (r < 0)
                        return r;
                r = fd_write_file_at(mfd, de->d_name, data, len, 0644, err);
                free(data);
                if (r < 0)
                        return r;
                if (fchownat(mfd, de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
                        return anvil_err_sys(err, errno, "Failed to hand the font cache to uid %u", (unsigned)uid);
        }
        return 0;
}

int sup_rundir_direct(const char *dir, uid_t uid, gid_t gid, const char *font_cache, char *jail_dir, size_t size,
                      int *art_fd, struct anvil_err *err)
{
        if (snprintf(jail_dir, size, "%s/jail", dir) >= (int)size)
                return anvil_err_set(err, ENAMETOOLONG, "Run directory path is too long");
        if (mkdir(jail_dir, 0711) < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", jail_dir);
        _cleanup_close_ int jfd = open(jail_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (jfd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s", jail_dir);
        if (symlinkat("../inputs", jfd, "inputs") < 0 || mkdirat(jfd, "artifacts", 0700) < 0 ||
            mkdirat(jfd, "tmp", 0700) < 0 || fchownat(jfd, "artifacts", uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ||
            fchownat(jfd, "tmp", uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
                return anvil_err_sys(err, errno, "Failed to make the directories of %s", jail_dir);
        if (font_cache && font_cache[0]) {
                _cleanup_close_ int tfd = openat(jfd, "tmp", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int r = tfd < 0 ? anvil_err_sys(err, errno, "Failed to open %s/tmp", jail_dir)
                                : copy_font_cache(font_cache, tfd, uid, gid, err);
                if (r < 0)
                        return r;
        }
        *art_fd = openat(jfd, "artifacts", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (*art_fd < 0)
                return anvil_err_sys(err, errno, "Failed to open %s/artifacts", jail_dir);
        return 0;
}

/* The collect step's bounds. Under a tmpfs the kernel already holds the tool to
 * JAIL_ARTIFACTS_ENTRIES, which a result can list whole; without one (direct) the walk's own
 * bound is the only one, and the result says where it stopped. */
#define COLLECT_NOTES_MAX 16    /* entries not listed, noted one by one; the others counted */
#define COLLECT_WALK_MAX 20000  /* entries looked at (their names are held, a directory at a time) */
#define SHOW_MAX 512            /* bytes of a path shown in a note */
_Static_assert(JAIL_ARTIFACTS_ENTRIES <= PROTO_ARTIFACTS_MAX,
               "every regular file the artifacts tmpfs can hold is listed in the result");
_Static_assert(SHOW_MAX + 4 <= PROTO_EV_OP_MAX && SHOW_MAX + 256 <= PROTO_EV_MESSAGE_MAX,
               "a note's path fits in an event's op and message");

struct collect {
        uint64_t total;   /* bytes copied */
        uint64_t files;   /* regular files found, listed or not */
        uint64_t skipped; /* entries not listed for another reason */
        uint64_t walked;  /* entries looked at */
        bool walk_stopped;
        uint64_t file_cap; /* without the tmpfs (direct): RLIMIT_FSIZE, which bounds each file; else 0 */
        uint64_t at_cap;   /* files of file_cap bytes */
        char first_at_cap[SHOW_MAX + 8];
        struct proto_array *artifacts, *notes;
};

static int add_note(struct proto_array *notes, const char *kind, const char *op, const char *message)
{
        struct proto_event *e = proto_array_push(notes, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->layer = strdup("supervisor");
        e->kind = strdup(kind);
        e->op = strdup(op);
        e->message = strdup(message);
        return (e->layer && e->kind && e->op && e->message) ? 0 : -ENOMEM;
}

/* A path as a note shows it: the tool chose its bytes, so invalid UTF-8 becomes U+FFFD and a
 * long one is cut (on a character) with "..." after it. */
static void show(const char *rel, char *out, size_t size)
{
        size_t n;
        _cleanup_free_ char *s = utf8_sanitize((const uint8_t *)rel, strlen(rel), &n);
        if (!s) {
                snprintf(out, size, "?");
                return;
        }
        size_t keep = utf8_prefix_len(s, SHOW_MAX < size - 4 ? SHOW_MAX : size - 4);
        snprintf(out, size, "%.*s%s", (int)keep, s, keep < n ? "..." : "");
}

/* An entry that is not listed: noted (the first COLLECT_NOTES_MAX), counted (all). why is
 * NULL for ARTIFACT_NOT_REGULAR, else the ARTIFACT_WHY_ text. */
static int skip(struct collect *c, const char *rel, enum pol_reason r, const char *why, struct anvil_err *err)
{
        if (c->skipped++ >= COLLECT_NOTES_MAX)
                return 0;
        char shown[SHOW_MAX + 8], msg[SHOW_MAX + 256];
        show(rel, shown, sizeof(shown));
        switch (r) { /* each a call of its own, so the compiler checks its arguments */
        case POL_ARTIFACT_NOT_LISTED:
                POL_REASON(msg, sizeof(msg), ARTIFACT_NOT_LISTED, shown, why);
                break;
        case POL_ARTIFACT_DIR_NOT_LISTED:
                POL_REASON(msg, sizeof(msg), ARTIFACT_DIR_NOT_LISTED, shown, why);
                break;
        default:
                POL_REASON(msg, sizeof(msg), ARTIFACT_NOT_REGULAR, shown);
                break;
        }
        return add_note(c->notes, "artifact_skipped", shown, msg) < 0 ? anvil_err_set(err, ENOMEM, "Out of memory") : 0;
}

/* Copies one regular file, opened without following links. Its sha256 is left to the broker,
 * which reads the copy unprivileged (broker/render.c, bro_hash_artifacts): "" until then. */
static int copy_file(int sfd, int dfd, const char *name, const char *rel, struct collect *c, struct anvil_err *err)
{
        _cleanup_close_ int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (in < 0)
                return anvil_err_sys(err, errno, "Failed to open artifact %s", rel);
        struct stat st;
        if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
                return skip(c, rel, POL_ARTIFACT_NOT_REGULAR, NULL, err);
        _cleanup_close_ int out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (out < 0)
                return anvil_err_sys(err, errno, "Failed to create the copy of artifact %s", rel);
        uint8_t buf[65536];
        uint64_t n_total = 0;
        for (;;) {
                ssize_t n = read(in, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return anvil_err_sys(err, errno, "Failed to read artifact %s", rel);
                }
                if (n == 0)
                        break;
                int r = fd_write_all(out, buf, (size_t)n, err);
                if (r < 0)
                        return r;
                n_total += (uint64_t)n;
        }
        struct proto_artifact *a = proto_array_push(c->artifacts, sizeof(*a));
        if (!a)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        a->path = strdup(rel);
        a->bytes = n_total;
        a->sha256 = strdup("");
        c->total += n_total;
        if (!a->path || !a->sha256)
                return anvil_err_set(err, ENOMEM, "Out of memory");
        if (c->file_cap && n_total >= c->file_cap && c->at_cap++ == 0)
                show(rel, c->first_at_cap, sizeof(c->first_at_cap));
        return 0;
}

static int cmp_names(const void *a, const void *b);

/* A directory's names, sorted (so that which files are listed, when not all can be, is the
 * first ones in path order, not the file system's order), at most room of them. */
static int read_names(int sfd, size_t room, char ***names, size_t *n, bool *more, struct anvil_err *err)
{
        int dup_fd = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0)
                return anvil_err_sys(err, errno, "Failed to read the artifacts directory");
        _cleanup_closedir_ DIR *d = fdopendir(dup_fd);
        if (!d) {
                (void)close(dup_fd);
                return anvil_err_sys(err, errno, "Failed to read the artifacts directory");
        }
        *names = NULL;
        *n = 0;
        *more = false;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (*n >= room) {
                        *more = true;
                        break;
                }
                char **nn = realloc(*names, (*n + 1) * sizeof(char *));
                if (!nn || !(nn[*n] = strdup(de->d_name))) {
                        *names = nn ? nn : *names;
                        return anvil_err_set(err, ENOMEM, "Out of memory");
                }
                *names = nn;
                (*n)++;
        }
        if (*n)
                qsort(*names, *n, sizeof(char *), cmp_names);
        return 0;
}

static int walk(int sfd, int dfd, const char *prefix, unsigned depth, struct collect *c, struct anvil_err *err);

static int walk_entry(int sfd, int dfd, const char *prefix, const char *name, unsigned depth, struct collect *c,
                      struct anvil_err *err)
{
        /* Room for the longest: PROTO_PATH_MAX of prefix and a name of NAME_MAX. */
        char rel[PROTO_PATH_MAX + NAME_MAX + 2];
        snprintf(rel, sizeof(rel), "%s%s", prefix, name);
        struct stat st;
        if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return anvil_err_sys(err, errno, "Failed to stat artifact %s", rel);
        bool dir = S_ISDIR(st.st_mode);
        enum pol_reason not_listed = dir ? POL_ARTIFACT_DIR_NOT_LISTED : POL_ARTIFACT_NOT_LISTED;
        char why[96];
        /* A listed path goes on the wire: UTF-8, and within the protocol's bound. */
        if (!utf8_valid((const uint8_t *)name, strlen(name)))
                return skip(c, rel, not_listed, POL_REASON(why, sizeof(why), ARTIFACT_WHY_NOT_UTF8), err);
        if (strlen(rel) > PROTO_PATH_MAX)
                return skip(c, rel, not_listed,
                            POL_REASON(why, sizeof(why), ARTIFACT_WHY_TOO_LONG, (unsigned)PROTO_PATH_MAX), err);
        if (S_ISREG(st.st_mode)) {
                c->files++;
                if (c->artifacts->n >= PROTO_ARTIFACTS_MAX)
                        return 0; /* counted, and said at the end (ARTIFACTS_NOT_LISTED) */
                return copy_file(sfd, dfd, name, rel, c, err);
        }
        if (!dir)
                return skip(c, rel, POL_ARTIFACT_NOT_REGULAR, NULL, err);
        if (depth >= COLLECT_MAX_DEPTH)
                return skip(c, rel, not_listed,
                            POL_REASON(why, sizeof(why), ARTIFACT_WHY_TOO_DEEP, (unsigned)COLLECT_MAX_DEPTH), err);
        if (mkdirat(dfd, name, 0755) < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", rel);
        _cleanup_close_ int s2 = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int d2 = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s2 < 0 || d2 < 0)
                return anvil_err_sys(err, errno, "Failed to open directory %s", rel);
        strcat(rel, "/");
        return walk(s2, d2, rel, depth + 1, c, err);
}

static int walk(int sfd, int dfd, const char *prefix, unsigned depth, struct collect *c, struct anvil_err *err)
{
        char **names = NULL;
        size_t n = 0;
        bool more = false;
        int r = read_names(sfd, COLLECT_WALK_MAX - c->walked, &names, &n, &more, err);
        if (r < 0)
                goto out;
        if (more)
                c->walk_stopped = true;
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (c->walked >= COLLECT_WALK_MAX) {
                        c->walk_stopped = true;
                        break;
                }
                c->walked++;
                r = walk_entry(sfd, dfd, prefix, names[i], depth, c, err);
        }
out:
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
}

/* What the tool left in its artifacts, copied to <dir>/artifacts and listed; and a note for
 * each bound that was met: the tmpfs's (bytes, entries: the kernel refused the tool past
 * them), and the collect step's own (files a result cannot list, entries that cannot be
 * listed, the walk's end). Each says what is certain, nothing more. */
int sup_rundir_collect(const char *dir, int mount_fd, uint64_t files_bytes, struct proto_array *artifacts,
                       struct proto_array *notes, struct anvil_err *err)
{
        char art[PATH_MAX];
        if (snprintf(art, sizeof(art), "%s/artifacts", dir) >= (int)sizeof(art))
                return anvil_err_set(err, ENAMETOOLONG, "Artifacts path is too long");
        struct collect c = { .artifacts = artifacts, .notes = notes };
        char msg[256];
        /* A full tmpfs refused whatever went past it (ENOSPC to the tool). Whether anything
         * did cannot be seen from here: the reason says only what is certain. Only the run's
         * own tmpfs tells (direct has none: a host directory, whose file system is not the
         * run's). */
        struct statfs sf;
        bool tmpfs = fstatfs(mount_fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
                     sf.f_files == JAIL_ARTIFACTS_ENTRIES + 1;
        if (tmpfs && sf.f_bavail == 0)
                (void)add_note(notes, "artifacts_full", "artifacts",
                               POL_REASON(msg, sizeof(msg), ARTIFACTS_CAP_REACHED, (unsigned long long)files_bytes));
        if (tmpfs && sf.f_ffree == 0)
                (void)add_note(notes, "artifacts_entries_full", "artifacts",
                               POL_REASON(msg, sizeof(msg), ARTIFACTS_ENTRIES_REACHED, (unsigned)JAIL_ARTIFACTS_ENTRIES));
        /* Direct: a host directory, where RLIMIT_FSIZE (the files cap) bounds each file. */
        c.file_cap = tmpfs ? 0 : files_bytes;
        _cleanup_close_ int sfd = openat(mount_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int dfd = open(art, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0 || dfd < 0)
                return anvil_err_sys(err, errno, "Failed to open the artifacts of %s", dir);
        int r = walk(sfd, dfd, "", 0, &c, err);
        if (r < 0)
                return r;
        /* The run's end, as its directory's mtime: what retention goes by (sup_rundir_prune). */
        (void)utimensat(AT_FDCWD, dir, NULL, 0);
        if (c.files > artifacts->n)
                (void)add_note(notes, "artifacts_not_listed", "artifacts",
                               POL_REASON(msg, sizeof(msg), ARTIFACTS_NOT_LISTED, (unsigned long long)c.files,
                                          (unsigned long long)artifacts->n, (unsigned long long)(c.files - artifacts->n),
                                          (unsigned)PROTO_ARTIFACTS_MAX));
        if (c.at_cap) {
                char big[SHOW_MAX + 256];
                (void)add_note(notes, "artifacts_full", "artifacts",
                               POL_REASON(big, sizeof(big), ARTIFACT_FILE_CAP_REACHED, (unsigned long long)c.file_cap,
                                          (unsigned long long)c.at_cap, c.first_at_cap));
        }
        if (c.skipped > COLLECT_NOTES_MAX)
                (void)add_note(notes, "artifacts_skipped", "artifacts",
                               POL_REASON(msg, sizeof(msg), ARTIFACTS_SKIPPED_MORE,
                                          (unsigned long long)(c.skipped - COLLECT_NOTES_MAX), (unsigned)COLLECT_NOTES_MAX));
        if (c.walk_stopped)
                (void)add_note(notes, "artifacts_not_listed", "artifacts",
                               POL_REASON(msg, sizeof(msg), ARTIFACTS_WALK_STOPPED, (unsigned long long)c.walked));
        return 0;
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

struct ended {
        char *name;
        struct timespec t; /* the directory's mtime: when its run ended (sup_rundir_collect) */
};

static int cmp_ended(const void *a, const void *b)
{
        const struct ended *x = a, *y = b;
        if (x->t.tv_sec != y->t.tv_sec)
                return x->t.tv_sec < y->t.tv_sec ? -1 : 1;
        if (x->t.tv_nsec != y->t.tv_nsec)
                return x->t.tv_nsec < y->t.tv_nsec ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* Keeps the keep_runs run directories whose runs ended last, and never a live run's. By
 * their end, not their start (the names' order): a long run that ends after keep_runs
 * shorter ones started later would otherwise lose its artifacts as its result goes out. */
void sup_rundir_prune(struct sup_server *srv)
{
        _cleanup_closedir_ DIR *d = opendir(srv->runs_dir);
        if (!d)
                return;
        struct ended *runs = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                struct stat st;
                if (de->d_name[0] == '.' || de->d_type != DT_DIR ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                struct ended *nn = realloc(runs, (n + 1) * sizeof(*runs));
                if (!nn)
                        break;
                runs = nn;
                if (!(runs[n].name = strdup(de->d_name)))
                        break;
                runs[n++].t = st.st_mtim;
        }
        if (n)
                qsort(runs, n, sizeof(*runs), cmp_ended);
        size_t excess = n > srv->cfg.keep_runs ? n - srv->cfg.keep_runs : 0;
        for (size_t i = 0; i < n; i++) {
                if (i < excess && !sup_run_is_live(srv, runs[i].name)) {
                        struct anvil_err e = ANVIL_ERR_INIT;
                        if (fd_rm_tree_at(dirfd(d), runs[i].name, RM_MAX_DEPTH, &e) < 0)
                                log_warn("retention: %s, ignoring", e.msg);
                }
                free(runs[i].name);
        }
        free(runs);
}

/* ---- runs in flight ----
 * Each run is marked in flight by an empty file beside its directory, runs/.<run_id>.live,
 * made before the directory and removed once the run's result is out: whatever point a
 * supervisor is killed at (SIGKILL, a crash), a run it did not finish is marked, and the next
 * supervisor on the same state directory removes its directory at start-up. Only the
 * supervisor writes in runs/ (0711, its own); the names are checked all the same. */

static int live_mark(const struct sup_server *srv, const char *run_id, char *buf, size_t size, struct anvil_err *err)
{
        if (snprintf(buf, size, "%s/.%s.live", srv->runs_dir, run_id) >= (int)size)
                return anvil_err_set(err, ENAMETOOLONG, "Run directory path is too long");
        return 0;
}

/* runs/<run_id> removed by descriptor (lib/fd.c): the tree holds what jails' uids wrote (a
 * direct run's tmp/ and artifacts/ are theirs), and no name in it is resolved by path or
 * through a link. 0 once nothing is left there. */
static int remove_run_dir(const struct sup_server *srv, int runs_fd, const char *run_id, struct anvil_err *err)
{
        int r = fd_rm_tree_at(runs_fd, run_id, RM_MAX_DEPTH, err);
        return r < 0 ? anvil_err_prefix(err, "In %s", srv->runs_dir) : 0;
}

int sup_rundir_begin(struct sup_server *srv, const char *run_id, struct anvil_err *err)
{
        char mark[PATH_MAX];
        int r = live_mark(srv, run_id, mark, sizeof(mark), err);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return anvil_err_sys(err, errno, "Failed to create %s", mark);
        return 0;
}

int sup_rundir_end(struct sup_server *srv, const char *run_id, bool keep, struct anvil_err *err)
{
        char p[PATH_MAX];
        int r;
        /* Left marked if it cannot be removed: the next start-up's sweep tries again. */
        if (!keep) {
                _cleanup_close_ int runs_fd = open(srv->runs_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (runs_fd < 0)
                        return anvil_err_sys(err, errno, "Failed to open %s", srv->runs_dir);
                if ((r = remove_run_dir(srv, runs_fd, run_id, err)) < 0)
                        return r;
        }
        if ((r = live_mark(srv, run_id, p, sizeof(p), err)) < 0)
                return r;
        if (unlink(p) < 0 && errno != ENOENT)
                return anvil_err_sys(err, errno, "Failed to remove %s", p);
        return 0;
}

/* A run id as make_run_id (run.c) writes it: digits, 'T', '-' and hex digits. */
static bool run_id_ok(const char *s, size_t n)
{
        if (n == 0 || n >= 64 || s[0] < '0' || s[0] > '9')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || s[i] == 'T' || s[i] == '-'))
                        return false;
        return true;
}

int sup_rundir_sweep(struct sup_server *srv, unsigned *removed, struct anvil_err *err)
{
        *removed = 0;
        _cleanup_closedir_ DIR *d = opendir(srv->runs_dir);
        if (!d)
                return anvil_err_sys(err, errno, "Failed to read %s", srv->runs_dir);
        int first = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                const char *name = de->d_name;
                size_t n = strlen(name);
                if (n < 7 || name[0] != '.' || strcmp(name + n - 5, ".live") != 0 || !run_id_ok(name + 1, n - 6))
                        continue;
                char id[64];
                snprintf(id, sizeof(id), "%.*s", (int)(n - 6), name + 1);
                struct anvil_err e = ANVIL_ERR_INIT;
                int r = remove_run_dir(srv, dirfd(d), id, &e);
                if (r == 0 && unlinkat(dirfd(d), name, 0) < 0)
                        r = anvil_err_sys(&e, errno, "Failed to remove %s/%s", srv->runs_dir, name);
                if (r < 0 && first == 0) {
                        *err = e;
                        first = r;
                }
                if (r == 0)
                        (*removed)++;
        }
        return first;
}
