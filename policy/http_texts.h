/* Part of the catalog of every string Anvil reports (policy/reasons.h): what the broker's web
 * UI answers over HTTP (broker/http*.c) and says at start-up about it. One list, formatted by
 * the broker alone, checked by the compiler as the rest of the catalog is (POL_WITH_ID). The
 * root daemon never includes this file. docs/web-api.md lists each with its status. */
#pragma once

#include "policy/reasons.h"

#define POL_HTTP_TEXTS(X)                                                                       \
        /* 401: an /api/ request without a live session */                                     \
        X(NO_SESSION, "no session: open the link that `anvilctl ui` prints")                    \
        /* 403: a POST whose Origin is missing or another site's; the origin served (%s) */     \
        X(BAD_ORIGIN, "a POST must come from the page itself (Origin %s)")                      \
        /* 413: the body's limit in bytes (unsigned long long) */                               \
        X(BODY_TOO_LARGE, "the request's body is over the limit of %llu bytes")                 \
        X(NOT_FOUND, "no such page")                                                            \
        X(BAD_PATH, "the path is not one the server serves (no '..', NUL or hidden name)")      \
        X(METHOD, "this method is not allowed here")                                            \
        /* 403 at /login: the token is unknown, used or expired */                              \
        X(LOGIN_BAD, "this login link is unknown, used, or expired: run `anvilctl ui` again")   \
        /* 400: the body is not the JSON object expected; what is wrong (%s) */                 \
        X(BAD_JSON, "the request's body: %s")                                                   \
        /* 503: too many sessions or pending links (unsigned) */                                \
        X(SESSIONS_FULL, "the broker holds %u sessions already: try again later")               \
        X(LINKS_FULL, "the broker holds %u unused login links already: try again in a minute")  \
        /* 404 at a cancel: what ("run", "task"), the id */                                   \
        X(NO_JOB, "no %s started from the web UI by this user, and still known here, has the id %s") \
        /* 409 at a cancel: what, the id */                                                     \
        X(JOB_ENDED, "the %s %s has ended already")                                             \
        /* the broker's end of a request closed before its answer (503), before the run or task \
         * started, or before its result (an event stream's error) */                          \
        X(GONE, "the broker ended the request before it was answered")                          \
        X(GONE_RESULT, "the broker ended the request before its result")                        \
        /* 503: the broker takes no request of the uid now (unsigned), why (%s) */              \
        X(LINK_REFUSED, "the broker takes no more requests of uid %u now (%s)")                 \
        X(LINK_WHY_CAP, "its connections are at their cap (--max-conns-per-uid, --max-conns)") \
        X(LINK_WHY_STOPPING, "it is stopping")                                                  \
        /* a body's field not of the request's (%s, cut) */                                     \
        X(FIELD_UNKNOWN, "'%.60s' is not a field of this request")                              \
        X(RUN_FIELDS, "source (a string), caps, args (lists of strings) or limits (an object of whole numbers) " \
                      "missing or of the wrong type")                                           \
        X(TASK_FIELDS, "task (a string), capabilities_approved (a list of strings), max_steps or time_budget_s " \
                       "(whole numbers) missing or of the wrong type")                          \
        /* the inputs' limit (unsigned) */                                                      \
        X(INPUTS_LIST, "inputs: expected a list of at most %u inputs")                          \
        /* the input's index (unsigned long long) */                                            \
        X(INPUT_SHAPE, "inputs[%llu]: expected {\"name\", \"data_b64\"} or {\"name\", \"from_folder\"}") \
        X(INPUT_B64, "inputs[%llu].data_b64: not base64")                                       \
        /* the index, the folder file's name, the limit in MiB (unsigned) */                   \
        X(INPUT_TOO_BIG, "inputs[%llu]: '%s' is over %u MiB, more than a task's inputs take: run a tool on it instead") \
        X(INPUT_UNREADABLE, "inputs[%llu]: '%s' cannot be read")                                \
        /* ui_login: names (unsigned long long), fds (unsigned long long) */                    \
        X(LOGIN_FD_COUNT, "ui_login.inputs: %llu names for %llu file descriptors")              \
        /* ui_login: the index (unsigned long long) */                                          \
        X(LOGIN_FD_BAD, "ui_login.inputs[%llu]: not a regular file with a plain name")          \
        /* ui_login on a broker without http */                                                 \
        X(NO_HTTP, "this broker serves no web UI: set http = 127.0.0.1:8700 in its configuration (or --http)") \
        /* an input from the folder (%s) that the session has not */                            \
        X(NO_FOLDER_FILE, "inputs: '%s' is not a file of the folder given to `anvilctl ui --inputs`") \
        /* start-up: the address given (%s) */                                                 \
        X(ADDR_BAD, "--http %s: expected ADDRESS:PORT, e.g. 127.0.0.1:8700 (IPv4, or [IPv6]:PORT)") \
        X(ADDR_REMOTE, "--http %s: not a loopback address; every machine that reaches it could try the UI's " \
                       "login: set http_allow_remote = yes (--http-allow-remote) to serve it anyway") \
        /* start-up, a warning: the address (%s) */                                             \
        X(ADDR_REMOTE_WARN, "--http %s: serving the web UI beyond this machine (http_allow_remote); " \
                            "there is no TLS: put it behind a proxy that has it")                \
        /* start-up: the directory (%s), the system's error (%s) */                             \
        X(WEB_DIR, "--web-dir %s: %s: give the directory of the UI's files (make install puts them in " \
                   "PREFIX/share/anvil/web)")                                                   \
        /* start-up: the address, what libmicrohttpd said */                                     \
        X(LISTEN, "--http %s: cannot listen there (%s)")

enum pol_http_text {
#define X(id, fmt) POL_HTTP_##id,
        POL_HTTP_TEXTS(X)
#undef X
        _POL_HTTP_TEXT_MAX
};

#define POL__PICK_HTTP(id, fmt) __builtin_choose_expr(pol__want == (int)POL_HTTP_##id, fmt,
#define POL_HTTP_FMT POL_HTTP_TEXTS(POL__PICK_HTTP) "" POL_HTTP_TEXTS(POL__PICK_END)
/* Formats text POL_HTTP_ID into buf, checked like POL_REASON. Is buf. */
#define POL_HTTP_MSG(buf, size, ID, ...) POL_WITH_ID(POL_HTTP_##ID, pol_format((buf), (size), POL_HTTP_FMT, ##__VA_ARGS__))
