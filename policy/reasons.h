/* The catalog of every reason string Anvil reports (DESIGN §5). One list: the enum, the
 * formats and the test that asserts each verbatim all come from it. A reason is never written
 * anywhere else; code refers to it by its id. */
#pragma once

#include <stdarg.h>
#include <stddef.h>

/* id, printf format. Arguments are documented beside each. */
#define POL_REASONS(X)                                                                          \
        X(KILLED_TIMEOUT, "killed: timeout")                                                    \
        X(KILLED_CPU, "killed: cpu limit")                                                      \
        X(KILLED_CANCELLED, "killed: cancelled")                                                \
        X(KILLED_STOPPING, "killed: the supervisor is stopping")                                \
        /* observed peak MB (double), cap MB (unsigned long long) */                            \
        X(KILLED_MEMORY, "killed: memory (peak %.1f MB > %llu MB cap)")                         \
        /* stream name, kept bytes (unsigned long long), written bytes (unsigned long long) */  \
        X(OUTPUT_TRUNCATED, "%s truncated: kept the first %llu of %llu bytes")                  \
        /* artifact path */                                                                     \
        X(ARTIFACT_NOT_REGULAR, "artifact '%s' is not a regular file and is not listed")        \
        /* files cap (unsigned long long) */                                                    \
        X(ARTIFACTS_CAP_REACHED, "artifacts: the files cap of %llu bytes was reached; any write past it was refused") \
        /* without a tmpfs (direct): RLIMIT_FSIZE (unsigned long long), the files that reached \
         * it (unsigned long long), the first of them as shown */                              \
        X(ARTIFACT_FILE_CAP_REACHED, "artifacts: the limit of %llu bytes for one file was reached by %llu (the " \
                                     "first: '%s'); any write past it was refused")             \
        /* /tmp's size, the files cap (unsigned long long), full when the runner ended (pid 1, P5) */ \
        X(TMP_CAP_REACHED, "/tmp: its size of %llu bytes (the files cap) was reached; any write past it was refused") \
        /* /tmp's entries (unsigned), none left when the runner ended */                       \
        X(TMP_ENTRIES_REACHED, "/tmp: the limit of %u files, directories and links was reached; any made past it " \
                               "was refused")                                                    \
        /* the artifacts tmpfs's entries (unsigned): its inodes, full (ENOSPC to the tool) */   \
        X(ARTIFACTS_ENTRIES_REACHED, "artifacts: the limit of %u files, directories and links was reached; " \
                                     "any made past it was refused")                            \
        /* regular files found, listed, not listed (unsigned long long each), the result's limit \
         * (unsigned): the collect step's own bound (sup_rundir_collect) */                      \
        X(ARTIFACTS_NOT_LISTED, "artifacts: %llu regular files, %llu listed and copied; the other %llu were " \
                                "neither copied nor listed (a result lists at most %u)")        \
        /* an entry as shown (cut, invalid bytes as U+FFFD), an ARTIFACT_WHY_ */                \
        X(ARTIFACT_NOT_LISTED, "artifact '%s' is not listed: %s")                               \
        X(ARTIFACT_DIR_NOT_LISTED, "artifact directory '%s' is not listed, nor anything in it: %s") \
        X(ARTIFACT_WHY_NOT_UTF8, "its name is not UTF-8")                                       \
        /* the limit (unsigned) */                                                              \
        X(ARTIFACT_WHY_TOO_DEEP, "it is more than %u directories deep")                         \
        X(ARTIFACT_WHY_TOO_LONG, "its path is longer than %u bytes")                            \
        /* entries not listed beyond those noted one by one (unsigned long long), how many are \
         * noted (unsigned) */                                                                 \
        X(ARTIFACTS_SKIPPED_MORE, "artifacts: %llu more entries were not listed (not regular files, or not " \
                                  "listable); only the first %u are noted")                     \
        /* entries looked at (unsigned long long): without a tmpfs (direct), the walk's bound */ \
        X(ARTIFACTS_WALK_STOPPED, "artifacts: the first %llu entries were looked at, and no more: any others " \
                                  "were neither copied nor listed")                             \
        /* forks refused (unsigned long long), the pids limit (unsigned long long) */           \
        X(FORKS_REFUSED, "%llu forks refused at the limit of %llu processes and threads")       \
        /* events dropped (unsigned long long) */                                               \
        X(EVENTS_DROPPED, "%llu more events were not recorded (limit reached)")                 \
        /* decoder error */                                                                     \
        X(RUNNER_EVENT_MALFORMED, "the runner sent a malformed event (%s); later events ignored") \
        /* The model client (broker/model.c): what a chat request ended with, one line each.  \
         * No argument is ever the key. */                                                    \
        X(MODEL_CANCELLED, "cancelled")                                                         \
        X(MODEL_HTTP_401, "the model server refused the key (HTTP 401)")                        \
        X(MODEL_HTTP_401_NO_KEY, "the model server wants a key (HTTP 401) and none is set (ANVIL_MODEL_KEY or --model-key-file)") \
        /* the model's name */                                                                  \
        X(MODEL_HTTP_403, "the model server refused access to model '%s' (HTTP 403)")           \
        /* the URL requested (without credentials or query), the model's name */                \
        X(MODEL_HTTP_404, "the model server has nothing at %s (HTTP 404): check the URL and the model name '%s'") \
        X(MODEL_HTTP_429, "the model server is rate limiting requests (HTTP 429)")              \
        /* the status (long) */                                                                 \
        X(MODEL_HTTP_STATUS, "the model server answered HTTP %ld")                              \
        /* one of the above, the server's own message (printable, at most 200 bytes) */         \
        X(MODEL_SERVER_SAYS, "%s; the server says: %s")                                         \
        /* one of the above, attempts made (unsigned) */                                        \
        X(MODEL_GAVE_UP, "%s (gave up after %u attempts)")                                      \
        /* host:port */                                                                         \
        X(MODEL_CONNECT_REFUSED, "cannot connect to the model server at %s: connection refused") \
        /* host:port, why */                                                                    \
        X(MODEL_CONNECT_FAILED, "cannot connect to the model server at %s: %s")                 \
        /* host */                                                                              \
        X(MODEL_RESOLVE, "cannot resolve the model server's host '%s'")                         \
        /* host:port, why (the system's or libcurl's text) */                                  \
        X(MODEL_CONNECTION_LOST, "the connection to the model server at %s was lost: %s")       \
        /* host:port */                                                                         \
        X(MODEL_CONNECTION_CLOSED, "the model server at %s closed the connection without a reply") \
        X(MODEL_CONNECTION_CUT, "the model server at %s ended the connection in the middle of its reply") \
        /* host:port, libcurl's text */                                                         \
        X(MODEL_TLS, "TLS with the model server at %s failed: %s")                              \
        /* seconds (unsigned) */                                                                \
        X(MODEL_TIMEOUT, "the model server did not answer within %u s")                         \
        /* MiB (unsigned) */                                                                    \
        X(MODEL_BODY_TOO_LARGE, "the model server's reply is larger than %u MiB")               \
        /* KiB (unsigned) */                                                                    \
        X(MODEL_HEADERS_TOO_LARGE, "the model server's reply headers are larger than %u KiB")   \
        /* the decoder's message (printable), the byte offset (int) */                          \
        X(MODEL_NOT_JSON, "the model server's reply is not valid JSON: %s (at byte %d)")        \
        X(MODEL_NO_CHOICES, "the model server's reply has no choices")                          \
        X(MODEL_NO_CONTENT, "the model server's reply has no message content")                  \
        /* the server's message (printable) */                                                  \
        X(MODEL_REPLY_ERROR, "the model server answered with an error: %s")                     \
        X(MODEL_KEY_IN_REPLY, "the model server's reply contains the key; it is refused")       \
        /* max_tokens (unsigned) */                                                             \
        X(MODEL_CUT, "the model's reply was cut at max_tokens (%u): finish_reason is length")   \
        X(MODEL_CUT_SERVER, "the model's reply was cut at the server's token limit: finish_reason is length") \
        /* host:port, libcurl's text for its error code */                                      \
        X(MODEL_FAILED, "the request to the model server at %s failed: %s")                     \
        /* The daemons' bounds on their clients' connections (proto/stream.c, broker/clients.c, \
         * supervisor/server.c): the messages of their error frames. Each names the daemon    \
         * ("broker", "supervisor"), the bound, its value and its flag. */                     \
        /* uid (unsigned), daemon, the cap (unsigned) */                                        \
        X(CONN_UID_CAP, "too many connections from uid %u to the %s: at most %u at once (--max-conns-per-uid); close one and try again") \
        /* daemon, the cap (unsigned) */                                                        \
        X(CONN_CAP, "too many connections to the %s: at most %u at once from all users (--max-conns); try again later") \
        /* the request's type, uid (unsigned), the cap (unsigned), daemon */                    \
        X(INFLIGHT_UID_CAP, "%s: uid %u already has %u requests in flight, the most it may have on the %s (--max-inflight-per-uid); wait for one to end") \
        /* seconds (unsigned), daemon */                                                        \
        X(CONN_IDLE, "the connection was idle for %u s with no request in flight and the %s has closed it (--idle-timeout); connect again to send a request") \
        /* seconds (unsigned), daemon */                                                        \
        X(FRAME_TIMEOUT, "message: a frame was begun and not completed within %u s and the %s has closed the connection (--frame-timeout); send each frame whole") \
        /* uid (unsigned), daemon, bytes (unsigned long long), the limit (unsigned long long) */ \
        X(PARTIAL_UID_CAP, "message: uid %u's unfinished frames on its connections to the %s would take %llu bytes, over the limit of %llu (--max-partial-bytes); send each frame whole, on fewer connections at once") \
        /* uid (unsigned), bytes (unsigned long long), daemon, the limit (unsigned long long) */ \
        X(UNREAD_UID_CAP, "uid %u has left %llu bytes of replies unread on its connections to the %s, and the next would take it over the limit of %llu (--max-unread-bytes); this connection is closed: read the replies to a request as they come") \
        /* the encoder's message ("run_request: encoded frame of N bytes is over the limit of M") */ \
        X(RELAY_TOO_LARGE, "%s, as the broker passes the request on to the supervisor (every field written out); send smaller inputs") \
        /* inputs by fd (docs/protocol.md "Inputs by file descriptor"): field, index (size_t), \
         * name */                                                                              \
        X(INPUT_DATA_OR_FD, "%s[%zu]: input '%s': give its data or its fd, one of the two")          \
        /* field, index (size_t), name, the fd index given (long long), fds sent (size_t) */   \
        X(INPUT_FD_INDEX, "%s[%zu].fd: input '%s': fd %lld is not one of the %zu file descriptors sent with the request") \
        /* field, index (size_t), name, the fd index (long long) */                             \
        X(INPUT_FD_TWICE, "%s[%zu].fd: input '%s': fd %lld is named by another input too")              \
        /* field, fds sent (size_t), inputs naming one (size_t) */                              \
        X(INPUT_FD_COUNT, "%s: %zu file descriptors came with the request and %zu of its inputs name one; each fd is one input's") \
        /* field, index (size_t), name, what it is ("a pipe", "a socket", "a character device"...) */ \
        X(INPUT_FD_TYPE, "%s[%zu].fd: input '%s': its fd is %s, not a regular file or a directory")    \
        /* the egress index given (long long), fds sent (size_t) */                              \
        X(EGRESS_FD_INDEX, "run_request.egress: fd %lld is not one of the %zu file descriptors sent with the request") \
        /* what it is ("a regular file", "a pipe"...) */                                        \
        X(EGRESS_FD_TYPE, "run_request.egress: its fd is %s, not a socket (the run's anvil-egress socket, opened O_PATH)") \
        /* field, index (size_t), name, the fd index (long long) */                             \
        X(EGRESS_FD_SHARED, "%s[%zu].fd: input '%s': fd %lld is the run's egress socket (run_request.egress)") \
        /* field, fds sent (size_t), inputs naming one (size_t) */                              \
        X(EGRESS_FD_COUNT, "%s: %zu file descriptors came with the request, and %zu of its inputs name one besides the egress socket; each other fd is one input's") \
        X(EGRESS_FROM_CLIENT, "run_request.egress: only the broker gives a run its egress socket; send network in capabilities_requested and capabilities_approved") \
        X(EGRESS_WITHOUT_NETWORK, "run_request.egress: an egress socket came with a run that is not approved for network; send it only with network requested and approved") \
        /* field, index (size_t), name */                                                       \
        X(INPUT_FD_NOT_READ, "%s[%zu].fd: input '%s': its fd is not open for reading (an O_PATH or write-only fd proves no right to read)") \
        /* field, index (size_t), name */                                                       \
        X(INPUT_FD_FUSE, "%s[%zu].fd: input '%s': it is on a FUSE file system, which this supervisor would have to copy from (its server could stall the copy); copy it to a local file first") \
        /* field, index (size_t), name */                                                       \
        X(INPUT_FD_NOT_HERE, "%s[%zu].fd: input '%s': this message's inputs travel as bytes, not as file descriptors") \
        /* the message's type */                                                                \
        X(INPUT_FD_UNEXPECTED, "file descriptors came with a %s message; only a run_request's inputs may carry them") \
        X(INPUT_FD_OVERLAP, "message: file descriptors came for a frame before the previous frame's were taken; send one frame with fds at a time") \
        /* strerror */                                                                          \
        X(INPUT_FD_RECV, "message: the file descriptors sent could not be received (%s)")      \
        X(INPUT_FD_MID_FRAME, "message: file descriptors came in the middle of a frame; send them with its first bytes") \
        /* the bound (unsigned) */                                                              \
        X(INPUT_FD_TOO_MANY, "message: more than %u file descriptors came with one frame")      \
        /* field, the inputs' bytes (unsigned long long), max_input_bytes (unsigned long long) */ \
        X(INPUT_TOO_LARGE, "%s: %llu bytes of input files in all, over this supervisor's max_input_bytes of %llu") \
        /* field, index (size_t), name, the supervisor's mode ("rootless", "direct") */         \
        X(INPUT_DIR_UNSUPPORTED, "%s[%zu].fd: input '%s': a directory input is bind-mounted from its fd, which a %s supervisor cannot do; send its files as inputs") \
        /* layer, evidence */                                                                   \
        X(REFUSED_NOT_IN_FORCE, "refused: %s not in force (%s)")                                \
        /* the runner's first event (R6): what it saw in force, a list */                       \
        X(LAYERS_IN_FORCE, "in force before the request's variables and source are read: %s")  \
        /* a warm jail's runner (R6w): the modules imported before any of the run's bytes */   \
        X(WARM_READY, "warm: %s imported under every kernel layer; waiting for a run")                 \
        /* the supervisor's, at the take (supervisor/warm.c): ms the jail was built before the \
         * request (unsigned long long) */                                                      \
        X(WARM_TAKEN, "a warm jail, built %llu ms before the request; its layers' events are from then, shown at 0") \
        /* warm jails on, a cold one taken, and why (supervisor/warm.c) */                      \
        X(WARM_COLD_NOT_COPIED, "a cold jail: an input is a directory or not a regular file on a local file system, which a warm jail does not copy") \
        /* the inputs' bytes, the bound of a warm jail's copies (unsigned long long) */          \
        X(WARM_COLD_TOO_LARGE, "a cold jail: its inputs' %llu bytes are over the %llu bytes a warm jail copies") \
        X(WARM_COLD_CAPS, "a cold jail: it asks for capabilities, and warm jails are built with none") \
        X(WARM_COLD_LAYERS_OFF, "a cold jail: it asks for its Python layers off, and warm jails are built with them on") \
        /* the run's files cap, the default warm jails are built with (unsigned long long) */   \
        X(WARM_COLD_FILES, "a cold jail: its files cap of %llu bytes is not the %llu bytes warm jails are built with") \
        X(WARM_COLD_NONE, "a cold jail: no warm jail was waiting")                              \
        /* the run's memory cap, the default (MB, unsigned long long) */                        \
        X(WARM_COLD_MEMORY, "a cold jail: its memory cap of %llu MB is under the %llu MB warm jails are built with, whose imports hold about 85 MB of it") \
        /* the supervisor's, at S6a: the runner's /proc status */                               \
        X(SECCOMP_VERIFIED, "seccomp filter seen in force from outside (%s); its listener watched") \
        /* variables between an agent's steps (DESIGN §8, runner/vars.c). A request's that \
         * the runner refuses, before the tool's first line (an error frame bad_request):       \
         * the decoder's message */                                                             \
        X(VARIABLES_NOT_JSON, "variables refused: not valid JSON (%s)")                         \
        /* "an array", "a string", "a number", "a boolean", "null" */                           \
        X(VARIABLES_NOT_OBJECT, "variables refused: expected a JSON object, got %s")            \
        /* the name as shown (pol_var_show), a VAR_ why */                                      \
        X(VARIABLES_BAD_NAME, "variables refused: '%s' %s")                                     \
        /* the key as shown (pol_var_show) */                                                   \
        X(VARIABLES_DUPLICATE, "variables refused: the key '%s' appears more than once")        \
        /* how many (unsigned long long), the limit (unsigned) */                               \
        X(VARIABLES_TOO_MANY, "variables refused: %llu variables, over the limit of %u")        \
        /* NaN, Infinity or -Infinity, which Python's json would take: inside VARIABLES_NOT_JSON */ \
        X(VARIABLES_CONSTANT, "%s is not JSON")                                                 \
        /* how many were bound (unsigned long long) */                                          \
        X(VARIABLES_BOUND, "variables: %llu bound before the tool's first line")                \
        /* after the tool's last line: kept, bytes of JSON, not kept (unsigned long long each) */ \
        X(VARIABLES_KEPT, "variables: %llu kept (%llu bytes of JSON), %llu not kept")           \
        /* why a variable was not kept (variables_dropped[].reason; read after its name) */     \
        X(VARIABLE_NOT_JSON, "is not JSON-serialisable")                                        \
        /* the cause: VARIABLE_HOLDS, or Python's ("Circular reference detected") */            \
        X(VARIABLE_NOT_JSON_WHY, "is not JSON-serialisable (%s)")                               \
        /* a type's name, found inside the value */                                             \
        X(VARIABLE_HOLDS, "holds a value of type %s")                                           \
        /* the bound of the object's JSON text (unsigned long long) */                          \
        X(VARIABLE_TOO_LARGE, "does not fit in the limit of %llu bytes for all variables")      \
        /* the limit (unsigned) */                                                              \
        X(VARIABLE_TOO_MANY, "is over the limit of %u variables")                               \
        /* final_answer(value): bytes of JSON (unsigned long long) */                           \
        X(FINAL_ANSWER, "final answer recorded (%llu bytes of JSON)")                           \
        /* raised into the tool: the value's type, VARIABLE_NOT_JSON or VARIABLE_NOT_JSON_WHY */ \
        X(FINAL_ANSWER_NOT_JSON, "final_answer: the value (%s) %s")                             \
        /* bytes (unsigned long long), the limit (unsigned long long) */                        \
        X(FINAL_ANSWER_TOO_LARGE, "final_answer: the value's JSON is %llu bytes, over the limit of %llu") \
        X(FINAL_ANSWER_ARGS, "final_answer takes one value: final_answer(value) or final_answer(answer=value)") \
        /* the pre-check (DESIGN §5): op ("import socket", "os.fork", "attribute __code__"), why */ \
        X(PRECHECK_BLOCKED, "blocked: %s (%s)")                                                 \
        /* path as written, roots as shown to the tool ("./inputs, ./artifacts") */             \
        X(PRECHECK_READ_PATH, "blocked: read path '%s' outside ALLOWED_READ_PATHS (%s)")        \
        X(PRECHECK_WRITE_PATH, "blocked: write path '%s' outside ALLOWED_WRITE_PATHS (%s)")     \
        /* the audit hook: op ("socket.connect", "open('/etc/passwd', 'r')"), why */           \
        X(RUNTIME_BLOCKED, "blocked at runtime: %s (%s)")                                       \
        /* refusals beyond the limit (unsigned long long), the limit (unsigned) */              \
        X(RUNTIME_DROPPED, "%llu more refusals at runtime were not recorded (limit of %u)")     \
        /* Landlock, explained from outside by the kernel's audit records (supervisor/kaudit.c, \
         * policy/kaudit.c): op ("read '/etc/hostname'"), why (a POL_WHYS text) */              \
        X(LANDLOCK_BLOCKED, "blocked at kernel: %s (%s, landlock)")                             \
        /* denials beyond the limit (unsigned long long), the limit (unsigned) */               \
        X(LANDLOCK_DROPPED, "%llu more refusals at kernel (landlock) were not recorded (limit of %u)") \
        /* what the jail's child reported instead of a Landlock ABI */                          \
        X(LANDLOCK_ABSENT, "landlock not in force: %s")                                         \
        /* whether Landlock's refusals are explained: at start-up and in each result */         \
        X(KAUDIT_ON, "kernel audit: on, landlock denials explained")                            \
        /* why not */                                                                           \
        X(KAUDIT_OFF, "kernel audit: off: landlock denials are refused but not explained (%s)") \
        /* what was missed */                                                                   \
        X(KAUDIT_INCOMPLETE, "kernel audit: on, but landlock denials may be missing here (%s)") \
        /* where Landlock is in force and its refusals are not explained: each run's trace (a  \
         * supervisor "not_explained" event), the probe's evidence and the start-up log. Why \
         * (KAUDIT_OFF's), then what would explain them: a KAUDIT_FIX_ */                       \
        X(KAUDIT_NOT_EXPLAINED, "landlock refusals are not explained (%s): %s")               \
        X(KAUDIT_FIX_ENABLE, "kernel_audit = on in the [supervisor] section of /etc/anvil/anvil.conf, or " \
                             "--enable-kernel-audit, switches audit on at start-up and explains them") \
        X(KAUDIT_FIX_READ, "the supervisor reads them as root with CAP_AUDIT_READ, as the installed "      \
                           "anvil-supervisor.service runs it (and kernel_audit = on in the [supervisor] "   \
                           "section of /etc/anvil/anvil.conf, or --enable-kernel-audit, switches audit on)") \
        X(KAUDIT_FIX_PANIC, "with the kernel audit's failure mode set to printk (auditctl -f 1), a restarted " \
                            "supervisor explains them")                                          \
        X(KAUDIT_FIX_NONE, "this kernel has no audit (CONFIG_AUDIT): nothing can explain them on it") \
        X(KAUDIT_FIX_RESTART, "a restarted supervisor explains them")                           \
        /* capabilities: name, then why (a POL_WHYS text) */                                    \
        X(CAP_DENIED, "capability %s denied: %s")                                               \
        X(CAP_GRANTED, "capability %s granted")                                                 \
        /* the kernel layers, explained by the supervisor: op ("socket(AF_INET, SOCK_STREAM)",  \
         * "execve('/bin/sh')"), why (a POL_WHYS text) */                                       \
        X(KERNEL_BLOCKED, "blocked at kernel: %s (%s)")                                         \
        X(KILLED_FOREIGN_ABI, "killed: a non-native syscall ABI (seccomp)")                     \
        /* refusals beyond the limit (unsigned long long), the limit (unsigned) */              \
        X(KERNEL_DROPPED, "%llu more refusals at kernel were not recorded (limit of %u)")    \
        /* the agent's tasks (broker/agent.c), each the task_result's error: */                 \
        /* the budget in seconds (unsigned long long) */                                        \
        X(TASK_TIME_BUDGET, "the task's time budget of %llu s ran out")                         \
        /* the step limit (unsigned long long) */                                               \
        X(TASK_STEP_LIMIT, "the step limit of %llu was reached before final_answer() was called") \
        /* the model client's one-line error */                                                 \
        X(TASK_MODEL_FAILED, "the model could not be used: %s")                                 \
        /* the error frame's code and message */                                                \
        X(TASK_SANDBOX_FAILED, "the sandbox could not carry out a run: %s: %s")                 \
        X(TASK_NO_DELIVERABLE, "no deliverable: no action ran to success and wrote an artifact") \
        /* the last failed action's run id, and its error line ("KeyError: 'amount'") */         \
        X(TASK_NO_DELIVERABLE_LAST, "no deliverable: no action ran to success and wrote an artifact; the last action (run %s) failed: %s") \
        /* who cancelled */                                                                     \
        X(TASK_CANCELLED, "cancelled by %s")                                                    \
        /* what went wrong */                                                                   \
        X(TASK_INTERNAL, "internal error: %s")                                                  \
        /* A task found at the broker's start with a trace and no result (broker/recover.c):   \
         * the TaskResult's error and the trace's last line. */                                 \
        X(TASK_INTERRUPTED, "the broker ended (killed or crashed) before the task did; marked when it started again") \
        /* the bytes of an unfinished last line, removed from the trace (unsigned long long) */ \
        X(TRACE_CUT, "the trace's last line, cut short when the broker ended, was removed (%llu bytes)") \
        /* The broker (broker/relay.c, store.c, agent.c). A run its stop cancelled at the      \
         * supervisor: the RunResult's killed, in place of the supervisor's KILLED_CANCELLED. */ \
        X(KILLED_BROKER_STOPPING, "killed: the broker is stopping")                             \
        /* a capability name that is none (pol_cap_unknown): where it was given ("--cap",     \
         * "task_submit.capabilities_approved"), the name as shown (pol_var_show), the names  \
         * there are, parted by ", " */                                                        \
        X(CAP_NOT_A_CAPABILITY, "%s: '%s' is not a capability (there are: %s)")                 \
        /* a capability's hosts (policy/cap_scope.c): where they were given, then as CAP_     \
         * NOT_A_CAPABILITY; the item as shown; CAP_SCOPE_TOO_MANY: the limit (unsigned), what */ \
        X(CAP_SCOPE_NOT_NETWORK, "%s: '%s' names hosts, and only network takes them")           \
        X(CAP_SCOPE_BAD, "%s: '%s' is not a host (a name, *.domain, an IPv4 address or [IPv6], each with " \
                         ":PORT or not) nor an address range (ADDRESS/PREFIX)")                 \
        X(CAP_SCOPE_TOO_MANY, "%s: more than %u %s")                                            \
        /* the broker's word on network (relay.c): the granted hosts parted by ", " */         \
        X(CAP_GRANTED_HOSTS, "capability network granted for %s")                               \
        /* anvil-egress's control connection ended before the run did (relay.c) */             \
        X(PROXY_GONE, "cut at proxy: the egress proxy ended during the run (its connections were cut; nothing " \
                      "more was reachable)")                                                     \
        /* A result sent to its client but not stored (run_result.not_stored,                  \
         * task_result.not_stored): the file (results/<run_id>.json), the system's error */     \
        X(NOT_STORED, "the broker could not store this result: %s could not be written (%s)")  \
        /* task_result.trace_incomplete: lines not written (unsigned long long), the system's  \
         * error for the first */                                                               \
        X(TRACE_INCOMPLETE, "the trace is incomplete: %llu of its lines could not be written (%s)") \
        /* What a client may read of the broker's store (broker/serve.c), each an error frame: \
         * "run" or "task", its id                                                              \
         * (STORE_NOT_FOUND: not_found; STORE_FORBIDDEN, STORE_NO_OWNER: forbidden) */          \
        X(STORE_NOT_FOUND, "no %s %s is stored here")                                           \
        X(STORE_FORBIDDEN, "%s %s belongs to another user")                                     \
        X(STORE_NO_OWNER, "%s %s was stored before the broker recorded whose results are: only root may read it") \
        /* an artifact's path as asked (cut), "run" or "task", its id: bad_request */           \
        X(ARTIFACT_NOT_OF, "'%s' is not an artifact of %s %s")                                  \
        /* the path, "run" or "task", its id, the system's error: not_found */                 \
        X(ARTIFACT_GONE, "'%s' of %s %s is no longer kept (%s)")                                \
        /* The broker cannot reach the supervisor (broker/relay.c's error frame "unavailable", \
         * and the broker's start-up warning): its socket's path, the system's error, a       \
         * SUP_HINT_ (lib/startup.c picks it by the error) */                                   \
        X(SUPERVISOR_UNREACHABLE, "cannot reach the supervisor at %s (%s): %s")                 \
        X(SUP_HINT_MISSING, "no socket is there: start anvil-supervisor (systemctl start anvil-supervisor), " \
                            "or give the broker the path it listens on (--supervisor)")          \
        X(SUP_HINT_REFUSED, "nothing listens on it, the supervisor has stopped: start anvil-supervisor " \
                            "(systemctl start anvil-supervisor)")                                \
        X(SUP_HINT_DENIED, "the broker's user may not connect: it must be in the socket's group " \
                           "(anvil-supervisor --socket-group)")                                  \
        X(SUP_HINT_OTHER, "is anvil-supervisor running there? (systemctl status anvil-supervisor)") \
        /* anvil-egress's (egress/proxy.c, layer proxy; docs/egress.md): the request ("CONNECT host:443"), then \
         * an address, a range's name, the resolver's or the system's error, a limit, bytes out and in */ \
        X(PROXY_HOST_NOT_APPROVED, "blocked at proxy: %s (host not approved)")                  \
        X(PROXY_PORT_NOT_APPROVED, "blocked at proxy: %s (port not approved)")                  \
        X(PROXY_IP_LITERAL, "blocked at proxy: %s (IP literal)")                                \
        X(PROXY_ADDRESS_RANGE, "blocked at proxy: %s (%s is a %s address)")                     \
        X(PROXY_RESOLVE, "blocked at proxy: %s (the name does not resolve: %s)")                \
        X(PROXY_CONNECT, "blocked at proxy: %s (cannot connect to %s: %s)")                     \
        X(PROXY_NOT_HTTP, "blocked at proxy: %s (only http:// requests and CONNECT are proxied)") \
        X(PROXY_MALFORMED, "blocked at proxy: malformed request (%s)")                          \
        X(PROXY_HEAD_TOO_LARGE, "blocked at proxy: the request head is larger than %u bytes")   \
        X(PROXY_HEAD_TIMEOUT, "blocked at proxy: the request head was not complete within %u s") \
        X(PROXY_CONN_CAP, "blocked at proxy: a connection past the run's limit of %u at once")  \
        X(PROXY_BYTES_CAP, "cut at proxy: %s (the run's limit of %llu bytes was reached)")      \
        X(PROXY_IDLE, "cut at proxy: %s (idle for %u s)")                                       \
        X(PROXY_LIFETIME, "cut at proxy: %s (open for %u s, the limit)")                        \
        X(PROXY_RUN_CLOSED, "cut at proxy: %s (the run's proxy was closed)")                    \
        X(PROXY_ALLOWED, "allowed at proxy: %s (%s): %llu bytes out, %llu bytes in")

