# A fork bomb is contained (pids limit, its own pid namespace), leaves no process behind on
# the host, and the next run succeeds.
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"
tool bomb.py <<'PY'
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
PY
bare_json "$T/bomb.py" --timeout 5
status=$(j .status)
[ "$status" = killed ] || [ "$status" = error ] || fail "fork bomb status $status"
echo "ok: fork bomb ended: $status $(j .killed) in $(j .wall_ms) ms"
# None of the jail's processes may survive the run.
left=$(jail_procs_left)
expect_eq "jail processes left on the host" 0 "$left"
expect_serving
