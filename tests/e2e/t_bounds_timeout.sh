# Connections held for nothing are closed, with an error frame that says why (issue 9, F4):
# one idle with nothing in flight (--idle-timeout), one with a frame begun and not completed
# (--frame-timeout), on the broker and on the supervisor, each with a small timeout. A
# connection waiting for a run longer than the idle timeout is not idle: the run completes.
# Each wait is bounded (conntool await gives up after 30 s); the times are printed, not
# asserted.
. "$(dirname "$0")/lib.sh"
IDLE="the connection was idle for 2 s with no request in flight and the %s has closed it (--idle-timeout); connect again to send a request"
FRAME="message: a frame was begun and not completed within 2 s and the %s has closed the connection (--frame-timeout); send each frame whole"

# check DAEMON SOCKET: idle connections and unfinished frames of uid 65534, each closed with its error
check() {
        local daemon=$1 sock=$2 out
        out=$(as_uid 65534 "$CONNTOOL" "$sock" await 2 0 30) || fail "$daemon: idle connections not closed: $out"
        echo "    $daemon idle: $(tail -1 <<<"$out")"
        expect_eq "$daemon: idle connections, closed with the error" "2 error code=busy message=$(printf "$IDLE" "$daemon")" \
                "$(sed -n 2p <<<"$out")"
        out=$(as_uid 65534 "$CONNTOOL" "$sock" await 2 5000 30) || fail "$daemon: unfinished frames not closed: $out"
        echo "    $daemon unfinished frame: $(tail -1 <<<"$out")"
        expect_eq "$daemon: unfinished frames, closed with the error" \
                "2 error code=bad_frame message=$(printf "$FRAME" "$daemon")" "$(sed -n 2p <<<"$out")"
}

start_bro bro --idle-timeout 2 --frame-timeout 2
check broker "$T/bro.sock"
tool sleep.py <<'PY'
import time
time.sleep(5)
print("slept through the idle timeout")
PY
ANVIL_SOCKET="$T/bro.sock" run_json "$T/sleep.py"
expect_eq "broker: a run longer than the idle timeout" "ok slept through the idle timeout" "$(j '"\(.status) \(.stdout)"' | head -1)"
grep -q 'idle for 2 s, closing' "$T/bro.log" || fail "the broker's log does not say it closed idle connections"

# This test's supervisors run as root in both passes: they open their sockets to another
# uid's group (65534), which only root may give a socket.
SUP_WRAP=()
start_sup sup 340000200 --max-runs 2 --spares 0 --idle-timeout 2 --frame-timeout 2 --allow-uid 65534 --socket-group 65534
check supervisor "$T/sup.sock"
ANVIL_SOCKET="$T/sup.sock" run_json "$T/sleep.py"
expect_eq "supervisor: a run longer than the idle timeout" "ok slept through the idle timeout" \
        "$(j '"\(.status) \(.stdout)"' | head -1)"
expect_serving
