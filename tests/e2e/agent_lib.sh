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

# sup_jail_procs_left: as lib.sh's jail_procs_left, counting only the suite supervisor's
# descendants (ANVIL_E2E_SUP_PID: a jail's pid 1 is its child, and every process of a jail
# stays below its pid 1, which takes in the jail's orphans). In the rootless pass every jail
# of every suite on the machine runs as the same user, and another suite's would count.
sup_jail_procs_left() {
        local n=0 uid pid exe p ruid=-1
        [ -n "$ROOTLESS_USER" ] && ruid=$(id -u "$ROOTLESS_USER")
        while read -r pid uid; do
                [ "$uid" -lt 0 ] && uid=$((uid + 4294967296)) # ps shows a uid over 2^31 as negative
                { [ "$uid" -gt "$ANVIL_E2E_UID_BASE" ] && [ "$uid" -le $((ANVIL_E2E_UID_BASE + 264)) ]; } ||
                        [ "$uid" = "$ruid" ] || continue
                exe=$(readlink "/proc/$pid/exe" 2>/dev/null)
                [[ "$(basename "${exe% (deleted)}")" = anvil-supervisor ]] && continue
                p=$pid
                while [ -n "$p" ] && [ "$p" -gt 1 ] && [ "$p" != "$ANVIL_E2E_SUP_PID" ]; do
                        p=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)
                done
                [ "$p" = "$ANVIL_E2E_SUP_PID" ] && n=$((n + 1))
        done < <(ps -eo pid=,uid=)
        echo "$n"
}
