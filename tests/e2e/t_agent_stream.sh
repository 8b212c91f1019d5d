# The agent with models as real servers speak (issue 14), end to end: anvilctl submit → a
# broker of this test's own → scripted servers on 127.0.0.1 that stream as OpenAI and vLLM do
# (tests/model_server.py's dialects) → each code action a real run in the suite's supervisor.
#   streaming: the reply arrives as model_delta events, in pieces, the first long before the
#       reply ends; `submit --verbose` prints it as it comes; the pieces are the reply
#   tool calls: OpenAI's content null with tool_calls is no code, never run, never a step;
#       the model is told, and the task goes on
#   the reply rules in the loop: a draft in <think> and an imagined Observation: are not
#       run; a <code> whose </code> a stop sequence ate runs
#   cut: the time budget, and a cancel, stop a stream at once (the server sees the broker go)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"

mkdir -p "$T/data"
printf 'region,amount\nnorth,1\nsouth,2\n' >"$T/data/sales.csv"

model_script stream <<'PY'
[{"dialect": "openai", "event_delay_s": 0.4,
  "chunks": ["Thought: I will write it.\n", "<code>\n", "with open('artifacts/s.txt', 'w') as f:\n",
             "    f.write('streamed\\n')\n", "final_answer('s')\n", "</code>"]}] * 2
PY
model_script tools <<'PY'
[{"dialect": "openai", "tool_calls": ["python"]},
 {"dialect": "openai", "tool_calls": ["python"], "content": "I will call the python tool.", "stream": False},
 {"dialect": "vllm", "content": "<think>\n```py\nimport socket\nsocket.create_connection(('127.0.0.1', 9))\n```\n</think>\n"
                                 "Thought: now.\n<code>\nwith open('artifacts/t.txt', 'w') as f:\n    f.write('t\\n')\n"
                                 "final_answer('t')\nObservation: t\nThought: and more\n<code>\nraise SystemExit(3)\n"}]
PY
model_script budget <<'PY'
[{"dialect": "vllm", "event_delay_s": 0.5, "content": "x" * 60, "chunks": ["x"] * 60}]
PY
model_script cancel <<'PY'
[{"dialect": "llama.cpp", "event_delay_s": 0.5, "content": "y" * 60, "chunks": ["y"] * 60}]
PY
for s in stream tools budget cancel; do start_model "$s"; done
BSOCK="$T/broker.sock"
chmod 711 "$T"
"$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$BSOCK" --state-dir "$T/broker" \
        --model-url "http://127.0.0.1:$PORT_stream/v1" --model scripted-model --model-retries 0 >"$T/broker.log" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 100); do [ -S "$BSOCK" ] && break; sleep 0.1; done
[ -S "$BSOCK" ] || fail "the test's broker did not start: $(cat "$T/broker.log")"
export ANVIL_SOCKET="$BSOCK"

task() { # NAME [extra JSON members]
        printf '{"task": "task %s", "inputs": ["data/sales.csv"], "model": {"url": "http://127.0.0.1:%s/v1"}%s}\n' \
                "$1" "$(cat "$T/logs/$1.port")" "${2:-}" >"$T/$1.task.json"
}
# stamped: each line of stdin with the ms since the epoch before it, as it arrives
stamped() { while IFS= read -r l; do printf '%s %s\n' "$(($(date +%s%N) / 1000000))" "$l"; done; }

# ---- streaming: the pieces before the end ----
task stream
"$CTL" submit "$T/stream.task.json" --events >"$T/stream.events" 2>"$T/stream.err" ||
        fail "stream: anvilctl submit exited $?: $(cat "$T/stream.err")"
expect_eq "stream: the task" ok "$(jq -r 'select(.type == "task_result") | .status' "$T/stream.events")"
reply=$(jq -r 'select(.type == "task_event" and .kind == "model_reply") | .message' "$T/stream.events")
deltas=$(jq -j 'select(.type == "task_event" and .kind == "model_delta") | .message' "$T/stream.events")
n=$(jq -c 'select(.type == "task_event" and .kind == "model_delta")' "$T/stream.events" | wc -l)
[ "$n" -ge 4 ] || fail "stream: $n model_delta events, expected the reply in pieces"
expect_eq "stream: the pieces are the reply" "$reply" "$deltas"
expect_eq "stream: the trace says it was streamed" true \
        "$(jq -r 'select(.kind == "model_reply") | .streamed' "$T/broker/traces/$(jq -r 'select(.type == "task_result") | .task_id' "$T/stream.events").jsonl")"
expect_eq "stream: the pieces are not in the trace" 0 \
        "$(grep -c model_delta "$T/broker/traces/$(jq -r 'select(.type == "task_result") | .task_id' "$T/stream.events").jsonl")"
