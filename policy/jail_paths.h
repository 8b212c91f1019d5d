/* The jail's paths: one table from which the mount namespace (jail/mountns.c), the Landlock
 * rules (jail/landlock.c), the audit hook's roots (the run spec's roots, supervisor/run.c; the
 * system root and the data-free devices, runner/) and the blast radius's path lines
 * (supervisor/result.c) are all generated, so that what is mounted, what the kernel lets be
 * read and what the Python layers let be read can never again disagree (tests/unit/
 * test_jail_paths.c checks the views against each other; tests/e2e/t_jail_paths.sh reads
 * every entry in a real jail under each layer).
 *
 * Here because every side needs it: root builds the mounts and the Landlock rules from it,
 * the runner (untrusted, in the jail) judges paths by its audit column, and the blast radius
 * shows its blast column. Every entry is global: the same for every run (DESIGN §4).
 *
 * Columns, per entry:
 *   path     as the tool sees it in the jail (after pivot_root)
 *   kind     FILE or TREE (a directory and everything below it)
 *   mount    how mountns.c makes it:
 *              DIR        a directory of the jail's own root (a tmpfs)
 *              RO_BIND    the host's path, bound read-only; _OPT: skipped if the host has none
 *              USR_LINK   the host's symlink into /usr (Debian 12 is /usr-merged), recreated
 *              SYNTH      a file of the jail's own, written by mountns.c (no host secrets)
 *              PROC       a fresh proc for the jail's own pid namespace
 *              DEV_TMPFS  /dev: a small tmpfs, read-only once its nodes are bound
 *              DEV        a host device node, bound
 *              TMPFS      the private /tmp (thrown away with the jail)
 *              RUNNER     anvil-py, the supervisor's copy, bound read-only
 *              INPUTS     the run's inputs, bound read-only after GO
 *              ARTIFACTS  the run's artifacts tmpfs, moved in after GO
 *   landlock what Landlock grants (jail/landlock.c turns each into rights):
 *              NONE       nothing (the path is there, none of the tool's business)
 *              LIST       list the directory itself
 *              READ       read files (on a TREE: those below it, through its links; no listing)
 *              READ_LIST  read files and list directories
 *              EXEC       read, list and execute
 *              DEV_R      read (and device ioctls); DEV_RW: read and write
 *              WRITE      read, write, create and remove files, directories and symlinks
 *   audit    what the audit hook's read roots make of it, for the tool's own code (a library
 *            reads whatever Landlock lets it):
 *              NONE       refused (a Landlock-readable path may still be: /etc/passwd is
 *                         libc's business, not the tool's)
 *              SYSTEM     read (pol_roots.system), never named in messages: Debian's /usr,
 *                         the interpreter, its libraries and the data they use (time zones
 *                         under /usr/share/zoneinfo, which the C zoneinfo module opens on the
 *                         tool's behalf from the tool's own frame); bound read-only and read by
 *                         the libraries freely already, refusing the tool a read of it would
 *                         refuse legitimate code and protect nothing
 *              DEVICE     read and written whatever the roots say (the data-free devices;
 *                         Landlock refuses the writes to zero and urandom on its own)
 *              WORKDIR    the directory itself may be listed ("./")
 *              READ_ROOT  a read root; WRITE_ROOT: a read and a write root
 *              SCRATCH    read and written (pol_roots.scratch), never named in messages
 *   blast    how the blast radius shows it (supervisor/result.c, pol_jail_blast_lines):
 *              NONE       not shown (a directory of the root, Anvil's own runner)
 *              LINE       a line of its own, with the entry's note
 *              HOST       a host file bound: a line each; direct, one line for them all
 *              SYNTH      one "/etc (synthetic: ...)" line for them all, saying which
 *                         Landlock does not let be read
 *              DEV        one line for the devices
 *              RUN        the run's own lines, with its figures (result.c)
 *   direct   where it is without namespaces (DESIGN §6's landlock+seccomp rung):
 *              NONE       nowhere (no mount namespace: no synthetic /etc, no /proc of its own)
 *              HOST       the same path on the host
 *              RUNNER     the supervisor's copy of anvil-py, where it is
 *              RUN        the run's directory on the host, with sub appended
 *   sub      for direct RUN: the part below the run's directory ("" for the directory)
 *   note     for blast LINE: what follows the path, or "" */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define POL_JAIL_PATHS(X)                                                                                    \
        /* path                kind  mount      landlock   audit       blast  direct  sub        note */   \
        X("/usr",              TREE, RO_BIND,   EXEC,      SYSTEM,     LINE,  HOST,   "",        "")        \
        X("/bin",              FILE, USR_LINK,  NONE,      NONE,       NONE,  NONE,   "",        "")        \
        X("/lib",              FILE, USR_LINK,  NONE,      NONE,       NONE,  NONE,   "",        "")        \
        X("/lib64",            FILE, USR_LINK,  NONE,      NONE,       NONE,  NONE,   "",        "")        \
        X("/sbin",             FILE, USR_LINK,  NONE,      NONE,       NONE,  NONE,   "",        "")        \
        X("/lib32",            FILE, USR_LINK,  NONE,      NONE,       NONE,  NONE,   "",        "")        \
        X("/libx32",           FILE, USR_LINK,  NONE,      NONE,       NONE,  NONE,   "",        "")        \
        X("/etc",              TREE, DIR,       NONE,      NONE,       NONE,  NONE,   "",        "")        \
        /* numpy's BLAS is found through these symlinks */                                                \
        X("/etc/alternatives", TREE, RO_BIND_OPT, READ,    NONE,       HOST,  HOST,   "",        "")        \
        X("/etc/ld.so.cache",  FILE, RO_BIND_OPT, READ,    NONE,       HOST,  HOST,   "",        "")        \
        /* Debian's matplotlib refuses to start without it */                                             \
        X("/etc/matplotlibrc", FILE, RO_BIND_OPT, READ,    NONE,       HOST,  HOST,   "",        "")        \
        X("/etc/passwd",       FILE, SYNTH,     READ,      NONE,       SYNTH, NONE,   "",        "")        \
        X("/etc/group",        FILE, SYNTH,     READ,      NONE,       SYNTH, NONE,   "",        "")        \
        X("/etc/hosts",        FILE, SYNTH,     READ,      NONE,       SYNTH, NONE,   "",        "")        \
        /* nothing of the data stack reads it: gethostname() is uname(2) */                               \
        X("/etc/hostname",     FILE, SYNTH,     NONE,      NONE,       SYNTH, NONE,   "",        "")        \
        X("/etc/nsswitch.conf", FILE, SYNTH,    READ,      NONE,       SYNTH, NONE,   "",        "")        \
        X("/proc",             TREE, PROC,      READ_LIST, NONE,       LINE,  NONE,   "",        " (the jail's own processes)") \
        X("/dev",              TREE, DEV_TMPFS, NONE,      NONE,       NONE,  NONE,   "",        "")        \
        X("/dev/null",         FILE, DEV,       DEV_RW,    DEVICE,     DEV,   HOST,   "",        "")        \
        X("/dev/zero",         FILE, DEV,       DEV_R,     DEVICE,     DEV,   HOST,   "",        "")        \
        X("/dev/urandom",      FILE, DEV,       DEV_R,     DEVICE,     DEV,   HOST,   "",        "")        \
        X("/tmp",              TREE, TMPFS,     WRITE,     SCRATCH,    RUN,   RUN,    "/tmp",    "")        \
        X("/work",             TREE, DIR,       LIST,      WORKDIR,    NONE,  RUN,    "",        "")        \
        X("/work/inputs",      TREE, INPUTS,    READ_LIST, READ_ROOT,  RUN,   RUN,    "/inputs", "")        \
        X("/work/artifacts",   TREE, ARTIFACTS, WRITE,     WRITE_ROOT, RUN,   RUN,    "/artifacts", "")     \
        X("/anvil",            TREE, DIR,       NONE,      NONE,       NONE,  NONE,   "",        "")        \
        X("/anvil/anvil-py",   FILE, RUNNER,    EXEC,      NONE,       NONE,  RUNNER, "",        "")

