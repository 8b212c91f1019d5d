# A task whose runs do not fit in a frame once the broker writes them out (its inputs, nearly a
# frame's worth, plus the run's own fields and source) ends failed with the reason, the
# client's: "bad_request" and the bound, never "internal: the run could not be sent to the
# supervisor", which said nothing of what to change. The broker's relay encodes each request
# before anything starts (F6); a task's run now carries that reason to the task.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"

model_script never <<'PY'
[{"delay_s": 120}]
PY
start_model never
# The largest input the task_submit frame holds: found by anvilctl itself, which refuses
# (exit 125) what does not fit before it connects.
printf '{"task": "t", "inputs": ["big.csv"], "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' \
        "$PORT_never" >"$T/big.task.json"
size=$((16 * 1024 * 1024 - 600))
while :; do
        head -c "$size" /dev/zero | tr '\0' 'a' >"$T/big.csv"
        "$CTL" submit "$T/big.task.json" --json >"$T/task.json" 2>"$T/ctl.err"
        rc=$?
        [ "$rc" != 125 ] && break
        size=$((size - 100))
        [ "$size" -gt $((16 * 1024 * 1024 - 3000)) ] || fail "no input near 16 MiB fits a task_submit: $(cat "$T/ctl.err")"
done
echo "ok: an input of $size bytes fits the task_submit frame"
expect_eq "anvilctl submit's exit (the task failed)" 120 "$rc"
expect_eq "the task's status" failed "$(jq -r .status "$T/task.json")"
expect_match "the task's error" '^the sandbox could not carry out a run: bad_request: run_request: encoded frame of [0-9]+ bytes is over the limit of 16777216, as the broker passes the request on to the supervisor \(every field written out\); send smaller inputs$' \
        "$(jq -r .error "$T/task.json")"
expect_eq "the model was never asked" 0 "$(cat "$T/logs/never.jsonl" 2>/dev/null | wc -l)"
expect_serving
