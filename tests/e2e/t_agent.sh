# The agent (issue 5), end to end: anvilctl submit → a broker of this test's own (model
# settings, a key) → scripted OpenAI-compatible servers on 127.0.0.1 (tests/model_server.py,
# real HTTP) → each code action a real run in the suite's supervisor.
#   two tasks at once → two distinct tools, each with a real artifact whose values this test
#       recomputes from the input; the second action of one uses a variable the first left;
#       each deliverable's source is its artifacts' tool.py and the task's tasks/<id>.tool.py
#   no code: a prose reply and a JSON tool call are never run, never steps; the model is told
#       "No code was received." (seen in the next request it got)
#   KeyError: a tool that really ran and raised is a failed task, with the traceback shown and
#       the error naming the run and the exception
#   capability: a reply that declares network, not approved: the run says denied, and why
#   429 then success: one retry after Retry-After, the task ok; three 500s: a clear failure
#       after exactly three requests (the broker's --model-retries 2)
#   slow model: the task's time budget ends it, long before the model would have answered
#   cancel: anvilctl killed mid-task: the task is stored as cancelled; Ctrl-C (SIGINT or
#       SIGTERM): anvilctl sends a cancel, the task ends cancelled and its result is printed
#   trace: anvilctl trace replays what submit showed
#   key: planted in the broker's settings, it reaches the model server it was set for (the
#       control) and no other (a task's own model.url gets no key), and appears in no run's
#       environment, output, artifact, stored result, trace or task result, nor in the log
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"

KEY="sk-anvil-e2e-$RANDOM$RANDOM$RANDOM"
mkdir -p "$T/data"
cat >"$T/data/sales.csv" <<'CSV'
region,amount,units
north,120.50,3
south,80.25,2
north,19.50,1
east,200.00,5
south,10.00,1
CSV

# ---- the scripts: each reply a chat completion whose content is given here ----
$PY - "$T/scripts" <<'PY'
import json, sys
out = sys.argv[1]
def reply(content):
    return {"body": {"id": "x", "object": "chat.completion", "model": "scripted",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}]}}
def code(text, thought="Thought: next step."):
    return reply(f"{thought}\nCode:\n```py\n{text}```<end_code>\n")
def save(name, steps):
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(steps, f)

# Task A: totals per region, over two actions (a variable kept between them).
save("totals", [
    code('import csv\ntotals = {}\nwith open("inputs/sales.csv") as f:\n'
         '    for row in csv.DictReader(f):\n'
         '        totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])\n'
         'print(totals)\n'),
    code('with open("artifacts/totals.csv", "w") as f:\n    f.write("region,total\\n")\n'
         '    for r in sorted(totals):\n        f.write(f"{r},{totals[r]:.2f}\\n")\n'
         'final_answer({"regions": len(totals)})\n'),
])
# Task B: with pandas, units per region as JSON.
save("units", [
    code('import json\nimport pandas as pd\ndf = pd.read_csv("inputs/sales.csv")\n'
         'units = df.groupby("region")["units"].sum().astype(int).to_dict()\n'
         'with open("artifacts/units.json", "w") as f:\n    json.dump(units, f, sort_keys=True)\n'
         'final_answer("units written")\n'),
])
# No code twice (prose, then a raw JSON tool call), then code.
save("nocode", [
    reply("I will add up the amounts and write them to a file."),
    reply('{"name": "python_interpreter", "arguments": {"code": "print(1)"}}'),
    code('with open("artifacts/n.txt", "w") as f:\n    f.write("5\\n")\nfinal_answer(5)\n'),
])
# A real KeyError, then a final answer with nothing written.
save("keyerror", [
    code('import pandas as pd\ndf = pd.read_csv("inputs/sales.csv")\nprint(df["amount_usd"].sum())\n'),
    code('final_answer("could not compute it")\n'),
])
# A declaration not understood (its code runs, nothing requested; the model is told), then a
# capability declared in a later reply, not approved.
save("caps", [
    reply('{"capabilitiesRequested": network}\nThought: first a look.\n```python\nprint(1)\n```\n'),
    reply('{"capabilitiesRequested": ["network"]}\nThought: I need the web.\n```python\n'
          'with open("artifacts/c.txt", "w") as f:\n    f.write("c\\n")\n```\n'),
    code('final_answer("c")\n'),
])
# 429 with Retry-After, then an answer.
save("retry", [
    {"status": 429, "headers": {"Retry-After": "1"}, "body": {"error": {"message": "slow down"}}},
    code('with open("artifacts/r.txt", "w") as f:\n    f.write("r\\n")\nfinal_answer("r")\n'),
])
# Three 500s.
save("fail500", [{"status": 500, "body": {"error": {"message": "overloaded"}}}] * 3)
# A refused action between two: the variables of the first reach the third.
save("carry", [
    reply('Thought: first the answer.\n```py\nanswer = 6 * 7\nprint(answer)\n```\n' + "Some prose. " * 30000),
    code('import socket\nsocket.create_connection(("127.0.0.1", 9))\n'),
    code('with open("artifacts/a.txt", "w") as f:\n    f.write(str(answer))\nfinal_answer(answer)\n'),
])
# A model that never writes code: the turns run out.
save("steplimit", [reply("I would sum the amounts."), reply("Summing them now, in my head.")])
# A model slower than the task's budget.
save("slow", [dict(code('final_answer(1)\n'), delay_s=30)])
# The key's task: the tool prints and saves its whole environment (the precheck refuses
# /proc/self/environ, which holds the same).
save("key", [
    code('import os, json\nenv = dict(os.environ)\n'
         'with open("artifacts/env.json", "w") as f:\n    json.dump(env, f)\n'
         'print(json.dumps(env))\nfinal_answer(sorted(env))\n'),
])
PY