/* Why an operation is refused: the second half of PRECHECK_BLOCKED and RUNTIME_BLOCKED, and
 * of CAP_DENIED. One list, asserted verbatim like the reasons. */
#define POL_WHYS(X)                                                                             \
        X(NETWORK, "network denied by policy")                                                  \
        X(NETWORK_CAP, "network denied by policy (capability not granted)")                     \
        /* a run granted network: anything but the proxy's relay */                             \
        X(NETWORK_EGRESS, "network only through the run's egress proxy (HTTP_PROXY, 127.0.0.1:3128)") \
        X(PROCESS, "process creation denied by policy")                                         \
        X(SIGNAL, "signals to other processes denied by policy")                                \
        X(DYNAMIC, "dynamic code execution denied by policy")                                   \
        X(INTROSPECTION, "introspection denied by policy")                                      \
        X(NATIVE, "native code denied by policy")                                               \
        X(UNPICKLE, "code execution through unpickling denied by policy")                       \
        X(READ, "read outside ALLOWED_READ_PATHS")                                              \
        X(WRITE, "write outside ALLOWED_WRITE_PATHS")                                           \
        X(LINK, "link pointing outside the jail's roots")                                       \
        /* the pre-check's own bound on a name (runner/precheck.c NAME_MAX_LEN) */               \
        X(NAME_LONG, "names over 255 bytes are not judged")                                     \
        /* a variable's name (variables in: refused; out: not kept), read after the name */    \
        X(VAR_NOT_IDENTIFIER, "is not a Python identifier")                                     \
        X(VAR_KEYWORD, "is a Python keyword")                                                   \
        X(VAR_PRIVATE, "starts with '_' (private and dunder names are not variables)")          \
        X(VAR_BUILTIN, "shadows a builtin")                                                     \
        X(VAR_NAME_LONG, "is a name longer than 128 bytes")                                     \
        /* what is not a value (variables out) */                                               \
        X(VAR_MODULE, "is a module, not a value (import it again)")                             \
        X(VAR_CALLABLE, "is a function or class, not a value (define it again)")                \
        /* Landlock's, by the kernel's blocker (policy/kaudit.c) */                             \
        X(LL_READ, "outside the jail's read roots")                                             \
        X(LL_WRITE, "outside the jail's write roots")                                           \
        X(LL_EXECUTE, "outside the jail's execute roots")                                       \
        X(LL_SPECIAL, "device nodes, fifos and socket files denied")                            \
        X(LL_IOCTL, "device ioctl denied")                                                      \
        X(LL_NETWORK, "network denied")                                                         \
        X(LL_SIGNAL, "signals out of the jail denied")                                          \
        X(LL_ABSTRACT_UNIX, "abstract unix sockets out of the jail denied")                     \
        X(LL_PTRACE, "tracing out of the jail denied")                                          \
        X(LL_TOPOLOGY, "mount changes denied")                                                  \
        X(CAP_NO_EGRESS, "the server grants no network until egress through the broker exists")  \
        X(CAP_EGRESS_DIRECT, "a direct-mode jail has no network namespace of its own to bind an egress socket into") \
        X(CAP_EGRESS_ROOTLESS, "a rootless supervisor grants no network: its jails' way to the egress proxy is built and tested under a root supervisor only") \
        X(CAP_NEVER, "never grantable")                                                         \
        X(CAP_NOT_APPROVED, "not approved")                                                     \
        X(CAP_UNKNOWN, "unknown capability")                                                    \
        /* network's hosts (policy/cap_scope.c, the broker) */                                  \
        X(CAP_NET_FORBIDDEN, "the server's configuration forbids network")                      \
        X(CAP_NO_HOSTS, "no host was approved for it")                                          \
        X(CAP_HOSTS_NOT_APPROVED, "none of the hosts asked for is approved")                    \
        X(CAP_EGRESS_NONE, "the server has no egress proxy configured")                         \
        X(CAP_EGRESS_DOWN, "the egress proxy cannot be reached")                                \
        X(CAP_EGRESS_REFUSED, "the egress proxy refused the run")                               \
        X(SECCOMP_NETWORK, "network denied by seccomp")                                         \
        X(SECCOMP_PROCESS, "process creation denied by seccomp")                                \
        X(SECCOMP_DEBUG, "access to other processes denied by seccomp")                         \
        X(SECCOMP_MOUNT, "mounting denied by seccomp")                                          \
        X(SECCOMP_NAMESPACE, "namespace changes denied by seccomp")                             \
        X(SECCOMP_KERNEL, "kernel interface denied by seccomp")                                 \
        X(SECCOMP_TTY, "terminal input injection denied by seccomp")                            \
        X(SECCOMP_ABI, "non-native syscall ABI denied by seccomp")

