/* The catalog of every reason string Anvil reports (DESIGN §5). One list: the enum, the
 * formats and the test that asserts each verbatim all come from it. A reason is never written
 * anywhere else; code refers to it by its id. */
#pragma once

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
        /* layer, evidence */                                                                   \
        X(REFUSED_NOT_IN_FORCE, "refused: %s not in force (%s)")                                \
        /* variables between an agent's steps (DESIGN §8, jail/runner/vars.c). A request's that \
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
        /* capabilities: name, then why (a POL_WHYS text) */                                    \
        X(CAP_DENIED, "capability %s denied: %s")                                               \
        X(CAP_GRANTED, "capability %s granted")                                                 \
        /* the kernel layers, explained by the supervisor: op ("socket(AF_INET, SOCK_STREAM)",  \
         * "execve('/bin/sh')"), why (a POL_WHYS text) */                                       \
        X(KERNEL_BLOCKED, "blocked at kernel: %s (%s)")                                         \
        X(KILLED_FOREIGN_ABI, "killed: a non-native syscall ABI (seccomp)")                     \
        /* refusals beyond the limit (unsigned long long), the limit (unsigned) */              \
        X(KERNEL_DROPPED, "%llu more refusals at kernel were not recorded (limit of %u)")

/* Why an operation is refused: the second half of PRECHECK_BLOCKED and RUNTIME_BLOCKED, and
 * of CAP_DENIED. One list, asserted verbatim like the reasons. */
#define POL_WHYS(X)                                                                             \
        X(NETWORK, "network denied by policy")                                                  \
        X(NETWORK_CAP, "network denied by policy (capability not granted)")                     \
        X(PROCESS, "process creation denied by policy")                                         \
        X(SIGNAL, "signals to other processes denied by policy")                                \
        X(DYNAMIC, "dynamic code execution denied by policy")                                   \
        X(INTROSPECTION, "introspection denied by policy")                                      \
        X(NATIVE, "native code denied by policy")                                               \
        X(UNPICKLE, "code execution through unpickling denied by policy")                       \
        X(READ, "read outside ALLOWED_READ_PATHS")                                              \
        X(WRITE, "write outside ALLOWED_WRITE_PATHS")                                           \
        X(LINK, "link pointing outside the jail's roots")                                       \
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
        X(CAP_NEVER, "never grantable")                                                         \
        X(CAP_NOT_APPROVED, "not approved")                                                     \
        X(CAP_UNKNOWN, "unknown capability")                                                    \
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

/* The format of a reason, for the catalog test and for callers that format it. */
const char *pol_reason_format(enum pol_reason r);

/* Formats reason r into buf. Returns buf. */
char *pol_reason(char *buf, size_t size, enum pol_reason r, ...);