enum pol_jp_kind { POL_JP_FILE, POL_JP_TREE };
enum pol_jp_mount {
        POL_JP_MOUNT_DIR,
        POL_JP_MOUNT_RO_BIND,
        POL_JP_MOUNT_RO_BIND_OPT,
        POL_JP_MOUNT_USR_LINK,
        POL_JP_MOUNT_SYNTH,
        POL_JP_MOUNT_PROC,
        POL_JP_MOUNT_DEV_TMPFS,
        POL_JP_MOUNT_DEV,
        POL_JP_MOUNT_TMPFS,
        POL_JP_MOUNT_RUNNER,
        POL_JP_MOUNT_INPUTS,
        POL_JP_MOUNT_ARTIFACTS,
};
enum pol_jp_landlock {
        POL_JP_LL_NONE,
        POL_JP_LL_LIST,
        POL_JP_LL_READ,
        POL_JP_LL_READ_LIST,
        POL_JP_LL_EXEC,
        POL_JP_LL_DEV_R,
        POL_JP_LL_DEV_RW,
        POL_JP_LL_WRITE,
};
enum pol_jp_audit {
        POL_JP_AUDIT_NONE,
        POL_JP_AUDIT_SYSTEM,
        POL_JP_AUDIT_DEVICE,
        POL_JP_AUDIT_WORKDIR,
        POL_JP_AUDIT_READ_ROOT,
        POL_JP_AUDIT_WRITE_ROOT,
        POL_JP_AUDIT_SCRATCH,
};
enum pol_jp_blast {
        POL_JP_BLAST_NONE,
        POL_JP_BLAST_LINE,
        POL_JP_BLAST_HOST,
        POL_JP_BLAST_SYNTH,
        POL_JP_BLAST_DEV,
        POL_JP_BLAST_RUN,
};
enum pol_jp_direct { POL_JP_DIRECT_NONE, POL_JP_DIRECT_HOST, POL_JP_DIRECT_RUNNER, POL_JP_DIRECT_RUN };

