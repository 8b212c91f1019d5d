/* The prose of a result, written from the supervisor's facts (policy/reasons.h, POL_PROSE):
 * run by the broker on every frame from the supervisor, and by anvilctl on every frame it
 * reads (a supervisor it talks to directly sends facts; a broker has already rendered them). */
#pragma once

#include "policy/prose.h"
#include "proto/proto.h"

const char *bro_prose_format(enum pol_prose t);
char *bro_prose(char *buf, size_t size, enum pol_prose t, ...);

/* A run_result's blast radius and a probe_result's evidence from their facts, which are then
 * dropped; any other message, or one without facts, is left as it is. 0, or -ENOMEM. */
int bro_render(struct proto_msg *m);
