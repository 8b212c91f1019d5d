# The broker's state directory full (issue 9, F2's broker half): a broker of this test's own
# with its state dir on a small tmpfs below $T (mounted here, as root, and unmounted at the
# end), against the suite's supervisor and a scripted model server.
#   full: a run's result still reaches its client, which is told it was not stored
#       (run_result.not_stored, verbatim; "note: ..." in the human output); a task's result
#       likewise (task_result.not_stored), and it says its trace is incomplete
#       (trace_incomplete), as does each of its runs; no file of either is left, whole or
#       half (no results/<run_id>.json, no tasks/<task_id>.*, no temporary file); the broker
#       stays up
#   nearly full: a result larger than the space left is begun and fails: its temporary file
#       is removed, the client told (the control: a small result fits in the same space)
#   not full (the control, the same broker once the filler is gone): no notice, and the
#       result, the task's result and its trace are stored.
#   the next start: the task that ended with its result unstored (its empty
#       tasks/<task_id>.unstored says so) is not taken for an interrupted one (t_broker_faults
#       has the control: a trace without a result is)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: mounting a tmpfs needs root"; exit 77; }

MNT="$T/full"
mkdir "$MNT"
mount -t tmpfs -o size=1m,mode=0755 anvil-e2e-full "$MNT" || fail "cannot mount a tmpfs on $MNT"
# The broker first (it is on the mount), then the mount, then lib.sh's cleanup.
trap 'kill "${OWN_PIDS[@]}" 2>/dev/null; wait "${OWN_PIDS[@]}" 2>/dev/null; umount "$MNT"; cleanup' EXIT

NO_SPACE="No space left on device"
model_script m <<'PY'
[code('with open("artifacts/out.txt", "w") as f:\n    f.write("42\\n")\nfinal_answer(42)\n')] * 2
PY
start_model m
printf 'a,b\n1,2\n' >"$T/in.csv"
printf '{"task": "write 42", "inputs": ["in.csv"], "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' \
        "$PORT_m" >"$T/task.json"
tool hello.py <<<'print("hello")'

SD="$MNT/state"
"$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/b.sock" --state-dir "$SD" >"$T/b.log" 2>&1 &
BRO=$!
OWN_PIDS+=("$BRO")
for _ in $(seq 100); do [ -S "$T/b.sock" ] && break; sleep 0.1; done
[ -S "$T/b.sock" ] || fail "the broker did not start: $(cat "$T/b.log")"
export ANVIL_SOCKET="$T/b.sock"

# Fill it: every page of the tmpfs taken.
dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null
expect_eq "free space on the tmpfs" 0 "$(df --output=avail "$MNT" | tail -1 | tr -d ' ')"

# no_files_left WHAT: no result in results/ or tasks/, whole, half or temporary (a task's
# empty <task_id>.unstored is no result: it says there is none)
no_files_left() {
        expect_eq "$1: files left in results/ and tasks/ (whole, half or temporary)" "" \
                "$(find "$SD/results" "$SD/tasks" -type f ! -name '*.unstored' | head -5)"
}

# ---- full: a run ----
run_json "$T/hello.py"
id=$(j .run_id)
expect_eq "full: the run's status" ok "$(j .status)"
expect_eq "full: the run's notice" \
        "the broker could not store this result: results/$id.json could not be written ($NO_SPACE)" "$(j .not_stored)"
"$CTL" run "$T/hello.py" >"$T/human.out" 2>&1 || fail "full: anvilctl run (human) exited $?: $(cat "$T/human.out")"
hid=$(sed -n 's/^run \([0-9A-Za-z_-]*\): .*/\1/p' "$T/human.out" | head -1)
expect_eq "full: the human output's notice" \
        "note: the broker could not store this result: results/$hid.json could not be written ($NO_SPACE)" \
        "$(grep '^note: ' "$T/human.out")"
no_files_left "full: a run"

# ---- nearly full: a result larger than the space left is begun, fails, and is removed ----
truncate -s -32K "$MNT/filler"
tool big.py <<<'print("x" * 300000)'
run_json "$T/big.py"
id=$(j .run_id)
expect_eq "nearly full: the run's stdout reached the client" 300000 "$(j '.stdout | rtrimstr("\n") | length')"
expect_eq "nearly full: the run's notice" \
        "the broker could not store this result: results/$id.json could not be written ($NO_SPACE)" "$(j .not_stored)"
no_files_left "nearly full: a half-written result"
run_json "$T/hello.py"
[ -f "$SD/results/$(j .run_id).json" ] || fail "nearly full: a small result is not stored in the space left (the control)"
echo "ok: nearly full: a small result is stored in the space left (the control: there was room to begin)"
rm "$SD/results/$(j .run_id).json" "$SD/results/$(j .run_id).meta" # the result and its record
dd if=/dev/zero of="$MNT/filler" bs=4k oflag=append conv=notrunc 2>/dev/null
expect_eq "free space on the tmpfs, filled again" 0 "$(df --output=avail "$MNT" | tail -1 | tr -d ' ')"