# cancel, ctrlc and stopping: the slow model, a server each (a task is ended while it waits)
for s in totals units nocode keyerror caps retry fail500 slow key cancel steplimit carry ctrlc stopping; do
        case "$s" in cancel | ctrlc | stopping) cp "$T/scripts/slow.json" "$T/scripts/$s.json" ;; esac
        start_model "$s"
done
echo "ok: 14 scripted model servers on 127.0.0.1"
# The broker: its model is the "key" server, with the key; every other task names its own.
printf '%s\n' "$KEY" >"$T/key"
chmod 600 "$T/key"
BSOCK="$T/broker.sock"
# As the suite's broker: as root in both passes (a rootless supervisor lets root connect).
# Its socket is opened to nogroup, so that nobody may ask for a trace that is not its own.
chmod 711 "$T"
"$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$BSOCK" --state-dir "$T/broker" \
        --socket-group nogroup --model-url "http://127.0.0.1:$PORT_key/v1" --model scripted-model --model-key-file "$T/key" \
        --model-retries 2 >"$T/broker.log" 2>&1 &
BRO_PID=$!
OWN_PIDS+=("$BRO_PID")
for _ in $(seq 100); do [ -S "$BSOCK" ] && break; sleep 0.1; done
[ -S "$BSOCK" ] || fail "the test's broker did not start: $(cat "$T/broker.log")"
export ANVIL_SOCKET="$BSOCK"

# task NAME [extra JSON members]: writes $T/NAME.task.json naming server NAME (the broker's
# own model, with the key, for "key").
task() {
        local url=""
        [ "$1" != key ] && url=", \"model\": {\"url\": \"http://127.0.0.1:$(cat "$T/logs/$1.port")/v1\"}"
        printf '{"task": "task %s: work on the sales", "inputs": ["data/sales.csv"]%s%s}\n' "$1" "$url" "${2:-}" \
                >"$T/$1.task.json"
}
# submit NAME: anvilctl submit --json into $T/NAME.json (and the human output, from the same
# task's trace, in $T/NAME.trace). Its exit status is the task's (docs/cli.md, "Exit status"):
# 0 ok, 120 failed, 121 cancelled or interrupted; no TaskResult fails the test.
submit() {
        local rc=0 want
        "$CTL" submit "$T/$1.task.json" --json >"$T/$1.json" 2>"$T/$1.err" || rc=$?
        [ -s "$T/$1.json" ] || fail "$1: anvilctl submit exited $rc: $(cat "$T/$1.err")"
        case $(jq -r .status "$T/$1.json") in
        ok) want=0 ;;
        failed) want=120 ;;
        cancelled | interrupted) want=121 ;;
        *) want="none (status $(jq -r .status "$T/$1.json"))" ;;
        esac
        [ "$rc" = "$want" ] || fail "$1: anvilctl submit exited $rc; its task's status gives $want"
}
tj() { # NAME FILTER
        jq -r "$2" "$T/$1.json"
}

