# A client gone mid-stream (issue 9, "faults as tests"): it closes its connection to the
# suite's broker while its run streams events. The broker abandons the request and closes its
# supervisor connection, the supervisor kills the run ("killed: cancelled"), no process of
# the jail is left, and the broker's fds are back to what they were; it goes on serving.
. "$(dirname "$0")/lib.sh"
tool stream.py <<'PY'
import time
try:
    open("/etc/shadow")
except BaseException as e:
    print(type(e).__name__)
time.sleep(60)
PY
expect_serving
fds0=$(n_fds "$ANVIL_E2E_BRO_PID")
SUPLOG="$ANVIL_E2E_STATE/supervisor.log"
out=$("$CONNTOOL" "$ANVIL_SOCKET" gone "$T/stream.py") || fail "conntool: $out"
RID=${out#run_event run_id=}
expect_match "the run streamed an event, then the client went" '^run_event run_id=[0-9A-Za-z_-]+$' "$out"
for _ in $(seq 100); do
        grep -q "run $RID: .*killed: cancelled" "$SUPLOG" && break
        sleep 0.1
done
grep -q "run $RID: .*killed: cancelled" "$SUPLOG" || fail "the supervisor did not cancel run $RID: $(grep "$RID" "$SUPLOG")"
echo "ok: the supervisor cancelled the run: $(grep "run $RID: .*killed" "$SUPLOG" | tail -1)"
grep -q "abandoned, the client has gone" "$ANVIL_E2E_STATE/broker.log" || fail "the broker's log does not say the client went"
for _ in $(seq 100); do
        [ "$(jail_procs_left)" = 0 ] && [ "$(n_fds "$ANVIL_E2E_BRO_PID")" -le "$fds0" ] && break
        sleep 0.1
done
expect_eq "jail processes left" 0 "$(jail_procs_left)"
expect_eq "the broker's fds" "$fds0" "$(n_fds "$ANVIL_E2E_BRO_PID")"
expect_serving
