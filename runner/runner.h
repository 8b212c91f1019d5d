/* runner/: anvil-py, the untrusted side. It runs inside the jail as its uid with no
 * capability, under Landlock, seccomp, rlimits and the cgroup, and embeds Debian's libpython3:
 * everything here may be subverted by the tool it runs, so nothing here is trusted by the
 * supervisor beyond what it checks from outside (its events are decoded as strictly as a
 * client's frame). Only this folder is compiled with Python's headers. */
/* anvil-py's parts: main.c runs the steps; exit.c is the fast end (R10); events.c writes
 * events on fd 3; precheck.c is the pre-check (an AST walk in C); audit.c is the audit hook.
 * The rules are policy/'s. */
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy/jail_paths.h"
#include "policy/rules.h"
#include "proto/proto.h"

#define TOOL_NAME "<tool>"
#define RUNTIME_EVENTS_MAX 200 /* refusals recorded at runtime; then one summary */

struct runner {
        uint64_t t0;
        /* what the run may touch, resolved */
        char workdir[PATH_MAX];
        char read[POL_ROOTS_MAX][PATH_MAX];
        char write[POL_ROOTS_MAX][PATH_MAX];
        char scratch[PATH_MAX];
        struct pol_roots roots;
        struct pol_caps caps;
        char stdlib[PATH_MAX]; /* the stdlib directory, for the pass-through modules */
        /* the audit hook */
        bool armed;
        bool in_hook;
        unsigned long tool_thread; /* the thread that armed the hook and runs the tool's code */
        bool tool_returned;        /* the tool's code has returned: what runs now, it registered */
        bool displaying;           /* the interpreter reports an unraisable exception */
        /* While os.open(path, flags, dir_fd=fd) runs: the directory fd names, which its
         * "open" event (that carries no dir_fd) is relative to; NULL otherwise. */
        const char *open_base;
        /* Set by open(..., opener=f) until its first "open" event: that event names what the
         * opener is handed, not what is opened; the opener's own os.open is judged. */
        bool skip_opener_event;
        unsigned refusals_recorded;
        unsigned long long refusals_dropped;
        PyObject *sandbox_blocked; /* anvil.SandboxBlocked, a PermissionError */
        bool stopped_by_refusal;   /* the tool ended on a SandboxBlocked it did not catch */
};

/* events.c */
void runner_event(struct runner *r, const char *layer, const char *kind, const char *op, const char *reason,
                  const char *message, long line, long col, const char *traceback);
/* An event with a payload (vars.c): m is filled by the caller, but for the event's time. */
void runner_send(struct runner *r, struct proto_msg *m);

/* Sets up roots and capabilities from the spec (paths resolved with realpath). */
int runner_policy_init(struct runner *r, const struct proto_run_spec *spec);
int runner_realpath(const char *path, char *out, size_t size, void *ctx);
/* Whether the spec grants network (the supervisor grants it only with an egress socket). */
bool runner_network_granted(const struct proto_run_spec *spec);

/* precheck.c (R6b, under every layer of R6): the number of findings (each already sent as an
 * event), or -1 if the pre-check itself could not run (an error on stderr). A source that
 * does not parse has no findings: compiling it then raises the SyntaxError the tool should
 * see. */
int precheck_run(struct runner *r, const char *source);

/* inforce.c (R6): installs seccomp, has the supervisor confirm it, and checks the jail's
 * promises; 0 with what was seen in force in `seen` (a list for the event "in_force"), or -1
 * with the layer and the evidence if one is not in force. */
int inforce_kernel_layers(const struct proto_run_spec *spec, char *seen, size_t seen_size, char *layer,
                          size_t layer_size, char *evidence, size_t size);

/* vars.c (DESIGN §8). vars_init (R5): final_answer made a builtin, what the encoder needs taken
 * (nothing of the request's): 0, or -1 if the runner itself failed (on stderr). vars_bind
 * (R6a, under every layer of R6): the spec's variables, if any, decoded and bound as globals
 * of __main__: 0; -1 with the refusal in msg (the request's fault); -2 if the runner itself
 * failed (on stderr). vars_collect (R9a): the variables the tool left, sent as one event
 * "variables". */
int vars_init(struct runner *r);
int vars_bind(struct runner *r, const char *variables, char *msg, size_t size);
void vars_collect(struct runner *r);

/* exit.c (R10): exit_warm_prepare (R6w, after the imports): the data stack's objects frozen
 * out of the end's scan. exit_fast: the tool's threads joined, its atexit handlers run, its
 * files flushed and closed, C stdio flushed (skip: test builds' control, none of it); the exit
 * code (120 if flushing stdout failed). The caller then sends its events and _exit()s. */
void exit_warm_prepare(void);
int exit_watch_freeze(void); /* R5: the tool's gc.freeze watched; 0, or -1 (on stderr) */
int exit_fast(int rc, bool skip);

/* audit.c */
int audit_install(struct runner *r);  /* before Py_InitializeFromConfig */
int audit_arm(struct runner *r);      /* R6c: after the pre-check, before the tool's first line */
void audit_tool_returned(struct runner *r); /* R9: the tool's code has returned (see tool_asks) */
/* Around a call of the runner's own that runs no code of the tool's and has no frame (exit.c's
 * gc.get_objects and gc.get_referents): its audit events are the runtime's, not the tool's. */
void audit_runtime(bool on);
void audit_finish(struct runner *r);        /* the summary of refusals not recorded */
