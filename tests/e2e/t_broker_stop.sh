# Stopping the broker (SIGTERM), issue 9's F7: a client's run in flight is cancelled at the
# supervisor, and its result, with the reason "killed: the broker is stopping" and what the
# tool printed before, is stored and reaches the client, which exits 0; the broker exits 0,
# and its log says what it did and never that the client had gone. A broker of this test's
# own, against the suite's supervisor.
# Then, against a supervisor that takes a request and never answers (a socket of this test's
# that accepts and reads nothing, standing for a stuck supervisor), a stop that cannot
# complete: a second SIGTERM ends it at once (exit 0, the client told, the log says so); and
# with a single SIGTERM, the stop's grace of 10 s ends it by itself. The control of both: the
# broker is still there, waiting for the result, a second after the first SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh" # sup_jail_procs_left

# start_broker NAME SUPERVISOR_SOCKET: its socket $T/NAME.sock, state $T/NAME, log $T/NAME.log;
# its pid in BRO.
start_broker() {
        "$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$2" --listen "$T/$1.sock" --state-dir "$T/$1" >"$T/$1.log" 2>&1 &
        BRO=$!
        OWN_PIDS+=("$BRO")
        for _ in $(seq 100); do [ -S "$T/$1.sock" ] && return; sleep 0.1; done
        fail "the broker $1 did not start: $(cat "$T/$1.log")"
}
# wait_gone PID SECONDS: until PID has exited; its exit status in GONE_RC.
wait_gone() {
        timeout "$2" tail --pid="$1" -f /dev/null || fail "pid $1 did not exit within $2 s"
        wait "$1"
        GONE_RC=$?
}

tool slow.py <<'PY'
import sys, time
print("before the stop")
sys.stdout.flush()
time.sleep(30)
PY

# ---- a run in flight, SIGTERM: the result is delivered ----
start_broker b "$ANVIL_SUP_SOCKET"
ANVIL_SOCKET="$T/b.sock" "$CTL" run "$T/slow.py" --timeout 60 --json >"$T/result.json" 2>"$T/ctl.err" &
C=$!
# The run is live at the supervisor once it has started it for this broker's connection.
for _ in $(seq 150); do
        grep -q ": started for client pid $BRO " "$ANVIL_E2E_STATE/supervisor.log" && break
        sleep 0.1
done
grep -q ": started for client pid $BRO " "$ANVIL_E2E_STATE/supervisor.log" || fail "the run did not start: $(cat "$T/b.log")"
sleep 1 # the tool prints
kill -TERM "$BRO"
wait "$C"
expect_eq "anvilctl's exit status (a run carried out to its result: killed by Anvil)" 121 "$?"
wait_gone "$BRO" 20
expect_eq "the broker's exit status" 0 "$GONE_RC"
expect_eq "the run's status" killed "$(j .status)"
expect_eq "the run's reason" "killed: the broker is stopping" "$(j .killed)"
expect_eq "what the tool printed before the stop" "before the stop" "$(j .stdout | head -1)"
expect_eq "not_stored" null "$(j .not_stored)"
id=$(j .run_id)
f="$T/b/results/$id.json"
[ -f "$f" ] || fail "the result is not stored: $f (results/: $(ls "$T/b/results"))"
cmp -s <(jq -S . "$f") <(jq -S . "$T/result.json") || fail "the stored result differs from what the client got"
echo "ok: results/$id.json is stored, equal to what the client got"
grep -q "signal 15: stopping: each run in flight is cancelled at the supervisor" "$T/b.log" ||
        fail "the log does not say how it stops: $(cat "$T/b.log")"
grep -q "stopping: 1 requests in flight" "$T/b.log" || fail "the log does not count the run in flight"
grep -q "cancel of run $id sent to (the broker is stopping) the supervisor" "$T/b.log" ||
        fail "the log does not say the run was cancelled: $(cat "$T/b.log")"
grep -q "ended after [0-9]* ms: run_result killed, killed: the broker is stopping, run $id" "$T/b.log" ||
        fail "the log does not say how the request ended: $(cat "$T/b.log")"
if grep -q "the client has gone" "$T/b.log"; then fail "the log says the client had gone: $(cat "$T/b.log")"; fi
echo "ok: the log says what happened, and not that the client had gone"
[ ! -e "$T/b.sock" ] || fail "the broker's socket was left behind"
for _ in $(seq 100); do [ "$(sup_jail_procs_left)" = 0 ] && break; sleep 0.1; done
expect_eq "jail processes left" 0 "$(sup_jail_procs_left)"

# ---- a supervisor that never answers: the stop cannot complete ----
cat >"$T/stuck.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(16)
held = []
while True:
    c, _ = s.accept()
    held.append(c)  # never read, never answered, never closed
PY
"$PY" "$T/stuck.py" "$T/stuck.sock" >"$T/stuck.out" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 100); do [ -S "$T/stuck.sock" ] && break; sleep 0.1; done
[ -S "$T/stuck.sock" ] || fail "the stuck supervisor did not start: $(cat "$T/stuck.out")"

# stuck_run NAME: a broker NAME against it, with a run in flight (sent, never answered).
stuck_run() {
        start_broker "$1" "$T/stuck.sock"
        ANVIL_SOCKET="$T/$1.sock" "$CTL" run "$T/slow.py" >"$T/$1.ctl.out" 2>"$T/$1.ctl.err" &
        C=$!
        for _ in $(seq 100); do grep -q "request #1: run_request .*, started" "$T/$1.log" && break; sleep 0.1; done
        sleep 0.5 # connected and sent
        kill -TERM "$BRO"
        sleep 1
        kill -0 "$BRO" 2>/dev/null || fail "$1: the broker did not wait for the run's result: $(cat "$T/$1.log")"
        echo "ok: $1: a second after SIGTERM the broker still waits for the result (the control)"
        grep -q "request #1: to be cancelled (the broker is stopping) once the supervisor names the run" "$T/$1.log" ||
                fail "$1: the log does not say the run waits to be cancelled: $(cat "$T/$1.log")"
}

stuck_run again
kill -TERM "$BRO"
wait_gone "$BRO" 5
expect_eq "a second SIGTERM: the broker's exit status" 0 "$GONE_RC"
grep -q "stopping at once: signal 15 again; 1 requests in flight abandoned" "$T/again.log" ||
        fail "a second SIGTERM: the log does not say so: $(cat "$T/again.log")"
wait "$C"
expect_eq "a second SIGTERM: anvilctl's exit (an error frame)" 123 "$?"
expect_eq "a second SIGTERM: the client is told" \
        "anvilctl: unavailable: The broker stopped before this request ended (signal 15 again)" "$(cat "$T/again.ctl.err")"

stuck_run grace
wait_gone "$BRO" 20
expect_eq "the grace ran out: the broker's exit status" 0 "$GONE_RC"
grep -q "stopping at once: the stop's grace of 10 s ran out; 1 requests in flight abandoned" "$T/grace.log" ||
        fail "the grace ran out: the log does not say so: $(cat "$T/grace.log")"
wait "$C"
expect_eq "the grace ran out: the client is told" \
        "anvilctl: unavailable: The broker stopped before this request ended (the stop's grace of 10 s ran out)" \
        "$(cat "$T/grace.ctl.err")"
