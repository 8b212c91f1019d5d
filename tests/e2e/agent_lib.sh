# Helpers for the tests of the agent (t_agent.sh, t_broker_full.sh, t_broker_faults.sh),
# sourced after lib.sh: scripted OpenAI-compatible servers on 127.0.0.1 (tests/model_server.py),
# one a script, their scripts in $T/scripts and their records in $T/logs.
mkdir -p "$T/scripts" "$T/logs"

# model_script NAME: the steps of scripts/NAME.json, from a Python expression on stdin that
# may use reply(content) (a chat completion with that content), code(text) (a reply with a
# thought and a ```py block) and any model_server.py step ({"delay_s": ...}, {"status": ...}).
model_script() {
        "$PY" -c '
import json, sys
def reply(content):
    return {"body": {"id": "x", "object": "chat.completion", "model": "scripted",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}]}}
def code(text, thought="Thought: next step."):
    return reply(f"{thought}\nCode:\n```py\n{text}```<end_code>\n")
with open(sys.argv[1], "w") as f:
    json.dump(eval(sys.stdin.read()), f)' "$T/scripts/$1.json" || fail "model_script $1: not a list of steps"
}

# start_model NAME: a scripted server for scripts/NAME.json; its port in PORT_<NAME>.
start_model() {
        "$PY" "$TOP/tests/model_server.py" --script "$T/scripts/$1.json" --port-file "$T/logs/$1.port" \
                --log "$T/logs/$1.jsonl" >"$T/logs/$1.out" 2>&1 &
        OWN_PIDS+=("$!")
        for _ in $(seq 100); do [ -s "$T/logs/$1.port" ] && break; sleep 0.1; done
        [ -s "$T/logs/$1.port" ] || fail "the model server $1 did not start: $(cat "$T/logs/$1.out")"
        printf -v "PORT_$1" '%s' "$(cat "$T/logs/$1.port")"
}

# wait_asked NAME: until the server NAME has had a request (its task is past its describe run)
wait_asked() {
        for _ in $(seq 100); do [ -s "$T/logs/$1.jsonl" ] && break; sleep 0.1; done
        [ -s "$T/logs/$1.jsonl" ] || fail "$1: the model was never asked"
}

# task_id_of FILE: the task id anvilctl submit's human output names first
task_id_of() {
        sed -n 's/^task \(task-[0-9A-Za-z-]*\)$/\1/p' "$1" | head -1
}
