/* The table of the jail's paths (policy/jail_paths.h), for t_jail_paths.sh: one line per entry,
 *   PATH KIND DIRECT SUB READ LIST AUDIT
 * KIND file or tree; DIRECT none, host, runner or run (SUB: below the run's directory, "-" for
 * none); READ and LIST 1 if Landlock lets its files be read and it be listed; AUDIT 1 if the
 * audit hook lets the tool's own code read it (the directory itself, for the workdir). The
 * /usr-merged links are left out: Landlock and the audit hook judge where they lead. */
#include <stdio.h>

#include "jail/compat.h"
#include "jail/jail.h"
#include "policy/jail_paths.h"

int main(void)
{
        static const char *const direct[] = { "none", "host", "runner", "run" };
        for (size_t i = 0; i < pol_jail_n_paths; i++) {
                const struct pol_jail_path *e = &pol_jail_paths[i];
                if (e->mount == POL_JP_MOUNT_USR_LINK)
                        continue;
                uint64_t ll = jail_landlock_rights(e->landlock);
                enum pol_jp_audit a = e->audit;
                bool audit = a == POL_JP_AUDIT_SYSTEM || a == POL_JP_AUDIT_DEVICE || a == POL_JP_AUDIT_WORKDIR ||
                             a == POL_JP_AUDIT_READ_ROOT || a == POL_JP_AUDIT_WRITE_ROOT || a == POL_JP_AUDIT_SCRATCH;
                printf("%s %s %s %s %d %d %d\n", e->path, e->kind == POL_JP_TREE ? "tree" : "file", direct[e->direct],
                       e->sub[0] ? e->sub : "-", (ll & LANDLOCK_ACCESS_FS_READ_FILE) != 0,
                       (ll & LANDLOCK_ACCESS_FS_READ_DIR) != 0, audit);
        }
        return 0;
}