enum pol_why {
        POL_WHY_NONE = 0, /* allowed */
#define X(id, text) POL_WHY_##id,
        POL_WHYS(X)
#undef X
        _POL_WHY_MAX
};

const char *pol_why_text(enum pol_why w);

enum pol_reason {
#define X(id, fmt) POL_##id,
        POL_REASONS(X)
#undef X
        _POL_REASON_MAX
};

/* The format of a reason: for the catalog test, and for a reason of no argument compared or
 * shown as it is. A reason with arguments is formatted by POL_REASON alone (below). */
const char *pol_reason_format(enum pol_reason r);

/* ---- formatting, checked by the compiler ----
 * POL_REASON(buf, size, ID, args...) formats reason POL_ID into buf (cut to size, terminated)
 * and is buf. Its format reaches pol_format as a string literal, so -Wformat checks every
 * argument against it, and -Werror=format (the Makefile) makes a wrong type a compile error
 * (tests/e2e/t_catalog_checked.sh shows both ways). The id is a token, never a value: an id
 * chosen at run time is a branch of two calls, each checked.
 *
 * How an id becomes its literal without a #define per id (a macro cannot make one): the list
 * expands to a chain __builtin_choose_expr(want == POL_A, "A's format",
 * __builtin_choose_expr(want == POL_B, ..., "")), whose conditions are constants: the
 * compiler keeps the one literal chosen and checks the call against it. `want` is an enum
 * constant the statement expression around the call declares (POL_WITH_ID). */
