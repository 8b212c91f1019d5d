# The broker's faults (issue 9, deliverable 5), each against a broker of this test's own, the
# suite's supervisor and scripted model servers on 127.0.0.1:
#   kill -9 of the broker mid-task (its second action running): the supervisor ends the run
#       (its connection closed, no jail process is left); the broker restarted on the same
#       state dir marks the task interrupted: its TaskResult stored (status "interrupted",
#       the catalog's reason, the first action as its step), its trace byte for byte what it
#       was at the kill plus an "end" line saying so, and `anvilctl trace` replays it. A
#       trace cut in the middle of a line (written here, as a kill in the middle of a write
#       leaves it) loses that unfinished line, and its end says so
#   a model that hangs, either never answering or answering its headers and stalling: the
#       task ends with the model timeout's message (--model-timeout 2), no run is left, and
#       the broker serves another client meanwhile
#   a client gone mid-stream (anvilctl submit killed with SIGKILL while an action runs): the
#       task is cancelled, its result stored, its run ended
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"

SLOW='import time\nprint("the slow action", flush=True)\ntime.sleep(60)\n'
model_script kill <<PY
[code('x = 6 * 7\nprint(x)\n'), code('$SLOW')]
PY
model_script gone <<PY
[code('$SLOW')]
PY
model_script hang <<'PY'
[{"delay_s": 120}]
PY
model_script stall <<'PY'
[{"stall_s": 120}]
PY
for s in kill gone hang stall; do start_model "$s"; done
printf 'a,b\n1,2\n' >"$T/in.csv"
# task NAME: $T/NAME.task.json, naming the server NAME
task() {
        printf '{"task": "task %s", "inputs": ["in.csv"], "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' \
                "$1" "$(cat "$T/logs/$1.port")" >"$T/$1.task.json"
}
for s in kill gone hang stall; do task "$s"; done

# start_broker [options...]: a broker on $T/b.sock with its state in $T/b (the same each
# time), its log appended to $T/b.log; its pid in BRO.
start_broker() {
        local before
        before=$(grep -c ": listening on " "$T/b.log" 2>/dev/null)
        "$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/b.sock" --state-dir "$T/b" "$@" \
                >>"$T/b.log" 2>&1 &
        BRO=$!
        OWN_PIDS+=("$BRO")
        for _ in $(seq 100); do
                [ "$(grep -c ": listening on " "$T/b.log")" -gt "${before:-0}" ] && return
                sleep 0.1
        done
        fail "the broker did not start: $(tail -5 "$T/b.log")"
}
export ANVIL_SOCKET="$T/b.sock"
# runs_started: how many runs the supervisor has started for this broker
runs_started() { grep -c ": started for client pid $BRO " "$ANVIL_E2E_STATE/supervisor.log"; }
# action_running ID N: until the task's trace shows its slow action last and the supervisor
# has started N runs for this broker (the describe run and each action): the slow action's
# run is live.
action_running() {
        local f="$T/b/traces/$1.jsonl"
        for _ in $(seq 200); do
                [ "$(runs_started)" -ge "$2" ] &&
                        [ "$(jq -r 'select(.kind == "code") | .code' "$f" 2>/dev/null | tail -3 | grep -c "the slow action")" = 1 ] &&
                        return
                sleep 0.1
        done
        fail "task $1: its slow action did not start: $(tail -3 "$f")"
}
no_jail_left() { # WHAT
        for _ in $(seq 100); do [ "$(sup_jail_procs_left)" = 0 ] && break; sleep 0.1; done
        expect_eq "$1: jail processes left" 0 "$(sup_jail_procs_left)"
}