# ---- two tasks at once: two tools, two real artifacts ----
task totals
task units
"$CTL" submit "$T/totals.task.json" >"$T/totals.human" 2>&1 &
H=$!
submit units
wait $H || fail "totals: anvilctl submit (human) exited $?: $(tail -5 "$T/totals.human")"
id_totals=$(task_id_of "$T/totals.human")
[ -n "$id_totals" ] || fail "totals: no task id in the output: $(head -5 "$T/totals.human")"
jq . "$T/broker/tasks/$id_totals.json" >"$T/totals.json" || fail "totals: tasks/$id_totals.json is not there"
for n in totals units; do
        expect_eq "$n: status" ok "$(tj $n .status)"
        expect_eq "$n: error" null "$(tj $n .error)"
done
expect_eq "totals: two actions" 2 "$(tj totals '.steps | length')"
expect_eq "totals: the first action printed what it computed" "{'north': 140.0, 'south': 90.25, 'east': 200.0}" \
        "$(tj totals '.steps[0].run.stdout' | head -1)"
expect_eq "totals: the first action kept its variable" '{"north":140,"south":90.25,"east":200}' \
        "$(tj totals '.steps[0].run.variables | fromjson | .totals | tojson')"
expect_eq "totals: the deliverable is the second action" "$(tj totals '.steps[1].run.run_id')" \
        "$(tj totals .deliverable.run_id)"
expect_eq "units: one action" 1 "$(tj units '.steps | length')"
dir_t=$(tj totals '.steps[1].run.artifacts_dir')
dir_u=$(tj units '.steps[0].run.artifacts_dir')
expected_totals=$("$PY" - "$T/data/sales.csv" <<'PY'
import csv, sys
t = {}
for row in csv.DictReader(open(sys.argv[1])):
    t[row["region"]] = t.get(row["region"], 0) + float(row["amount"])
print("region,total")
for r in sorted(t):
    print(f"{r},{t[r]:.2f}")
PY
)
expect_eq "totals: the artifact's values, recomputed" "$expected_totals" "$(cat "$dir_t/totals.csv")"
expected_units=$("$PY" -c 'import csv,json,sys
t={}
for row in csv.DictReader(open(sys.argv[1])): t[row["region"]]=t.get(row["region"],0)+int(row["units"])
print(json.dumps(t, sort_keys=True))' "$T/data/sales.csv")
expect_eq "units: the artifact's values, recomputed" "$expected_units" "$(cat "$dir_u/units.json")"
for n in totals units; do
        d=$(tj $n '.deliverable.run_id')
        dir=$(tj $n ".steps[] | select(.run.run_id == \"$d\") | .run.artifacts_dir")
        src=$(tj $n .deliverable.source)
        expect_eq "$n: the deliverable's source is its artifacts' tool.py" "$src" "$(cat "$dir/tool.py")"
        expect_eq "$n: tool.py is listed with the artifacts, its sha256 checked" \
                "$(sha256sum "$dir/tool.py" | cut -d' ' -f1)" \
                "$(tj $n '.deliverable.artifacts[] | select(.path == "tool.py") | .sha256')"
        id=$(tj $n .task_id)
        expect_eq "$n: the source also in tasks/$id.tool.py" "$src" "$(cat "$T/broker/tasks/$id.tool.py")"
        [ -s "$T/broker/traces/$id.jsonl" ] || fail "$n: no trace"
done
[ "$(tj totals .deliverable.source)" != "$(tj units .deliverable.source)" ] || fail "the two tools are the same"
echo "ok: two tasks at once gave two distinct tools"
# Every action and the describe run went through the path of anvilctl run: stored results.
for r in $(jq -r '.steps[].run.run_id' "$T/totals.json" "$T/units.json"); do
        [ -f "$T/broker/results/$r.json" ] || fail "run $r is not stored in results/"
done
grep -q '^code action:' "$T/totals.human" || fail "totals: the human output shows no code action"
grep -q "^task $id_totals: ok" "$T/totals.human" || fail "totals: the human output does not end with the status"
grep -q "totals.csv" "$T/totals.human" || fail "totals: the human output names no artifact"
echo "ok: the human output shows the code, the status and the deliverable's artifacts"

# ---- trace replay ----
"$CTL" trace "$id_totals" >"$T/replay" 2>&1 || fail "anvilctl trace exited $?: $(tail -3 "$T/replay")"
for want in "task $id_totals" "code action:" "final_answer: {\"regions\":3}" "end: ok: the deliverable is run "; do
        grep -qF "$want" "$T/replay" || fail "the replay lacks '$want': $(head -30 "$T/replay")"
done
expect_eq "the replay: the model's replies in full" 2 "$(grep -c '^the model replied:' "$T/replay")"
"$CTL" trace task-20260101T000000-0000000000000000 >"$T/replay.none" 2>&1
expect_eq "trace of no task: exit (refused)" 123 "$?"
expect_eq "trace of no task: why" "anvilctl: not_found: no trace of task task-20260101T000000-0000000000000000 here" \
        "$(cat "$T/replay.none")"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$CTL" trace "$id_totals" >"$T/replay.other" 2>&1
expect_eq "trace by another user: exit (refused)" 123 "$?"
expect_eq "trace by another user: refused" "anvilctl: forbidden: this task's trace belongs to another user" \
        "$(cat "$T/replay.other")"
"$CTL" trace ../../etc/passwd >"$T/replay.bad" 2>&1
expect_eq "trace of a path: refused" "anvilctl: bad_request: trace_request.task_id: not a task id (task-...)" \
        "$(cat "$T/replay.bad")"

# ---- no code: prose, then a raw JSON tool call ----
task nocode
submit nocode
expect_eq "nocode: status" ok "$(tj nocode .status)"
expect_eq "nocode: one step: the replies without code were not run" 1 "$(tj nocode '.steps | length')"
expect_eq "nocode: the model asked three times" 3 "$(wc -l <"$T/logs/nocode.jsonl")"
for n in 2 3; do
        last=$(jq -r "select(.n == $n) | .json.messages[-1].content" "$T/logs/nocode.jsonl")
        case "$last" in
        "No code was received."*) ;;
        *) fail "nocode: request $n's last message is not the no-code observation: $last" ;;
        esac
