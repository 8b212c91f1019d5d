/* ctl/: anvilctl, run by any user with no privilege: it talks to the broker's socket (or to
 * a supervisor's, as root, in the tests), prints what comes back, and runs `anvilctl verify`
 * with its own scripted model. It trusts nothing it reads: frames are decoded strictly. */
/* anvilctl's connection to the broker, shared by its commands (ctl/main.c, ctl/verify.c):
 * where the broker is, one request sent, its frames read until the request ends. */
#pragma once

#include <sha2.h>

#include "proto/proto.h"

/* anvilctl's exit status (docs/cli.md, "Exit status"; the table atop ctl/main.c): 0 and the
 * tool's own code for what the tool did, 128+N for a signal it died of; 120..127 are Anvil's
 * own outcomes alone (a tool's exit code in that range is reported as 1). */
#define EXIT_BLOCKED 120 /* a layer refused an operation and the tool ended: status blocked */
#define EXIT_KILLED 121  /* killed by Anvil, but not for time: memory, cpu, cancelled, stopping */
#define EXIT_SANDBOX 122 /* the sandbox failed: an error frame "sandbox_failed" */
#define EXIT_REFUSED 123 /* any other error frame: bad request, busy, unavailable ... */
#define EXIT_TIMEOUT 124 /* killed: timeout (as timeout(1)) */
#define EXIT_USAGE 125   /* the command line, or a request that cannot be made */
#define EXIT_CONNECT 126 /* the broker cannot be reached, or the connection broke */
#define EXIT_ANVIL_MIN 120
#define EXIT_ANVIL_MAX 127

/* The program's name atop what it says on stderr: "anvilctl" (anvil-mcp sets its own). */
extern const char *ctl_prog;

/* $ANVIL_SOCKET, or /run/anvil.sock. */
const char *ctl_socket_path(void);

/* Connects to the broker and sends m (what names it in the error: "the run"): the connected
 * fd, or minus the exit status once it has said why on stderr. */
int ctl_send_request(const struct proto_msg *m, const char *what);
/* The same with n open fds attached to the frame's first bytes (a run_request's inputs). */
int ctl_send_request_fds(const struct proto_msg *m, const char *what, const int *fds, size_t n);
/* The same, with what went wrong kept in *failed (malloc'd, one line, as ctl_follow keeps it)
 * instead of said on stderr, when failed is not NULL. */
int ctl_send_request_why(const struct proto_msg *m, const char *what, const int *fds, size_t n, char **failed);

/* --input [NAME=]PATH (ctl/input.c; what: "--input", the start of why): PATH opened as the calling user, read-only, and its fd
 * put in fds[*n_fds] (then counted), in->name the NAME given or PATH's last component, in->fd
 * its index. A regular file or a directory, nothing else. 0, or -1 with why said in why. */
int ctl_open_input(const char *what, const char *arg, struct proto_input *in, int *fds, size_t *n_fds, char *why,
                   size_t why_size);

/* What a request's reader does with one frame (not an error frame): 1 to read on, 0 when the
 * request has ended (its exit status in *rc), -1 for a frame it does not expect. The frame
 * stays the caller's; on_frame may take what it holds (then it zeroes in->u). */
typedef int (*ctl_frame_fn)(int fd, struct proto_msg *in, void *ctx, int *rc);

/* Reads the broker's frames for one request until on_frame ends it: the connection closing
 * first (what: "the run" ended), an error frame (EXIT_SANDBOX or EXIT_REFUSED), a frame on_frame does not expect.
 * Each is said on stderr, or, with failed non-NULL, kept there as one line (malloc'd: an
 * error frame as "code: message") for the caller to show. Returns the exit status. */
int ctl_follow(int fd, const char *what, ctl_frame_fn on_frame, void *ctx, char **failed);

/* An artifact's copy as it comes (artifact_data frames, then artifact_end), for ctl_follow:
 * every piece counted and hashed, the end taken. What is done with each piece is the
 * caller's: piece returns 1 to go on, or 0 to end the request there (its exit status in
 * *rc), before the piece is counted. Embed it first in the caller's own context. */
struct ctl_artifact_rx {
        int (*piece)(struct ctl_artifact_rx *rx, const struct proto_bytes *d, int *rc);
        uint64_t got; /* all that came */
        SHA2_CTX h;   /* SHA256Init'd by the caller */
        struct proto_artifact_end end;
        bool ended;
};
int ctl_artifact_frame(int fd, struct proto_msg *in, void *ctx, int *rc);

/* The exit status for an error frame's code: EXIT_SANDBOX for "sandbox_failed", else
 * EXIT_REFUSED. */
int ctl_error_exit(const char *code);
