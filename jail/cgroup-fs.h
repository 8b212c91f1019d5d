/* Helpers shared by jail/cgroup.c and jail/cgroup-setup.c, and nothing else. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "jail/cgroup.h"

/* 0 or -errno. */
int jail_cg_write(const char *dir, const char *file, const char *text);
int jail_cg_read(const char *dir, const char *file, char *buf, size_t size);
/* rmdir, retried (bounded, about a second) while the kernel still holds the cgroup. */
int jail_cg_rmdir(const char *dir);
/* SIGKILL to every process in the cgroup; how many were signalled (v2 with cgroup.kill: 0). */
int jail_cg_kill_members(const char *dir, bool v2);
/* Writes a CPU quota into cg's cpu directory (cpu.max, or cpu.cfs_period_us and _quota_us). */
int jail_cg_set_cpu(const struct jail_cgroup *cg, uint64_t quota_us, uint64_t period_us, struct anvil_err *err);