expect_eq "stream: the action ran" "streamed" "$(cat "$(jq -r 'select(.type == "task_result") | .steps[0].run.artifacts_dir' "$T/stream.events")/s.txt")"
# --verbose, stamped line by line: the first piece long before the reply's end
"$CTL" submit "$T/stream.task.json" --verbose 2>&1 | stamped >"$T/stream.human"
t_first=$(grep -m1 ' the model is replying:$' -A1 "$T/stream.human" | tail -1 | cut -d' ' -f1)
t_end=$(grep -m1 ' the model replied (' "$T/stream.human" | cut -d' ' -f1)
[ -n "$t_first" ] && [ -n "$t_end" ] || fail "stream: --verbose showed no reply as it came: $(cat "$T/stream.human")"
[ $((t_end - t_first)) -ge 1200 ] || fail "stream: the first line ${t_first}, the end ${t_end}: not before the end"
echo "ok: stream: --verbose showed the reply's first line $((t_end - t_first)) ms before its end"
expect_match "stream: --verbose, the reply as it came" '  \| Thought: I will write it\.' "$(cat "$T/stream.human")"
expect_match "stream: --verbose, the reply's end" 'the model replied \([0-9]+ bytes, shown above as it came\)' "$(cat "$T/stream.human")"

# ---- tool calls; the rules in the loop ----
task tools
"$CTL" submit "$T/tools.task.json" --json >"$T/tools.json" 2>"$T/tools.err" || fail "tools: exited $?: $(cat "$T/tools.err")"
expect_eq "tools: the task" ok "$(jq -r .status "$T/tools.json")"
expect_eq "tools: one action (the tool call was none)" 1 "$(jq '.steps | length' "$T/tools.json")"
expect_eq "tools: the action is the <code> block, cut at Observation:" \
        "$(printf "with open('artifacts/t.txt', 'w') as f:\n    f.write('t\\\\n')\nfinal_answer('t')")" \
        "$(jq -r '.steps[0].code' "$T/tools.json")"
expect_eq "tools: the draft in <think> never ran: nothing refused" 0 \
        "$(jq '[.steps[0].run.events[] | select(.kind == "blocked")] | length' "$T/tools.json")"
for n in 2 3; do
        told=$(jq -r '.json.messages[-1].content' <(sed -n ${n}p "$T/logs/tools.jsonl"))
        expect_eq "tools: the model was told (request $n)" \
                "No code was received. What was seen: a call of the tool python and no code; here tools are not called, code is run." \
                "$(head -1 <<<"$told")"
        expect_match "tools: and shown the form (request $n)" '```py' "$told"
done
tid=$(jq -r .task_id "$T/tools.json")
expect_eq "tools: the trace names the calls" "python python" \
        "$(jq -r 'select(.kind == "model_reply") | .tool_calls // empty' "$T/broker/traces/$tid.jsonl" | tr '\n' ' ' | sed 's/ $//')"

# ---- the time budget and a cancel stop the stream at once ----
task budget ', "time_budget_s": 3'
t0=$(date +%s%N)
"$CTL" submit "$T/budget.task.json" --json >"$T/budget.json" 2>"$T/budget.err"
ms=$((($(date +%s%N) - t0) / 1000000))
expect_eq "budget: the error" "the task's time budget of 3 s ran out" "$(jq -r .error "$T/budget.json")"
[ "$ms" -lt 8000 ] || fail "budget: ended after $ms ms"
for _ in $(seq 50); do grep -q stream_cut_after "$T/logs/budget.jsonl" && break; sleep 0.1; done
cut=$(jq -r 'select(.stream_cut_after) | "\(.stream_cut_after) \(.of) \(.t)"' "$T/logs/budget.jsonl")
[ -n "$cut" ] || fail "budget: the server went on streaming"
read -r sent of t_cut <<<"$cut"
[ "$sent" -lt "$of" ] || fail "budget: the whole stream was sent"
echo "ok: budget: the stream stopped at the budget, after $sent of $of events"
task cancel
"$CTL" submit "$T/cancel.task.json" --json >"$T/cancel.json" 2>"$T/cancel.err" &
C=$!
wait_asked cancel
sleep 1.5
kill -TERM "$C"
wait "$C"
expect_eq "cancel: anvilctl's exit (cancelled)" 121 "$?"
for _ in $(seq 50); do grep -q stream_cut_after "$T/logs/cancel.jsonl" && break; sleep 0.1; done
cut=$(jq -r 'select(.stream_cut_after) | "\(.stream_cut_after) \(.of)"' "$T/logs/cancel.jsonl")
[ -n "$cut" ] || fail "cancel: the server went on streaming"
read -r sent of <<<"$cut"
[ "$sent" -lt 15 ] || fail "cancel: $sent events were sent after a cancel 1.5 s in"
echo "ok: cancel: the stream stopped at the cancel, after $sent of $of events"
