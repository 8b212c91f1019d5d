# A fork bomb is contained (pids limit, its own pid namespace), the forks the limit refused
# are counted by the kernel and reported, no process is left behind on the host, and the next
# run succeeds.
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
# The pids limit refused the forks, and the kernel counted them (pids.events max): the count
# is in the result and in the trace; processes never went past the limit read back.
expect_eq "the pids limit, read back" 64 "$(j .blast_radius.limits.pids)"
refused=$(j .cgroup.forks_refused)
if [ "$(j .cgroup)" = null ] || [ "$refused" = null ]; then
        echo "skip: no pids cgroup here: refused forks are not counted ($(j .isolation.mechanisms))"
else
        [ "$refused" -ge 1 ] || fail "forks refused: $refused, expected at least 1"
        expect_eq "the trace says so" "$refused forks refused at the limit of 64 processes and threads" \
                "$(j '.events[] | select(.layer == "cgroup" and .kind == "refused") | .message')"
        expect_eq "the refusals' op" fork "$(j '.events[] | select(.layer == "cgroup" and .kind == "refused") | .op')"
        peak=$(j .cgroup.pids_peak)
        [ "$peak" = null ] || [ "$peak" -le 64 ] || fail "processes peaked at $peak, over the limit of 64"
        echo "ok: processes peaked at $peak"
fi
# None of the jail's processes may survive the run.
left=$(jail_procs_left)
expect_eq "jail processes left on the host" 0 "$left"
expect_serving