struct pol_jail_path {
        const char *path;
        enum pol_jp_kind kind;
        enum pol_jp_mount mount;
        enum pol_jp_landlock landlock;
        enum pol_jp_audit audit;
        enum pol_jp_blast blast;
        enum pol_jp_direct direct;
        const char *sub;
        const char *note;
};

extern const struct pol_jail_path pol_jail_paths[];
extern const size_t pol_jail_n_paths;

/* The entry for a path as the jail sees it, or NULL. */
const struct pol_jail_path *pol_jail_path_find(const char *path);

/* Where an entry is for this run: its jail path, or, direct (run_dir not NULL), its place on
 * the host (runner: the supervisor's copy of anvil-py). -ENOENT if it has none there,
 * -ENAMETOOLONG if it does not fit. */
int pol_jail_path_where(const struct pol_jail_path *e, const char *run_dir, const char *runner, char *buf,
                        size_t size);

/* Landlock lets it be read (files, or a listing), written. */
bool pol_jail_ll_reads(enum pol_jp_landlock l);
bool pol_jail_ll_writes(enum pol_jp_landlock l);

/* The audit hook's data-free devices: a path (as given, unresolved) it lets be read and written. */
bool pol_jail_device(const char *path);
/* The audit hook's system read root (pol_roots.system): the one SYSTEM entry. */
const char *pol_jail_system_root(void);

/* The blast radius's lines for the jail's fixed paths (the run's own, RUN, are result.c's,
 * with its figures), in table order: each line given to push. ll: Landlock applied and seen
 * enforced; exists: whether a host path is there (for the optional binds; NULL: all are). */
void pol_jail_blast_lines(bool direct, bool ll, bool (*exists)(const char *path),
                          void (*push)(void *ctx, const char *line), void *ctx);

/* The audit hook's roots for a run, as the supervisor sends them in the run spec: the WORKDIR
 * entry, the READ_ROOT and WRITE_ROOT entries in table order (a write root is a read root
 * too), the SCRATCH entry; each where it is for this run (pol_jail_path_where; run_dir NULL:
 * in the jail). -ENAMETOOLONG if one does not fit. */
#define POL_JAIL_ROOTS_MAX 4
#define POL_JAIL_ROOT_SIZE 4112 /* PATH_MAX and the longest sub */
struct pol_jail_roots {
        char buf[POL_JAIL_ROOTS_MAX + 2][POL_JAIL_ROOT_SIZE];
        const char *workdir;
        const char *read[POL_JAIL_ROOTS_MAX];
        size_t n_read;
        const char *write[POL_JAIL_ROOTS_MAX];
        size_t n_write;
        const char *scratch;
};
int pol_jail_roots(const char *run_dir, struct pol_jail_roots *out);
