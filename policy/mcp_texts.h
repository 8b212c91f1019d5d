/* Part of the catalog of every string Anvil reports (policy/reasons.h): what anvil-mcp tells
 * an MCP host, in its JSON-RPC errors and its tools' results (mcp/). One list, formatted by
 * anvil-mcp alone, checked by the compiler as the rest of the catalog is (POL_WITH_ID), and
 * asserted verbatim by tests/unit/test_mcp_texts.c and, as the host reads them, by
 * tests/e2e/t_mcp.sh. The root daemon never includes this file. */
#pragma once

#include "policy/reasons.h"

/* Arguments are documented beside each; any text from outside (a method's name, a path) is
 * cut by the caller to a bounded length before it is formatted in. */
#define POL_MCP_TEXTS(X)                                                                        \
        /* JSON-RPC: the message itself. jansson's error text, line (int), column (int) */      \
        X(PARSE_ERROR, "not valid JSON: %s (line %d, column %d)")                               \
        /* the limit (unsigned long long) */                                                    \
        X(TOO_LARGE, "a message over the limit of %llu bytes: refused, its bytes skipped to the next newline") \
        X(BATCH, "a batch (a JSON array) is not accepted: this server speaks MCP 2025-06-18 and later, which " \
                 "removed JSON-RPC batching; send each message on its own line")                \
        X(NOT_OBJECT, "a JSON-RPC message is a JSON object")                                    \
        X(BAD_VERSION, "\"jsonrpc\" must be \"2.0\"")                                            \
        X(BAD_ID, "\"id\" must be a string or an integer (MCP: never null)")                    \
        /* the member's name (cut) */                                                           \
        X(UNKNOWN_MEMBER, "unknown member \"%s\" in a JSON-RPC message")                        \
        X(BAD_METHOD, "\"method\" must be a string")                                            \
        X(NO_METHOD, "a request has a \"method\"; a response (\"result\" or \"error\") is not expected here") \
        /* the method (cut) */                                                                  \
        X(NOTIFICATION_WITH_ID, "%s is a notification and carries no \"id\"")                  \
        X(DUPLICATE_ID, "this \"id\" is already used by a request in flight")                  \
        X(BAD_PARAMS, "\"params\" must be an object")                                           \
        /* the method (cut) */                                                                  \
        X(UNKNOWN_METHOD, "method not found: %s")                                               \
        /* the method (cut) */                                                                  \
        X(NOT_INITIALIZED, "%s before initialize: send initialize first")                       \
        X(ALREADY_INITIALIZED, "initialize was already received in this session")              \
        /* requests in flight (unsigned) */                                                     \
        X(TOO_MANY, "%u requests are in flight, the most this server carries at once: retry when one ends") \
        /* JSON-RPC: invalid params. the field's path, what it must be */                      \
        X(PARAM_TYPE, "%s: must be %s")                                                         \
        /* the field's path */                                                                  \
        X(PARAM_MISSING, "%s: is required")                                                     \
        /* the object's path, the member (cut) */                                               \
        X(PARAM_UNKNOWN, "%s: unknown member \"%s\"")                                           \
        /* the tool's name (cut) */                                                             \
        X(UNKNOWN_TOOL, "unknown tool: %s (the tools are run_python, submit_task and probe)")                \
        /* the field's path, what is wrong */                                                   \
        X(PARAM_BAD, "%s: %s")                                                                  \
        /* Resources. the URI (cut) */                                                          \
        X(BAD_URI, "%s is not an Anvil resource: expected anvil://run/RUN_ID/PATH")             \
        /* the URI (cut), bytes (unsigned long long), the limit (unsigned long long) */        \
        X(RESOURCE_TOO_LARGE, "%s is %llu bytes, over the %llu bytes anvil-mcp reads into one message: copy it " \
                              "with anvilctl show RUN_ID -o DIR")                                \
        /* the URI (cut), what the broker said */                                               \
        X(RESOURCE_NOT_READ, "%s could not be read: %s")                                        \
        /* Anvil's own failures, a JSON-RPC error (-32603): what went wrong */                  \
        X(ANVIL_UNREACHABLE, "Anvil could not carry out the request, and the tool did not run: %s") \
        /* Tool results. A refusal by the broker or the supervisor: its code, its message */    \
        X(RUN_REFUSED, "Anvil refused the run (%s): %s")                                        \
        /* the code, the message */                                                             \
        X(PROBE_REFUSED, "Anvil refused the probe (%s): %s")                                    \
        /* the code, the message */                                                             \
        X(TASK_REFUSED, "Anvil refused the task (%s): %s")                                      \
        /* the input's index (size_t), its path, what is wrong */                               \
        X(TASK_INPUT, "inputs[%zu] %s: %s")                                                     \
        /* the artifact's path, bytes (unsigned long long), the limit (unsigned long long), its URI */ \
        X(IMAGE_NOT_INLINED, "image %s (%llu bytes) is over the %llu bytes shown inline: read it as %s") \
        /* the artifact's path, why */                                                          \
        X(IMAGE_NOT_READ, "image %s could not be read back: %s")

enum pol_mcp_text {
#define X(id, fmt) POL_MCP_##id,
        POL_MCP_TEXTS(X)
#undef X
                _POL_MCP_TEXT_MAX
};

#define POL__PICK_MCP(id, fmt) __builtin_choose_expr(pol__want == (int)POL_MCP_##id, fmt,
/* The format literals, valid inside POL_WITH_ID only. */
#define POL_MCP_FMT POL_MCP_TEXTS(POL__PICK_MCP) "" POL_MCP_TEXTS(POL__PICK_END)

/* Formats MCP text POL_MCP_ID into buf (cut to size, terminated), its arguments checked by
 * the compiler like POL_REASON's. Is buf. */
#define POL_MCP_TEXT(buf, size, ID, ...)                                                        \
        POL_WITH_ID(POL_MCP_##ID, pol_format((buf), (size), POL_MCP_FMT, ##__VA_ARGS__))