# ---- full: a task ----
"$CTL" submit "$T/task.json" --json >"$T/task.out" 2>"$T/task.err" || fail "full: anvilctl submit exited $?: $(cat "$T/task.err")"
tid=$(jq -r .task_id "$T/task.out")
expect_eq "full: the task's status" ok "$(jq -r .status "$T/task.out")"
# The deliverable's source is its first file: the first to fail, and none is left.
expect_eq "full: the task's notice" \
        "the broker could not store this result: tasks/$tid.tool.py could not be written ($NO_SPACE)" \
        "$(jq -r .not_stored "$T/task.out")"
expect_match "full: the task says its trace is incomplete" \
        "^the trace is incomplete: [0-9]+ of its lines could not be written \\($NO_SPACE\\)\$" \
        "$(jq -r .trace_incomplete "$T/task.out")"
lost=$(jq -r .trace_incomplete "$T/task.out" | sed 's/^the trace is incomplete: \([0-9]*\) .*/\1/')
expect_eq "full: the trace on disk has none of the lines said lost" 0 "$(wc -l <"$SD/traces/$tid.jsonl")"
[ "$lost" -ge 5 ] || fail "full: only $lost trace lines said lost"
rid=$(jq -r '.steps[0].run.run_id' "$T/task.out")
expect_eq "full: the task's run says it was not stored" \
        "the broker could not store this result: results/$rid.json could not be written ($NO_SPACE)" \
        "$(jq -r '.steps[0].run.not_stored' "$T/task.out")"
no_files_left "full: a task"
expect_eq "full: the task's marker, tasks/$tid.unstored, empty" 0 "$(stat -c %s "$SD/tasks/$tid.unstored")"
full_tid=$tid
kill -0 "$BRO" 2>/dev/null || fail "the broker is gone: $(tail -5 "$T/b.log")"
echo "ok: the broker is still up"

# ---- not full: the control ----
rm "$MNT/filler"
run_json "$T/hello.py"
expect_eq "not full: no notice" null "$(j .not_stored)"
[ -f "$SD/results/$(j .run_id).json" ] || fail "not full: the run's result is not stored"
echo "ok: not full: the run's result is stored"
"$CTL" run "$T/hello.py" >"$T/human.out" 2>&1 || fail "not full: anvilctl run (human) exited $?"
expect_eq "not full: no notice in the human output" "" "$(grep '^note: ' "$T/human.out")"
"$CTL" submit "$T/task.json" --json >"$T/task.out" 2>"$T/task.err" || fail "not full: anvilctl submit exited $?: $(cat "$T/task.err")"
tid=$(jq -r .task_id "$T/task.out")
expect_eq "not full: the task's status" ok "$(jq -r .status "$T/task.out")"
expect_eq "not full: no notice on the task" "null|null|null" \
        "$(jq -r '"\(.not_stored)|\(.trace_incomplete)|\(.steps[0].run.not_stored)"' "$T/task.out")"
cmp -s <(jq -S . "$SD/tasks/$tid.json") <(jq -S . "$T/task.out") || fail "not full: the stored task result differs"
echo "ok: not full: tasks/$tid.json stored, equal to what the client got"
[ -f "$SD/tasks/$tid.tool.py" ] || fail "not full: no tasks/$tid.tool.py"
expect_eq "not full: the trace's last line" end "$(tail -1 "$SD/traces/$tid.jsonl" | jq -r .kind)"
expect_eq "temporary files left" "" "$(find "$SD" -name '*.tmp' | head -3)"

# ---- the next start: the task that ended unstored is no interrupted task ----
kill -TERM "$BRO"
wait "$BRO"
"$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/b.sock" --state-dir "$SD" >"$T/b2.log" 2>&1 &
BRO=$!
OWN_PIDS+=("$BRO")
for _ in $(seq 100); do [ -S "$T/b.sock" ] && break; sleep 0.1; done
[ -S "$T/b.sock" ] || fail "the broker did not start again: $(cat "$T/b2.log")"
grep -q "task $full_tid: ended, its result not stored (tasks/$full_tid.unstored); left as it is" "$T/b2.log" ||
        fail "restart: the log does not say the unstored task is left: $(cat "$T/b2.log")"
[ ! -e "$SD/tasks/$full_tid.json" ] || fail "restart: the unstored task was taken for an interrupted one"
expect_eq "restart: its trace is left as it was" 0 "$(wc -c <"$SD/traces/$full_tid.jsonl")"
