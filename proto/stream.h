/* A framed msgpack connection on the libuv loop, shared by both daemons. It reads frames,
 * decodes them strictly and hands whole messages to its owner. A malformed frame or message
 * gets an `error` frame naming the field and the connection is closed after it is written;
 * the loop, and every other connection, goes on.
 *
 * A daemon's client connections are bounded here, the same way in both daemons
 * (proto_stream_bound): a connection idle with nothing in flight, a frame begun and not
 * completed, an error frame left unread, each within its time; and, over all the connections
 * of one uid together (struct proto_quota, kept by the daemon), the bytes of unfinished frames
 * and the bytes written and not read. Each bound met is an error frame that names it (the
 * catalog's CONN_*, FRAME_TIMEOUT, PARTIAL_UID_CAP, UNREAD_UID_CAP), then a close. */
#pragma once

#include <stdbool.h>
#include <uv.h>

#include "proto/proto.h"

struct proto_stream;
struct ucred; /* <sys/socket.h> with _GNU_SOURCE */

/* The callee owns *m (proto_msg_free). */
typedef void (*proto_stream_msg_cb)(struct proto_stream *s, struct proto_msg *m);
/* Called once, from the libuv close callback: the owner may free the stream's memory. */
typedef void (*proto_stream_close_cb)(struct proto_stream *s);
/* A malformed frame or message (or a frame cut by the end of the stream) arrived; reading
 * has stopped. Without this callback the stream answers with an error frame and closes,
 * which is right for a server; a client of a server sets it, decides, and closes. */
typedef void (*proto_stream_bad_cb)(struct proto_stream *s, const char *code, const char *message);

/* The bounds a daemon puts on each of its clients' connections, the same in both daemons
 * (each sets them from its own flags, named in the error frames). A timeout of 0 is off. */
struct proto_bounds {
        const char *daemon; /* "broker", "supervisor" */
        unsigned idle_s;    /* --idle-timeout: nothing in flight and no frame either way */
        unsigned frame_s;   /* --frame-timeout: a frame begun and not completed; also how long an
                               error frame that closes the connection may wait to be read */
};

/* What all the connections of one uid hold together: the owner keeps one per uid and points
 * each of that uid's streams at it (proto_stream_bound); each stream adds its share and takes
 * it back when it closes, before its close callback. */
struct proto_quota {
        unsigned uid;
        size_t partial, partial_max; /* bytes of frames begun and not completed, in the readers */
        size_t unread, unread_max;   /* bytes written to the peers and not yet taken by them */
};

/* One uid's entry in a daemon's list of the uids it has connections from: its quota, and how
 * many of its connections are admitted (the per-uid connection cap). Shared by both daemons'
 * servers (broker/clients.c, supervisor/server.c). */
struct proto_user {
        struct proto_quota quota;
        unsigned n_conns; /* admitted */
        unsigned n_refs;  /* connections pointing here, refused ones too */
        struct proto_user *next, **pprev;
};

/* The entry of uid in *list, made (with these byte bounds) if it has none; NULL if out of
 * memory. Each caller holds a reference until its connection is gone (proto_user_put). */
struct proto_user *proto_user_get(struct proto_user **list, uid_t uid, size_t partial_max, size_t unread_max);
/* Drops a reference: the last one frees the entry (every stream has taken its bytes back). */
void proto_user_put(struct proto_user *u);
/* Admits s, a connection of u's, under the per-uid cap and the daemon's cap on all of them
 * (*n_admitted): true, both counted; false, s is sent the busy error that names the cap it
 * met (POL_CONN_UID_CAP, POL_CONN_CAP) and closed. daemon: "broker" or "supervisor". */
bool proto_user_admit(struct proto_stream *s, struct proto_user *u, unsigned *n_admitted, unsigned max_per_uid,
                      unsigned max, const char *daemon);

/* Whether the owner has a request of this connection in flight (it is then not idle). */
typedef bool (*proto_stream_busy_cb)(struct proto_stream *s);

