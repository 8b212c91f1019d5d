# The supervisor's notes at a run's end (a kill, cut output, the artifacts' bounds) are in the
# result however many events the tool caused before: they have places of their own that
# nothing during the run may take (SUP_RESULT_NOTES, supervisor/run.h). The tool floods the
# trace two ways, 300 events of its own on fd 3 (the runner's events pipe, whose frames are the
# tool's word once it has started) and 300 socket() calls seccomp refuses, then leaves 10 links
# in artifacts, prints 3 MiB and sleeps into the wall clock. Today's build filled every place
# with the flood and left these notes out, counted among "N more events were not recorded".
# Against the supervisor with the Python layers off, so that each socket() reaches seccomp.
. "$(dirname "$0")/lib.sh"
tool flood.py <<'PY'
import os, socket, sys, time
def s(b):
    b = b.encode()
    return bytes([0xa0 | len(b)]) + b
ev = bytes([0x84]) + s("t_ms") + bytes([0]) + s("layer") + s("python") + s("kind") + s("note") + s("message") + s("x")
body = bytes([0x83]) + s("v") + bytes([1]) + s("type") + s("runner_event") + s("event") + ev
frame = len(body).to_bytes(4, "big") + body
for _ in range(300):
    os.write(3, frame)
for _ in range(300):
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        pass
for i in range(10):
    os.symlink("/etc/passwd", f"artifacts/l{i}")
sys.stdout.write("y" * (3 * 1024 * 1024))
sys.stdout.flush()
time.sleep(30)
PY
bare_json "$T/flood.py" --timeout 4
expect_eq "status" killed "$(j .status)"
expect_eq "within the protocol's 256 events" true "$(j '.events | length <= 256')"
expect_eq "the flood was cut and counted" events_dropped "$(j '.events[-1].kind')"
expect_eq "the kill, in the trace" "killed: timeout" "$(j '.events[] | select(.kind == "killed") | .message')"
expect_eq "the cut output, in the trace" "stdout truncated: kept the first 1048576 of 3145728 bytes" \
        "$(j '.events[] | select(.kind == "truncated") | .message')"
expect_eq "the links, each noted" 10 "$(j '[.events[] | select(.kind == "artifact_skipped")] | length')"
expect_eq "a link's note" "artifact 'l0' is not a regular file and is not listed" \
        "$(j '.events[] | select(.kind == "artifact_skipped" and .op == "l0") | .message')"
