/* mcp/: anvil-mcp, run by any user with no privilege, started by an MCP host (a desktop
 * assistant, a coding agent, an IDE) as that user: the Model Context Protocol over its stdin
 * and stdout (JSON-RPC 2.0, one message a line), and a client of the broker's socket as
 * anvilctl is (ctl/client.c). It trusts nothing it reads: the host's messages are decoded
 * strictly and bounded, the broker's frames as anvilctl decodes them.
 *
 * main.c reads and answers the messages (the lifecycle, the errors); each tools/call and
 * resources request is carried out on a thread of its own (tools.c, resources.c), so that a
 * notifications/cancelled or a ping is read while a run goes on. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include <stdio.h>

#include "ctl/client.h"
#include "policy/mcp_texts.h"
#include "proto/proto.h"

/* The most bytes of one message from the host (a line): a run_python of the largest source
 * (1 MiB), escaped, fits with room to spare. */
#define MCP_MESSAGE_MAX (8u * 1024 * 1024)
/* Requests carried out at once (tools/call, resources/list and read): past it, an error. */
#define MCP_CALLS_MAX 16
/* An artifact read into one message (resources/read), and an image shown inline in a tool
 * result, at most (before base64). */
#define MCP_RESOURCE_MAX (4u * 1024 * 1024)
#define MCP_IMAGE_MAX (2u * 1024 * 1024)
/* Runs of this session whose artifacts resources/list lists: the latest. */
#define MCP_RUNS_KEPT 64

/* JSON-RPC's and MCP's error codes. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603
#define RPC_SERVER_BUSY -32000
#define MCP_RESOURCE_NOT_FOUND -32002

/* One request carried out on a thread (main.c starts it, its worker answers it). */
struct mcp_call {
        struct mcp_call *next;
        json_t *id;       /* the request's id (owned) */
        json_t *params;   /* owned; {} when none */
        json_t *progress; /* params._meta.progressToken, or NULL */
        char method[128];
        /* Guarded by the calls' lock (mcp_lock): */
        int fd;           /* the broker connection while the request is in flight, else -1 */
        bool run_sent;    /* a run_request went on fd: a cancel frame cancels it */
        bool cancelled;   /* notifications/cancelled came: no answer is sent */
        char rid[48];     /* the broker request's request_id */
        char task_id[96]; /* a submit_task's, once the broker named it: a cancel names it */
        uint64_t progress_n;
};

/* The negotiated protocol version (after initialize): "2025-06-18", ... */
extern char mcp_version[16];
/* The capabilities the user approved on the command line (--approve NAME). */
extern struct proto_strv mcp_approved;

/* The messages out, one a line on stdout, whole (a lock around each). Each takes its json. */
void mcp_send(json_t *msg);
void mcp_result(const json_t *id, json_t *result);
void mcp_error(const json_t *id, int code, const char *message);
/* notifications/progress for c if it asked for it (a progressToken), with message. */
void mcp_progress(struct mcp_call *c, const char *message);
/* Whether the negotiated version is at least v ("2025-06-18"): the dates order as strings. */
bool mcp_version_at_least(const char *v);

void mcp_lock(void);
void mcp_unlock(void);
/* The broker connection of c is fd from now (-1: none any more); a cancel already asked for is
 * sent at once. */
void mcp_call_set_fd(struct mcp_call *c, int fd, bool run_sent);
/* Whether c was cancelled (then no answer is sent). */
bool mcp_call_cancelled(struct mcp_call *c);

/* The task of c is task_id from now: a cancel from then on cancels it by its id. */
void mcp_call_set_task(struct mcp_call *c, const char *task_id);

/* tools.c */
json_t *mcp_tools_list(void);
void mcp_tools_call(struct mcp_call *c);
/* What a request was, for the words of its refusal. */
enum mcp_what {
        MCP_RUN,
        MCP_PROBE,
        MCP_TASK
};
/* A growing text (open_memstream). */
struct mcp_text {
        FILE *f;
        char *buf;
        size_t len;
};
void mcp_text_open(struct mcp_text *t);
char *mcp_text_close(struct mcp_text *t); /* malloc'd, never NULL but out of memory */
json_t *mcp_text_content(const char *s);
/* A tool result of one text, isError set or not. */
void mcp_result_text(struct mcp_call *c, const char *s, bool is_error);
/* How a request to the broker ended (rc, failed: ctl_follow's), answered: a refusal as the
 * tool's result (isError), anything else as Anvil's own failure (-32603). */
void mcp_request_failed(struct mcp_call *c, int rc, const char *failed, enum mcp_what what);
/* r's images as image content appended to content, what is not shown said in notes. */
void mcp_add_images(struct mcp_call *c, const struct proto_run_result *r, json_t *content, FILE *notes);
/* A resource_link for each artifact of r. */
json_t *mcp_resource_links(const struct proto_run_result *r);
/* -32602 for a member of o not in known (sent: -1), else 0. */
int mcp_unknown_member(const json_t *id, const char *path, const json_t *o, const char *const *known, size_t n);
/* A JSON string without NUL of at most max bytes. */
bool mcp_text_string(const json_t *s, size_t max);
/* Sends m (with n fds) and follows its frames with on_frame (ctl_follow): the exit status. */
int mcp_follow(struct mcp_call *c, const struct proto_msg *m, const int *fds, size_t n, bool is_run,
               ctl_frame_fn frame_fn, void *ctx, char **failed);

/* task.c */
void mcp_submit_task(struct mcp_call *c, const json_t *arguments);

/* resources.c */
void mcp_resources_list(struct mcp_call *c);
void mcp_resources_read(struct mcp_call *c);
json_t *mcp_resource_templates(void);
/* A run of this session, kept for resources/list. */
void mcp_runs_add(const struct proto_run_result *r);
/* anvil://run/RUN_ID/PATH, PATH percent-encoded where it is not [A-Za-z0-9._~/-]. malloc'd. */
char *mcp_artifact_uri(const char *run_id, const char *path);
/* The MIME type for an artifact's name (by its extension). */
const char *mcp_mime_type(const char *path);
/* An artifact of a run read through the broker (artifact_request), at most max bytes: 0 with
 * *data (malloc'd, a NUL after its len bytes) and *len; or, with why (malloc'd) said, 1 the
 * broker refused it ("code: message"), 2 Anvil could not be reached, 3 it is over max (*len
 * its size), 4 what came is not what the broker counted. */
int mcp_artifact_fetch(struct mcp_call *c, const char *run_id, const char *path, size_t max, uint8_t **data,
                       size_t *len, char **why);

/* Argument checks of a tools/call or resources/read: 0, or -1 once the error was sent. */
int mcp_param_type(const json_t *id, const char *path, const char *must_be);