# ---- kill -9 of the broker mid-task ----
start_broker
"$CTL" submit "$T/kill.task.json" >"$T/kill.human" 2>&1 &
C=$!
for _ in $(seq 100); do [ -n "$(task_id_of "$T/kill.human")" ] && break; sleep 0.1; done
id=$(task_id_of "$T/kill.human")
[ -n "$id" ] || fail "kill: no task id: $(cat "$T/kill.human")"
action_running "$id" 3
[ "$(sup_jail_procs_left)" -ge 1 ] || fail "kill: the running action's jail is not seen (the control of the count)"
echo "ok: kill: the running action's jail processes are seen (the control)"
kill -KILL "$BRO"
wait "$BRO" 2>/dev/null
wait "$C"
expect_eq "kill: anvilctl's exit (the connection broke)" 126 "$?"
no_jail_left "kill: the supervisor ended the task's run"
[ ! -e "$T/b/tasks/$id.json" ] || fail "kill: a result before the restart"
cp "$T/b/traces/$id.jsonl" "$T/kill.trace"
expect_eq "kill: the trace at the kill: the slow action, not ended" "code|" \
        "$(jq -rs '[.[].kind] as $k | ($k | rindex("code")) as $c | "code|" + ($k[$c + 1:] | map(select(. == "run_result" or . == "end")) | join(","))' "$T/kill.trace")"
start_broker
REASON="the broker ended (killed or crashed) before the task did; marked when it started again"
R="$T/b/tasks/$id.json"
[ -f "$R" ] || fail "kill: no result after the restart: $(tail -5 "$T/b.log")"
expect_eq "kill: the stored result" "interrupted|$REASON" "$(jq -r '.status + "|" + .error' "$R")"
first_run=$(jq -r 'select(.kind == "run_result") | .run_id' "$T/kill.trace" | head -1)
expect_eq "kill: its step, the first action" "$first_run|x = 6 * 7" "$(jq -r '.steps[0].run.run_id + "|" + (.steps[0].code | split("\n")[0])' "$R")"
expect_eq "kill: one step (the action in flight had no result)" 1 "$(jq '.steps | length' "$R")"
expect_eq "kill: no deliverable" null "$(jq -r .deliverable "$R")"
size=$(stat -c %s "$T/kill.trace")
cmp -s "$T/kill.trace" <(head -c "$size" "$T/b/traces/$id.jsonl") || fail "kill: the trace was changed before its end"
echo "ok: kill: the trace is intact up to the kill"
expect_eq "kill: one line added" $(($(wc -l <"$T/kill.trace") + 1)) "$(wc -l <"$T/b/traces/$id.jsonl")"
expect_eq "kill: the trace's end" "end|interrupted|interrupted: $REASON" \
        "$(tail -1 "$T/b/traces/$id.jsonl" | jq -r '.kind + "|" + .status + "|" + .message')"
grep -q "task $id: interrupted (the broker ended before it did): its trace ended, its result stored with 1 steps" "$T/b.log" ||
        fail "kill: the log does not say so: $(tail -5 "$T/b.log")"
"$CTL" trace "$id" >"$T/kill.replay" 2>&1 || fail "kill: anvilctl trace exited $?: $(tail -3 "$T/kill.replay")"
grep -qxF "end: interrupted: $REASON" "$T/kill.replay" || fail "kill: the replay lacks the end: $(tail -5 "$T/kill.replay")"
grep -qxF "trace_end: $(wc -l <"$T/b/traces/$id.jsonl") lines replayed" "$T/kill.replay" ||
        fail "kill: the replay's count: $(tail -2 "$T/kill.replay")"
echo "ok: kill: anvilctl trace replays it, to its end"
# The restarted broker serves.
tool hello.py <<<'print("still serving")'
run_json "$T/hello.py"
expect_eq "kill: the restarted broker runs" "ok|still serving" "$(j '.status + "|" + (.stdout | rtrimstr("\n"))')"
# A second start changes nothing: the task has its result.
kill -TERM "$BRO"
wait "$BRO"
cp "$T/b/traces/$id.jsonl" "$T/kill.trace2"
start_broker
cmp -s "$T/kill.trace2" "$T/b/traces/$id.jsonl" || fail "kill: a second start changed the trace"
echo "ok: kill: a second start leaves an interrupted task as it is"