done
echo "ok: nocode: the model was told, twice"

# ---- a real KeyError ----
task keyerror
submit keyerror
expect_eq "keyerror: status" failed "$(tj keyerror .status)"
kid=$(tj keyerror '.steps[0].run.run_id')
expect_eq "keyerror: the error" \
        "no deliverable: no action ran to success and wrote an artifact; the last action (run $kid) failed: KeyError: 'amount_usd'" \
        "$(tj keyerror .error)"
expect_eq "keyerror: the run's status" error "$(tj keyerror '.steps[0].run.status')"
tj keyerror '.steps[0].run.events[] | select(.kind == "exception") | .traceback' | grep -q "KeyError: 'amount_usd'" ||
        fail "keyerror: no traceback in the failed step"
expect_eq "keyerror: no deliverable" null "$(tj keyerror .deliverable)"
# The model saw the traceback in its observation.
jq -r 'select(.n == 2) | .json.messages[-1].content' "$T/logs/keyerror.jsonl" | grep -q "KeyError: 'amount_usd'" ||
        fail "keyerror: the observation did not show the error to the model"
echo "ok: keyerror: a failed task, the traceback shown"

# ---- a capability declared, not approved ----
task caps
submit caps
expect_eq "caps: status (the tool needed no network after all)" ok "$(tj caps .status)"
expect_eq "caps: a declaration not understood requests nothing" "" \
        "$(tj caps '.steps[0].run.capabilities.requested | join(",")')"
expect_eq "caps: the model was told so" \
        'Your capability declaration was not understood: write it on a line of its own, exactly in this form: {"capabilitiesRequested": ["network"]}' \
        "$(jq -r 'select(.n == 2) | .json.messages[-1].content' "$T/logs/caps.jsonl" | head -1)"
expect_eq "caps: requested in the second reply" network "$(tj caps '.steps[1].run.capabilities.requested | join(",")')"
expect_eq "caps: denied" network "$(tj caps '.steps[1].run.capabilities.denied | join(",")')"
expect_eq "caps: said why" "capability network denied: not approved" \
        "$(tj caps '.steps[1].run.events[] | select(.message != null) | .message' | grep '^capability')"
expect_eq "caps: the model is told it too" "Note: capability network denied: not approved" \
        "$(jq -r 'select(.n == 3) | .json.messages[-1].content' "$T/logs/caps.jsonl" | grep '^Note: capability')"

