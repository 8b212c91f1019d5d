/* The prose of a result, written from the supervisor's facts (policy/reasons.h, POL_PROSE):
 * run by the broker on every frame from the supervisor, and by anvilctl on every frame it
 * reads (a supervisor it talks to directly sends facts; a broker has already rendered them). */
#pragma once

#include "policy/prose.h"
#include "proto/proto.h"

const char *bro_prose_format(enum pol_prose t);

/* A run_result's blast radius and a probe_result's evidence from their facts, which are then
 * dropped; any other message, or one without facts, is left as it is. 0, or -ENOMEM. */
int bro_render(struct proto_msg *m);

/* Each artifact of a run_result that has no sha256 yet gets one: the supervisor copies the
 * artifacts out (root, fd-relative) and leaves the hashing here, unprivileged. The copies are
 * root's, 0644 in directories of 0755 below the run's 0711 directory, so any user who knows
 * the run id reads them; none is a link (the copy makes only files and directories), and
 * none is followed (RESOLVE_NO_SYMLINKS). One that cannot be read keeps an empty sha256 (no
 * claim) and is said in *failed (the first). 0, or -ENOMEM. Blocking: the broker calls it on
 * its thread pool (store.c), anvilctl inline. */
int bro_hash_artifacts(struct proto_run_result *res, char *failed, size_t size);

/* path (relative, as a result lists it) opened read-only below dfd, no symlink followed on the
 * way or at its end, never above dfd ("..", "/"): the fd, or -1 with errno set. Also what the
 * broker's store copies and serves artifacts by (store.c, serve.c). */
int bro_open_beneath(int dfd, const char *path);