# The same, the kill in the middle of a line's write: its unfinished bytes are removed.
kill -KILL "$BRO"
wait "$BRO" 2>/dev/null
cut="$T/b/traces/task-20260101T000000000000-0123456789abcdef.jsonl"
head -3 "$T/kill.trace" | jq -c '.task_id = "task-20260101T000000000000-0123456789abcdef"' >"$cut"
printf '{"t_ms":123,"step":1,"kind":"model_re' >>"$cut" # 37 bytes, no newline
cp "$cut" "$T/cut.trace"
start_broker
cid=task-20260101T000000000000-0123456789abcdef
expect_eq "cut: the stored result" "interrupted" "$(jq -r .status "$T/b/tasks/$cid.json")"
cmp -s <(head -3 "$T/cut.trace") <(head -3 "$cut") || fail "cut: the whole lines were changed"
expect_eq "cut: the unfinished line is gone, the end follows the whole lines" 4 "$(wc -l <"$cut")"
expect_eq "cut: the end says so" \
        "interrupted: $REASON; the trace's last line, cut short when the broker ended, was removed (37 bytes)" \
        "$(tail -1 "$cut" | jq -r .message)"

# ---- a model that hangs ----
kill -TERM "$BRO"
wait "$BRO"
# (the timeout is the broker's setting, which needs a model of its own: the hang server; each
# task names its server all the same)
start_broker --model-url "http://127.0.0.1:$PORT_hang/v1" --model scripted --model-timeout 2
for s in hang stall; do
        "$CTL" submit "$T/$s.task.json" --json >"$T/$s.json" 2>"$T/$s.err" &
        C=$!
        wait_asked "$s"
        # Meanwhile, another client is served.
        run_json "$T/hello.py"
        expect_eq "$s: another client's run meanwhile" ok "$(j .status)"
        kill -0 "$C" 2>/dev/null || fail "$s: the task ended before the other client's run did: $(cat "$T/$s.err")"
        wait "$C"
        expect_eq "$s: anvilctl submit's exit (the task failed)" 120 "$?"
        expect_eq "$s: the task" "failed|the model could not be used: the model server did not answer within 2 s" \
                "$(jq -r '.status + "|" + .error' "$T/$s.json")"
        no_jail_left "$s"
done

# ---- a client gone mid-stream: anvilctl killed while an action runs ----
before=$(runs_started)
"$CTL" submit "$T/gone.task.json" >"$T/gone.human" 2>&1 &
C=$!
for _ in $(seq 100); do [ -n "$(task_id_of "$T/gone.human")" ] && break; sleep 0.1; done
gid=$(task_id_of "$T/gone.human")
[ -n "$gid" ] || fail "gone: no task id: $(cat "$T/gone.human")"
action_running "$gid" $((before + 2))
[ "$(sup_jail_procs_left)" -ge 1 ] || fail "gone: the running action's jail is not seen (the control of the count)"
kill -KILL "$C"
wait "$C" 2>/dev/null
for _ in $(seq 100); do [ -f "$T/b/tasks/$gid.json" ] && break; sleep 0.1; done
expect_eq "gone: stored as cancelled" "cancelled|cancelled by the client's disconnection" \
        "$(jq -r '.status + "|" + .error' "$T/b/tasks/$gid.json" 2>/dev/null)"
expect_eq "gone: the trace's end" "end|cancelled" "$(tail -1 "$T/b/traces/$gid.jsonl" | jq -r '.kind + "|" + .status')"
no_jail_left "gone: its run ended"
run_json "$T/hello.py"
expect_eq "gone: the broker goes on" ok "$(j .status)"
grep -q "request #[0-9]*: ended after [0-9]* ms: abandoned, its task has ended" "$T/b.log" ||
        fail "gone: the log does not say the run was abandoned: $(tail -5 "$T/b.log")"