# ---- a refused action changes no variable ----
task carry
submit carry
expect_eq "carry: status" ok "$(tj carry .status)"
expect_eq "carry: the second action was refused" blocked "$(tj carry '.steps[1].run.status')"
expect_eq "carry: the model was told the variables it still has" "Variables kept for the next action: answer." \
        "$(jq -r 'select(.n == 3) | .json.messages[-1].content' "$T/logs/carry.jsonl" | grep '^Variables kept')"
expect_eq "carry: the third action had them" 42 "$(cat "$(tj carry '.steps[2].run.artifacts_dir')/a.txt")"
# The first reply (360 KB of it prose) ran, and the conversation keeps 256 KiB of it.
expect_eq "carry: a long reply's code ran" 42 "$(tj carry '.steps[0].run.stdout' | head -1)"
expect_eq "carry: a long reply kept in part" "262144 [... 97922 bytes cut here ...]" \
        "$(jq -r 'select(.n == 2) | .json.messages[-2].content | "\(split("\n")[:-1] | join("\n") | utf8bytelength) \(split("\n")[-1])"' \
                "$T/logs/carry.jsonl")"

# ---- the step limit: a model that never writes code ----
# (with a second input, 250 columns wide: the describe run tells 200 of them and how many more)
$PY -c 'print(",".join(f"c{i}" for i in range(250))); print(",".join("1" for i in range(250)))' >"$T/data/wide.csv"
task steplimit ', "max_steps": 2'
jq '.inputs += ["data/wide.csv"]' "$T/steplimit.task.json" >"$T/steplimit.task.json.new" &&
        mv "$T/steplimit.task.json.new" "$T/steplimit.task.json"
submit steplimit
prompt=$(jq -r 'select(.n == 1) | .json.messages[0].content' "$T/logs/steplimit.jsonl")
grep -qF -- "- ./inputs/wide.csv: 1 rows, 250 columns:" <<<"$prompt" || fail "steplimit: the wide input's count: $prompt"
grep -qF -- '  - "c63" (int64)' <<<"$prompt" || fail "steplimit: the wide input's 64th column is not shown"
grep -qF -- "  - and 186 more columns, not shown here" <<<"$prompt" || fail "steplimit: the wide input's columns not shown"
expect_eq "steplimit: the task" "failed|the step limit of 2 was reached before final_answer() was called" \
        "$(tj steplimit '.status + "|" + .error')"
expect_eq "steplimit: nothing was run" 0 "$(tj steplimit '.steps | length')"
expect_eq "steplimit: two turns" 2 "$(wc -l <"$T/logs/steplimit.jsonl")"

# ---- retries ----
task retry ', "capabilities_approved": ["network"]'
submit retry
expect_eq "retry: status" ok "$(tj retry .status)"
expect_eq "retry: two requests" 2 "$(wc -l <"$T/logs/retry.jsonl")"
gap=$(jq -s '(.[1].t - .[0].t) * 1000 | floor' "$T/logs/retry.jsonl")
[ "$gap" -ge 900 ] || fail "retry: the retry came ${gap} ms after the 429, before its Retry-After of 1 s"
tid=$(tj retry .task_id)
expect_eq "retry: the trace says two attempts" 2 \
        "$(jq -r 'select(.kind == "model_reply") | .attempts' "$T/broker/traces/$tid.jsonl")"
task fail500
submit fail500
expect_eq "fail500: status" failed "$(tj fail500 .status)"
expect_eq "fail500: three requests (two retries)" 3 "$(wc -l <"$T/logs/fail500.jsonl")"
case "$(tj fail500 .error)" in
"the model could not be used: "*500*overloaded*) echo "ok: fail500: $(tj fail500 .error)" ;;
*) fail "fail500: unclear error: $(tj fail500 .error)" ;;
esac

# ---- the time budget ----
task slow ', "time_budget_s": 3'
t0=$(date +%s%N)
submit slow
ms=$((($(date +%s%N) - t0) / 1000000))
expect_eq "slow: status" failed "$(tj slow .status)"
expect_eq "slow: error" "the task's time budget of 3 s ran out" "$(tj slow .error)"
[ "$ms" -lt 20000 ] || fail "slow: ended after $ms ms, not at its budget"
echo "ok: slow: ended by its budget after $ms ms"

