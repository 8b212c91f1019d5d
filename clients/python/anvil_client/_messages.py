"""Every text the Python client writes itself (in the caller's process, as the caller), in
one place: Anvil's own messages, which the broker sends in error frames and results, come
from policy/reasons.h and are passed on verbatim. Each is a str.format template; the tests
assert them verbatim."""

# Reaching the broker.
UNREACHABLE = "cannot reach Anvil at {path}: {why} (is anvil-broker running? pass socket= or set ANVIL_SOCKET)"
CLOSED = "the broker closed the connection before {what} ended"
CLOSED_WHILE_SENDING = "the broker closed the connection before it took {what}"
TIMED_OUT = "no frame from the broker in {secs} s while waiting for {what}"

# The wire (what the broker sent is not the protocol).
MAP_KEY_NOT_STRING = "a map key is not a string"
DUPLICATE_KEY = "the key '{key}' appears twice in a map"
TOO_DEEP = "the frame nests deeper than {limit} levels"
NOT_MSGPACK = "the frame is not msgpack: {why}"
NOT_A_MAP = "the frame is not a msgpack map"
BAD_VERSION = "unsupported protocol version {v!r}"
NO_TYPE = "the frame has no type"
BAD_FRAME_LENGTH = "a frame of {n} bytes (the bound is 1..{max})"
TRUNCATED_FRAME = "the broker closed the connection inside a frame ({have} of its {want} bytes)"
FIELD = "{path}: {why}"
EXPECTED = "expected {want}, got {got}"
STRING_OVER = "string of {n} bytes is over the limit of {max}"
STRING_NUL = "string contains NUL"
BYTES_OVER = "{n} bytes is over the limit of {max}"
VALUE_OVER = "{v} is over the limit of {max}"
LIST_OVER = "{n} items is over the limit of {max}"
UNKNOWN_FIELD = "unknown field"
MISSING_FIELD = "missing required field"
UNEXPECTED_TYPE = "unexpected {type} from the broker"
UNEXPECTED_IN = "unexpected {type} from the broker during {what}"
OTHER_REQUEST = "a {type} for request '{got}' during {what} (request '{want}')"

# The request, checked before anything is sent (ValueError / TypeError).
FRAME_TOO_LARGE = "the {what} does not fit in one frame: {n} bytes, over {max}"
TOO_MANY_FDS = "{n} file descriptors with one frame, over the limit of {max}"
SHORT_SEND = "the frame's first bytes were not sent whole with its file descriptors"
INPUT_TYPE = "input {name!r}: expected a path, bytes, an open file or an fd, got {got}"
INPUT_NO_NAME = "an input of bytes or an fd needs a name: pass a dict {{name: value}} or a (name, value) pair"
INPUT_OPEN = "input {path}: cannot open it: {why}"
INPUT_KIND = "input {path}: not a regular file or a directory"
INPUTS_MAX = "{n} inputs, over the limit of {max}"
TASK_INPUT_FD = "input {name!r}: a task's inputs travel as bytes: pass a path or bytes"
LIMIT_UNKNOWN = "limits: unknown limit {name!r} (known: {known})"
LIMIT_VALUE = "limits.{name}: expected a positive whole number, got {v!r}"
NOT_JSON_OBJECT = "variables: expected a dict that JSON can hold: {why}"
STRINGS = "{what}: expected a list of strings"
CAP_UNKNOWN = "caps: {name!r} is not a capability (there are: {known})"

# Artifacts copied out.
ARTIFACT_MISMATCH = "artifact {path!r} of {id}: {what} (received {got}, {side} {want})"
ARTIFACT_PATH = "artifact {path!r} of {id}: not a relative path below the directory (refused to write it)"
ARTIFACT_NO_END = "the artifact copy ended without its artifact_end"
NOT_A_RUN = "{id} is not a run: show() answered with a {type}"

# The smolagents executor.
EXEC_TOOL = ("AnvilExecutor runs each code action in an Anvil jail, where a tool would run without "
             "its host's network or files: {names} cannot be sent (pass tools=[]; final_answer is "
             "Anvil's own builtin)")
EXEC_VARIABLE = "send_variables: {name!r} {why}"
EXEC_FAILED = "Code execution failed: {status}"
EXEC_REFUSAL = "{layer}: {message}{where}"
EXEC_LINE = " (line {line})"