struct proto_stream {
        uv_pipe_t pipe;
        uv_timer_t timer; /* the bounds' deadlines; closed with the pipe */
        struct proto_reader reader;
        proto_stream_msg_cb on_msg;
        proto_stream_close_cb on_close;
        proto_stream_bad_cb on_bad; /* optional */
        void (*on_drain)(struct proto_stream *s); /* optional: a write has completed (the broker's
                                                      artifact copies send their next chunk) */
        void *data;
        size_t max_queue; /* without a quota: a peer that lets more than this pile up unread is dropped */
        bool closing;
        bool paused; /* no further messages are delivered */
        bool write_failed; /* the peer is gone for writing; what it sent before is still read */
        bool lingering; /* an error frame is queued and the connection closes once it is written */
        unsigned open_handles; /* of pipe and timer, until both close callbacks have run */
        /* proto_stream_bound: NULL for a daemon's own outgoing connections */
        const struct proto_bounds *bounds;
        struct proto_quota *quota;
        proto_stream_busy_cb busy;
        size_t charged_partial, charged_unread; /* this stream's share of *quota */
        uint64_t active_ms;   /* the last frame read or written (loop time) */
        uint64_t frame_t0_ms; /* when the unfinished frame began; 0: none */
        uint64_t linger_t0_ms;
        char name[48]; /* for logs: "client uid 1000" */
        /* File descriptors (proto_stream_init_fds): those that came with the first bytes of
         * the frame that begins at byte fds_at of the stream, held until that frame is
         * delivered; rx_total and rx_next count the bytes read and where the next frame to be
         * delivered begins. */
        bool accept_fds;
        int fds[PROTO_INPUTS_MAX];
        size_t n_fds;
        uint64_t fds_at, rx_total, rx_next;
        bool fds_for_msg; /* fds[] belong to the message being delivered now */
};

int proto_stream_init(uv_loop_t *loop, struct proto_stream *s, proto_stream_msg_cb on_msg,
                      proto_stream_close_cb on_close, void *data);
/* The same, for a server's connection that may receive file descriptors (SCM_RIGHTS): those
 * that arrive with a read belong to the last frame that begins in that read (a sender sends
 * them with a frame's first bytes, proto_stream_send_fds); fds that come where no frame
 * begins, or more than PROTO_INPUTS_MAX, are a bad_frame. Only a run_request may carry fds:
 * another message with fds is not delivered. The owner takes a run_request's fds with
 * proto_stream_take_fds during its on_msg; fds with another message, or left untaken, make the
 * stream answer bad_request (POL_INPUT_FD_UNEXPECTED) and close. Without this, fds sent are dropped by the
 * kernel (a plain read takes no control data). */
int proto_stream_init_fds(uv_loop_t *loop, struct proto_stream *s, proto_stream_msg_cb on_msg,
                          proto_stream_close_cb on_close, void *data);
/* During on_msg: the fds that came with this message, moved into fds (at most max; the rest
 * stay, and are refused); their number. */
size_t proto_stream_take_fds(struct proto_stream *s, int *fds, size_t max);
/* Queues m with n fds attached to its first bytes (sent at once with sendmsg, the rest queued):
 * only on a stream with nothing queued (else -EBUSY), so that no other bytes come first. The
 * caller keeps its fds (the kernel passes copies). <0 closes the stream, as proto_stream_send. */
int proto_stream_send_fds(struct proto_stream *s, const struct proto_msg *m, const int *fds, size_t n);

/* Adopts a connected fd (e.g. from a blocking connect()). */
int proto_stream_open(struct proto_stream *s, int fd, struct anvil_err *err);
int proto_stream_start(struct proto_stream *s);
/* A client's connection to a daemon: the bounds and the quota of its uid apply (both must
 * outlive the stream); busy (optional) says whether a request of it is in flight. Before
 * proto_stream_start. */
void proto_stream_bound(struct proto_stream *s, const struct proto_bounds *b, struct proto_quota *q,
                        proto_stream_busy_cb busy);
/* Queues m. Returns <0 (and closes the stream) if it cannot be encoded or sent. */
int proto_stream_send(struct proto_stream *s, const struct proto_msg *m);
/* Sends an error frame, stops delivering messages, closes once it is written. */
void proto_stream_fail(struct proto_stream *s, const char *code, const char *message,
                       const char *field, const char *request_id);
void proto_stream_close(struct proto_stream *s);
/* Stops reading, lets what is queued be written, then closes. */
void proto_stream_end(struct proto_stream *s);

/* Accepts the next connection on listener into s (set up with proto_stream_init), reads the
 * peer's credentials (SO_PEERCRED) and names the stream after them for the logs. */
int proto_stream_accept(uv_stream_t *listener, struct proto_stream *s, struct ucred *cred);

/* Listens on a Unix socket at path for a daemon: refuses a path that is too long (libuv would
 * cut it), that is not a socket, or that a live process still listens on; removes a stale
 * socket; creates it 0600 and only then opens it to `group` (0660, root:group; group -1
 * keeps the daemon's own), so there is never a moment of wider access. */
int proto_listen(uv_loop_t *loop, uv_pipe_t *listener, const char *path, gid_t group, uv_connection_cb on_connection,
                 struct anvil_err *err);