# ---- cancel: the client goes ----
task cancel
"$CTL" submit "$T/cancel.task.json" >"$T/cancel.human" 2>&1 &
C=$!
wait_asked cancel
cid=$(task_id_of "$T/cancel.human")
kill -KILL "$C"
wait "$C" 2>/dev/null
for _ in $(seq 100); do [ -f "$T/broker/tasks/$cid.json" ] && break; sleep 0.1; done
expect_eq "cancel: stored as cancelled" "cancelled|cancelled by the client's disconnection" \
        "$(jq -r '.status + "|" + .error' "$T/broker/tasks/$cid.json")"
# Ctrl-C (here SIGTERM, which anvilctl takes the same way): a cancel frame; the task ends
# and anvilctl prints its result and exits 121, as for any task cancelled.
task ctrlc
"$CTL" submit "$T/ctrlc.task.json" --json >"$T/ctrlc.json" 2>"$T/ctrlc.err" &
C=$!
wait_asked ctrlc
kill -TERM "$C"
wait "$C"
expect_eq "ctrl-c: anvilctl's exit (cancelled)" 121 "$?"
expect_eq "ctrl-c: the task's result" "cancelled|cancelled by the client" "$(tj ctrlc '.status + "|" + .error')"
expect_eq "ctrl-c: stored the same" "cancelled" "$(jq -r .status "$T/broker/tasks/$(tj ctrlc .task_id).json")"

# ---- the key ----
task key
submit key
expect_eq "key: status" ok "$(tj key .status)"
# The control: the key was sent to the model it was set for...
expect_eq "key: sent to the broker's model" "Bearer $KEY" "$(jq -r '.headers.Authorization' "$T/logs/key.jsonl")"
# ...and to no other.
for s in totals units nocode keyerror caps retry fail500; do
        if grep -qi authorization "$T/logs/$s.jsonl"; then fail "$s: a task's own model.url got an Authorization header"; fi
