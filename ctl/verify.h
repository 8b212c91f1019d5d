/* anvilctl verify (docs/verify.md): the real pipeline, through the running service, checked.
 * main.c knows only ctl_verify; the rest is shared by ctl/verify*.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/names.h"
#include "proto/proto.h"

/* argv[0] is "verify". Exit status: 0 when every check passed, 1 when one failed,
 * EXIT_USAGE (125) for a usage error, EXIT_CONNECT (126) when the broker cannot be reached. */
int ctl_verify(int argc, char **argv);

/* ---- inside verify ---- */

struct vfy {
        bool root;           /* euid 0: the daemons' environment and the artifacts can be read */
        bool scripted_model; /* --scripted-model: never the broker's own model */
        unsigned seq;        /* request ids */
        char failed[512];    /* why the running check failed (its first reason) */
        char skipped[512];   /* or why it could not be checked at all (neither passed nor failed) */
        /* The run of check 2b (the escapes past the Python layers), kept for 7 and 8. */
        bool have_kernel_run;
        struct proto_run_result kernel_run;
        struct proto_probe_result probe; /* check 6's, kept for 8 */
        bool have_probe;
        /* Every time limit of verify's runs is multiplied by it (vfy_run): 1, or more on a
         * machine where a run that imports numpy takes over 0.5 s of CPU (calibrate()). */
        unsigned slow;
};

/* A check's time limit of n seconds, as verify's runs ask for it here. */
#define VFY_S(v, n) ((uint64_t)(n) * (v)->slow)

/* What one run asks for. Zero limits are the server's defaults. */
struct vfy_run {
        const char *source;
        uint64_t wall_s, cpu_s, memory_mb, output_bytes;
        const char *const *caps_requested, *const *caps_approved; /* NULL-terminated, or NULL */
        const char *input_name, *input_data;                       /* one input file, or NULL */
        unsigned wait_s; /* how long to wait for the result beyond the wall clock */
        bool python_layers_off; /* run_request.python_layers_off: the kernel layers alone */
};

/* Sends m (freed) and reads until its frame of type want, moved into out (size bytes): 0, or
 * -1 with why in v->failed (no reply within wait_s seconds included). */
int vfy_request(struct vfy *v, struct proto_msg *m, const char *what, enum proto_type want, void *out, size_t size,
                unsigned wait_s);

/* Runs one tool through the broker: 0 and *out (the caller frees it with vfy_run_free), or
 * -1 with the reason in v->failed ("the run was refused: sandbox_failed: ..."). */
int vfy_run(struct vfy *v, const struct vfy_run *rq, struct proto_run_result *out);
void vfy_run_free(struct proto_run_result *r);

/* A check's lines: detail ("    ..."), and its failure (kept in v->failed, first one wins;
 * always returns false, so that a check can `return vfy_fail(...)`). */
void vfy_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool vfy_fail(struct vfy *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The result's events, as the checks look for them: the first of layer (NULL: any) and kind
 * (NULL: any), after index from (0 for all); NULL if none. */
const struct proto_event *vfy_event(const struct proto_run_result *r, enum proto_layer layer, enum proto_event_kind kind);
bool vfy_has_line(const char *text, const char *line);       /* text has this line, whole */
const char *vfy_mechanism(const struct proto_run_result *r, const char *prefix); /* isolation.mechanisms */
/* each of layer (PROTO_LAYER_UNKNOWN: each refusal) */
void vfy_say_events(const struct proto_run_result *r, enum proto_layer layer);

/* The checks (ctl/verify.c, ctl/verify_checks.c, ctl/verify_secrets.c). */
bool vfy_check_tasks(struct vfy *v);
bool vfy_check_python_escapes(struct vfy *v);
bool vfy_check_kernel_escapes(struct vfy *v);
bool vfy_check_wall(struct vfy *v);
bool vfy_check_cpu(struct vfy *v);
bool vfy_check_memory(struct vfy *v);
bool vfy_check_caps(struct vfy *v);
bool vfy_check_isolation(struct vfy *v);
bool vfy_check_blast(struct vfy *v);
bool vfy_check_explained(struct vfy *v);
bool vfy_check_secrets(struct vfy *v);

/* The bundled scripted model (ctl/verify_model.c): an OpenAI chat-completions endpoint on
 * 127.0.0.1, on a thread of its own, that answers each of verify's two tasks with its tool. */
struct vfy_model;
int vfy_model_start(struct vfy_model **out, char *url, size_t url_size, char *why, size_t why_size);
unsigned vfy_model_requests(struct vfy_model *m);
void vfy_model_stop(struct vfy_model *m);
/* The tasks' texts, each with the marker the scripted model answers (and a real model reads
 * as part of the sentence). */
extern const char *const vfy_task_text[2];
extern const char vfy_py_prelude[];
