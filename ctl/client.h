/* ctl/: anvilctl, run by any user with no privilege: it talks to the broker's socket (or to
 * a supervisor's, as root, in the tests), prints what comes back, and runs `anvilctl verify`
 * with its own scripted model. It trusts nothing it reads: frames are decoded strictly. */
/* anvilctl's connection to the broker, shared by its commands (ctl/main.c, ctl/verify.c):
 * where the broker is, one request sent, its frames read until the request ends. */
#pragma once

#include "proto/proto.h"

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define EXIT_CONNECT 3

/* $ANVIL_SOCKET, or /run/anvil.sock. */
const char *ctl_socket_path(void);

/* Connects to the broker and sends m (what names it in the error: "the run"): the connected
 * fd, or minus the exit status once it has said why on stderr. */
int ctl_send_request(const struct proto_msg *m, const char *what);
/* The same with n open fds attached to the frame's first bytes (a run_request's inputs). */
int ctl_send_request_fds(const struct proto_msg *m, const char *what, const int *fds, size_t n);

/* What a request's reader does with one frame (not an error frame): 1 to read on, 0 when the
 * request has ended (its exit status in *rc), -1 for a frame it does not expect. The frame
 * stays the caller's; on_frame may take what it holds (then it zeroes in->u). */
typedef int (*ctl_frame_fn)(int fd, struct proto_msg *in, void *ctx, int *rc);

/* Reads the broker's frames for one request until on_frame ends it: the connection closing
 * first (what: "the run" ended), an error frame (exit 1), a frame on_frame does not expect.
 * Each is said on stderr, or, with failed non-NULL, kept there as one line (malloc'd: an
 * error frame as "code: message") for the caller to show. Returns the exit status. */
int ctl_follow(int fd, const char *what, ctl_frame_fn on_frame, void *ctx, char **failed);