#define POL__PICK_REASON(id, fmt) __builtin_choose_expr(pol__want == (int)POL_##id, fmt,
#define POL__PICK_STARTUP(id, fmt) __builtin_choose_expr(pol__want == (int)POL_STARTUP_##id, fmt,
#define POL__PICK_END(id, fmt) )
/* The format literals, valid inside POL_WITH_ID only. */
#define POL_REASON_FMT POL_REASONS(POL__PICK_REASON) "" POL_REASONS(POL__PICK_END)
#define POL_STARTUP_FMT POL_STARTUP(POL__PICK_STARTUP) "" POL_STARTUP(POL__PICK_END)
/* EXPR, with `pol__want` the constant VALUE; its value is EXPR's. */
#define POL_WITH_ID(VALUE, ...)                                                                 \
        ({                                                                                      \
                enum { pol__want = (int)(VALUE) };                                              \
                __VA_ARGS__;                                                                    \
        })

/* snprintf into buf, cut to size and terminated; returns buf. */
__attribute__((format(printf, 3, 4))) char *pol_format(char *buf, size_t size, const char *fmt, ...);

#define POL_REASON(buf, size, ID, ...) POL_WITH_ID(POL_##ID, pol_format((buf), (size), POL_REASON_FMT, ##__VA_ARGS__))