done
echo "ok: key: sent only to the broker's own --model-url"
# The tool saw an environment without it, and the variables list is the runner's fixed one.
tj key '.steps[0].run.stdout' | grep -q PATH || fail "key: the tool did not print its environment (control)"
for where in "$T/broker" "$T/broker.log" "$T"/*.json "$T"/*.human "$T/replay"; do
        if grep -rqF "$KEY" $where; then fail "key: found in $where"; fi
done
for r in $(jq -r '.steps[].run.artifacts_dir' "$T"/*.json 2>/dev/null | sort -u); do
        [ -d "$r" ] || continue
        if grep -rqF "$KEY" "$r"; then fail "key: found in the artifacts $r"; fi
done
# The control of the search: the key is in the key file, and found there.
grep -qF "$KEY" "$T/key" || fail "key: the search's control failed"
echo "ok: key: in no run's environment, output, artifact, stored result, trace or log"

# ---- the sandbox refuses the task's runs: the task fails, it does not hang ----
# (as root only: a supervisor of this test's own opens its socket to nogroup, and a broker
# running as nobody reaches it, a uid it was not told to allow: an error frame, "forbidden")
if [ -z "$ROOTLESS_USER" ]; then
        start_sup forbid 900000000 --spares 0 --socket-group nogroup
        install -d -o nobody -g nogroup "$T/nb"
        setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$ANVIL_BUILD/anvil-broker" --config /dev/null \
                --supervisor "$T/forbid.sock" --listen "$T/nb/broker.sock" --state-dir "$T/nb/state" >"$T/nb.log" 2>&1 &
        OWN_PIDS+=("$!")
        for _ in $(seq 100); do [ -S "$T/nb/broker.sock" ] && break; sleep 0.1; done
        [ -S "$T/nb/broker.sock" ] || fail "the broker as nobody did not start: $(cat "$T/nb.log")"
        task nocode # this broker has no model of its own: the task names one
        jq '.model.name = "scripted"' "$T/nocode.task.json" >"$T/forbid.task.json"
        ANVIL_SOCKET="$T/nb/broker.sock" timeout 60 "$CTL" submit "$T/forbid.task.json" --json >"$T/forbid.json" 2>"$T/forbid.err"
        expect_eq "forbidden: anvilctl's exit (the task failed)" 120 "$?"
        expect_eq "forbidden: the task's error" \
                "the sandbox could not carry out a run: forbidden: This uid may not use the supervisor (see --allow-uid)" \
                "$(jq -r '.status + ": " + .error' "$T/forbid.json" | sed 's/^failed: //')"
        # The control: the same task, its runs allowed, was ok above (nocode).
fi

# ---- task.json: every bad input a clear error, exit 125, nothing sent ----
bad_task() { # WHAT JSON EXPECTED
        printf '%s' "$2" >"$T/bad.task.json"
        "$CTL" submit "$T/bad.task.json" >"$T/bad.out" 2>&1
        expect_eq "task.json $1: exit (usage)" 125 "$?"
        expect_eq "task.json $1: why" "$3" "$(cat "$T/bad.out")"
}
B="$T/bad.task.json"
bad_task "unknown key" '{"task": "x", "max_step": 3}' \
        "anvilctl: $B: unknown key \"max_step\" (task, inputs, capabilities_approved, max_steps, time_budget_s, model)"
bad_task "max_steps 0" '{"task": "x", "max_steps": 0}' "anvilctl: $B: \"max_steps\" must be a whole number, 1..100"
bad_task "max_steps 101" '{"task": "x", "max_steps": 101}' "anvilctl: $B: \"max_steps\" must be a whole number, 1..100"
bad_task "a budget as a string" '{"task": "x", "time_budget_s": "60"}' \
        "anvilctl: $B: \"time_budget_s\" must be a whole number, 1..86400"
bad_task "no task" '{"inputs": []}' "anvilctl: $B: \"task\" is required"
bad_task "an empty task" '{"task": ""}' "anvilctl: $B: \"task\" must be a non-empty string"
bad_task "a missing input" '{"task": "x", "inputs": ["data/nope.csv"]}' \
        "anvilctl: input $T/data/nope.csv: Failed to open $T/data/nope.csv: No such file or directory"
bad_task "a key" '{"task": "x", "model": {"url": "http://127.0.0.1:1/v1", "key": "sk"}}' \
        "anvilctl: $B: model.key: a task never carries a key: the broker's own (ANVIL_MODEL_KEY or --model-key-file) goes to the broker's --model-url only"
bad_task "broken JSON" '{"task": "x",' "anvilctl: $B: line 1, column 13: string or '}' expected near end of file"
bad_task "a list" '[1]' "anvilctl: $B: expected a JSON object"
bad_task "a key twice" '{"task": "x", "task": "y"}' "anvilctl: $B: line 1, column 20: duplicate object key near '\"task\"'"
bad_task "an input twice" '{"task": "x", "inputs": ["data/sales.csv", "data/sales.csv"]}' \
        "anvilctl: $B: inputs[1].name: 'sales.csv' is given twice"
# The broker's own check: a capability that does not exist (the control: the retry task above
# approved "network", accepted by the same broker).
printf '{"task": "x", "capabilities_approved": ["netwrok"], "model": {"url": "http://127.0.0.1:1/v1"}}' >"$B"
"$CTL" submit "$B" >"$T/bad.out" 2>&1
expect_eq "task.json an unknown capability: exit (refused)" 123 "$?"
expect_eq "task.json an unknown capability: why" \
        "anvilctl: bad_request: task_submit.capabilities_approved: 'netwrok' is not a capability (there are: network, process)" \
        "$(cat "$T/bad.out")"

# ---- the broker stops mid-task: the task is cancelled and its result stored ----
task stopping
"$CTL" submit "$T/stopping.task.json" >"$T/stopping.human" 2>&1 &
C=$!
wait_asked stopping
sid=$(task_id_of "$T/stopping.human")
kill -TERM "$BRO_PID"
timeout 20 tail --pid="$BRO_PID" -f /dev/null || fail "stopping: the broker did not stop within 20 s"
wait "$C"
expect_eq "stopping: anvilctl got the task's result (exit 121: cancelled)" 121 "$?"
expect_eq "stopping: stored as cancelled" "cancelled|cancelled by the broker, stopping" \
        "$(jq -r '.status + "|" + .error' "$T/broker/tasks/$sid.json")"
grep -q "^task $sid: cancelled: cancelled by the broker, stopping\$" "$T/stopping.human" ||
        fail "stopping: the client was not given the result: $(tail -3 "$T/stopping.human")"
expect_eq "stopping: the trace's last line" end "$(tail -1 "$T/broker/traces/$sid.jsonl" | jq -r .kind)"