/* ---- the agent: every fixed sentence the model is shown ----
 * The catalog's list POL_AGENT_TEXTS, in policy/agent_texts.h: formatted by the broker alone
 * (broker/prompt.c), and kept out of this header for the same reason as the prose below. */


/* ---- what a result says in prose: the blast radius's lines, the probe's evidence ----
 * The catalog's list POL_PROSE, in policy/prose.h: formatted by the broker and anvilctl alone
 * (broker/render.c), and kept out of this header so that the root daemon, which includes
 * it, is not built from prose it never writes (scripts/root-loc.sh counts its headers). */

/* ---- the daemons' start-up (lib/startup.c): why a daemon does not start, one line each ----
 * Each names the path and the fix; the daemon logs it and exits 1 (a stale socket removed is
 * logged and start-up goes on). A list of its own, asserted verbatim by test_policy.c and by
 * tests/e2e/t_startup_errors.sh. "opt" is the option that gave the path ("--listen"). */
#define POL_STARTUP(X)                                                                          \
        /* opt, path, its directory (twice) */                                                  \
        X(SOCK_DIR_MISSING, "%s %s: the directory %s does not exist: create it (mkdir -p %s), or choose a path " \
                            "in one that does; installed, anvil-supervisor.service makes /run/anvil " \
                            "(RuntimeDirectory=anvil)")                                          \
        /* opt, path, the part of it that is not a directory */                                 \
        X(SOCK_DIR_NOT_DIR, "%s %s: %s is not a directory: choose a path in a directory")      \
        /* opt, path, its directory, uid (unsigned), the system's error */                      \
        X(SOCK_DIR_NOT_WRITABLE, "%s %s: uid %u cannot make a socket in %s (%s): make the directory writable " \
                                 "for it, or choose a path in another")                         \
        /* opt, path, the other daemon's pid (int, from SO_PEERCRED) */                         \
        X(SOCK_IN_USE, "%s %s: another daemon (pid %d) is listening there: stop it, or choose another path; its " \
                       "socket is left in place")                                               \
        /* opt, path */                                                                         \
        X(SOCK_IN_USE_BUSY, "%s %s: another daemon is listening there (its queue of connections is full, so its " \
                            "pid is unknown): stop it, or choose another path; its socket is left in place") \
        /* opt, path, what is there ("a regular file", "a directory", ...) */                   \
        X(SOCK_NOT_SOCKET, "%s %s: exists and is not a socket (it is %s): it is left in place; remove it, or " \
                           "choose another path")                                               \
        /* opt, path, the system's error of connect() */                                        \
        X(SOCK_UNCHECKABLE, "%s %s: a socket is there and cannot be checked (connect: %s): it is left in place; " \
                            "remove it if no daemon uses it, or choose another path")           \
        /* opt, path: logged, and start-up goes on */                                           \
        X(SOCK_STALE_REMOVED, "%s %s: a stale socket (nothing listens on it) was removed")      \
        /* the state directory, the directory above it that is missing (twice) */               \
        X(STATE_PARENT_MISSING, "--state-dir %s: the directory %s does not exist: create it (mkdir -p %s), or " \
                                "choose another; installed, the units make theirs below /var/lib/anvil " \
                                "(StateDirectory=)")                                            \
        /* the state directory, the part of it that is not a directory */                      \
        X(STATE_NOT_DIR, "--state-dir %s: %s is not a directory: choose another path")         \
        /* the state directory */                                                               \
        X(STATE_READ_ONLY, "--state-dir %s: its filesystem is read-only: choose a directory on a writable one") \
        /* the state directory, uid (unsigned), what failed ("mkdir"), the system's error */   \
        X(STATE_NOT_WRITABLE, "--state-dir %s: uid %u cannot write there (%s: %s): make it writable for that " \
                              "user, or choose another")                                        \
        /* the state directory, bytes free, inodes free, bytes needed (unsigned long long each) */ \
        X(STATE_FULL, "--state-dir %s: its filesystem is full (%llu bytes and %llu inodes free; start-up needs " \
                      "%llu bytes): free some space, or choose a directory on another filesystem") \
        /* the state directory, the jail uid (unsigned), the system's error */                 \
        X(STATE_NO_CHOWN, "--state-dir %s: a file there cannot be given to the jails' uid %u (chown: %s): choose " \
                          "a directory on a Unix filesystem (ext4, xfs, btrfs, tmpfs; not vfat), and run the " \
                          "supervisor as root outside any user namespace that lacks that uid")  \
        /* the state directory (twice) */                                                       \
        X(STATE_NOEXEC, "--state-dir %s: its filesystem is mounted noexec, and jails execute the runner and their " \
                        "pid 1 from %s/bin: choose a directory on a filesystem mounted without noexec") \
        /* what ("the runner anvil-py"), the path looked at, the system's error, a PROGRAM_HINT_ */ \
        X(PROGRAM_MISSING, "%s: %s: %s: build it (make), or install it (make install puts it in /usr/lib/anvil); %s") \
        /* what, the path, a PROGRAM_HINT_ */                                                   \
        X(PROGRAM_NOT_EXECUTABLE, "%s: %s is not an executable file: make it one (chmod 0755), or reinstall it; %s") \
        X(PROGRAM_HINT_RUNNER, "--runner PATH names another")                                   \
        X(PROGRAM_HINT_INIT, "it is looked for beside anvil-supervisor, then in /usr/lib/anvil")  \
        /* the broker: SUPERVISOR_UNREACHABLE's text (a warning; it serves on) */               \
        X(BROKER_NO_SUPERVISOR, "--supervisor: %s; serving anyway: each run and probe gets this error (unavailable) " \
                                "until the supervisor answers")

enum pol_startup {
#define X(id, fmt) POL_STARTUP_##id,
        POL_STARTUP(X)
#undef X
        _POL_STARTUP_MAX
};

const char *pol_startup_format(enum pol_startup m);

/* Formats start-up message POL_STARTUP_ID into buf, checked like POL_REASON. Is buf. */
#define POL_STARTUP_MSG(buf, size, ID, ...)                                                     \
        POL_WITH_ID(POL_STARTUP_##ID, pol_format((buf), (size), POL_STARTUP_FMT, ##__VA_ARGS__))
