#!/usr/bin/env bash
# `make demo`: starts anvil-supervisor and anvil-broker in a temporary state directory, shows
# the isolation probe's findings, runs the example tool over data/sales.csv and the four
# canned escape attempts through anvilctl, prints their traces and artifact paths, says for
# each attempt what stopped it (read off the run's own result, not assumed), submits the
# agent's task examples/agent/task.json (to a real model if ANVIL_MODEL_URL and ANVIL_MODEL
# are set, else to a scripted one on 127.0.0.1), and stops the daemons. Its state stays in
# $TMPDIR (/tmp) for a look afterwards. ANVIL_DEMO_UID_BASE: the supervisor's --uid-base (its
# default otherwise), for a demo beside other supervisors on one machine (tests/e2e/t_readme.sh).
# On a terminal (not in CI) it then serves the web UI (ANVIL_DEMO_HTTP, 127.0.0.1:8700), prints
# a login link that opens the demo's task, and waits for Ctrl-C.
set -u
BUILD=$(cd "${1:-build}" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
        echo "make demo: the supervisor builds jails and must run as root" >&2
        exit 1
fi
STATE=$(mktemp -d "${TMPDIR:-/tmp}/anvil-demo.XXXXXX")
chmod 711 "$STATE"
export ANVIL_SOCKET="$STATE/anvil.sock"
# The demo's daemons read no /etc/anvil/anvil.conf of an installed Anvil: the demo must show
# the same on every machine.
"$BUILD/anvil-supervisor" --config /dev/null --listen "$STATE/supervisor.sock" --state-dir "$STATE/sup" \
        ${ANVIL_DEMO_UID_BASE:+--uid-base "$ANVIL_DEMO_UID_BASE"} >"$STATE/supervisor.log" 2>&1 &
SUP=$!
for _ in $(seq 100); do [ -S "$STATE/supervisor.sock" ] && break; sleep 0.1; done
# The model for the agent's task (part 3): a real one if ANVIL_MODEL_URL and ANVIL_MODEL are
# set (the key, if any, from ANVIL_MODEL_KEY, read by the broker itself); otherwise a scripted
# one: tests/model_server.py on 127.0.0.1 replays the replies in examples/agent/scripted_model.json.
MODEL_PID=""
if [ -n "${ANVIL_MODEL_URL:-}" ] && [ -n "${ANVIL_MODEL:-}" ]; then
        model_args=(--model-url "$ANVIL_MODEL_URL" --model "$ANVIL_MODEL")
        model_what="the model $ANVIL_MODEL at $ANVIL_MODEL_URL"
else
        unset ANVIL_MODEL_KEY
        /usr/bin/python3 "$TOP/tests/model_server.py" --script "$TOP/examples/agent/scripted_model.json" \
                --port-file "$STATE/model.port" --log "$STATE/model-requests.jsonl" >"$STATE/model.log" 2>&1 &
        MODEL_PID=$!
        for _ in $(seq 100); do [ -s "$STATE/model.port" ] && break; sleep 0.1; done
        model_args=(--model-url "http://127.0.0.1:$(cat "$STATE/model.port" 2>/dev/null)/v1" --model scripted)
        model_what="a scripted model (tests/model_server.py replaying examples/agent/scripted_model.json; set ANVIL_MODEL_URL and ANVIL_MODEL for a real one)"
fi
http_args=()
if [ -t 0 ] && [ -t 1 ] && [ -z "${CI:-}" ]; then
        http_args=(--http "${ANVIL_DEMO_HTTP:-127.0.0.1:8700}" --web-dir "$TOP/web")
fi
"$BUILD/anvil-broker" --config /dev/null --supervisor "$STATE/supervisor.sock" --listen "$ANVIL_SOCKET" \
        --state-dir "$STATE/broker" "${model_args[@]}" "${http_args[@]}" >"$STATE/broker.log" 2>&1 &
BRO=$!
for _ in $(seq 100); do [ -S "$ANVIL_SOCKET" ] && break; sleep 0.1; done
stop() {
        kill "$BRO" "$SUP" $MODEL_PID 2>/dev/null
        wait "$BRO" "$SUP" $MODEL_PID 2>/dev/null
}
trap stop EXIT
if [ ! -S "$ANVIL_SOCKET" ]; then
        echo "The daemons did not start:" >&2
        cat "$STATE/supervisor.log" "$STATE/broker.log" >&2
        exit 1
fi
CTL="$BUILD/anvilctl"

echo "== Anvil demo (state in $STATE)"
echo
echo "== 0. What is in force: the isolation probe (anvilctl probe)"
"$CTL" probe || exit 1
echo
echo "== 1. The example tool: revenue by region over data/sales.csv"
"$CTL" run "$TOP/examples/revenue_by_region.py" --input "$TOP/data/sales.csv" || exit 1

echo
echo "== 2. Four escape attempts"
verdicts=()
for name in net_connect fork write_outside read_passwd; do
        echo
        echo "-- examples/escapes/$name.py"
        # A blocked tool exits 120, and a tool its own code: a result all the same. No
        # result (the sandbox failed 122, refused 123, usage 125, unreachable 126) ends the demo.
        rc=0
        out=$("$CTL" run "$TOP/examples/escapes/$name.py" --json) || rc=$?
        case $rc in 122 | 123 | 125 | 126) exit 1 ;; esac
        # The run's result, shown from its own JSON (the verdict below reads the same run).
        jq -r '"run \(.run_id): \(.killed // .status)\(if .exit_code != null then " (exit code \(.exit_code))" else "" end) in \(.wall_ms) ms; isolation: \(.isolation.tier)",
               "trace:", (.events[] | "  \(.t_ms) ms  \(.layer)  \(.kind)  \(.message // .op // "")"),
               "stdout:", (.stdout | split("\n")[] | select(length > 0) | "  " + .)' <<<"$out" | sed 's/^/   /'
        stdout=$(jq -r .stdout <<<"$out")
        v=""
        # What stopped it, read off this run's own result: a refusal by the Python layers
        # (pre-check or audit hook), by seccomp (explained by the supervisor) or by Landlock
        # (as the kernel's audit records tell it) is an event; otherwise what the namespaces
        # did is in the tool's own output (a jail at a tier without seccomp, or Landlock's
        # refusal with the kernel's audit off).
        refusal=$(jq -r '[.events[] | select((.layer == "precheck" or .layer == "audit" or .layer == "seccomp" or .layer == "landlock") and .kind == "blocked")][0] | select(.) | "\({precheck: "pre-check", audit: "audit hook"}[.layer] // .layer): \(.message)"' <<<"$out")
        if [ -n "$refusal" ]; then
                v="STOPPED by the $refusal"
        else
                case "$name" in
                net_connect) grep -q "Network is unreachable" <<<"$stdout" &&
                        v="STOPPED by the network namespace only ('Network is unreachable')" ;;
                fork) grep -q "fork succeeded" <<<"$stdout" &&
                        v="NOT STOPPED: the fork succeeded, contained in the jail's pid namespace" ;;
                write_outside) grep -q "Read-only file system" <<<"$stdout" &&
                        v="STOPPED by the mount namespace only ('Read-only file system')" ;;
                read_passwd) grep -q "tool:x:1000:1000:Anvil tool:" <<<"$stdout" &&
                        v="NOT STOPPED as a read: it read the jail's synthetic /etc/passwd, not the host's" ;;
                esac
                [ -n "${v:-}" ] || v="UNEXPECTED: status $(jq -r .status <<<"$out"), stdout: $(head -3 <<<"$stdout" | tr '\n' ' ')"
        fi
        verdicts+=("$(printf '%-14s %s' "$name" "$v")")
done

echo
echo "== What stopped each attempt"
printf '  %s\n' "${verdicts[@]}"

echo
echo "== 3. An agent's task: anvilctl submit examples/agent/task.json"
echo "   the model: $model_what"
echo
"$CTL" submit "$TOP/examples/agent/task.json" | tee "$STATE/task.out" || exit 1
task_id=$(sed -n 's/^task \(task-[0-9A-Za-z-]*\)$/\1/p' "$STATE/task.out" | head -1)
if [ -n "$task_id" ] && [ -f "$STATE/broker/tasks/$task_id.json" ]; then
        echo
        echo "The deliverable's source, as saved beside its artifacts (tool.py) and in $STATE/broker/tasks/$task_id.tool.py:"
        sed 's/^/   | /' "$STATE/broker/tasks/$task_id.tool.py" 2>/dev/null
        obs=$(jq -r 'select(.kind == "observation" and (.message | contains("Refused by the sandbox"))) | .message' \
                "$STATE/broker/traces/$task_id.jsonl" | head -c 4000)
        if [ -n "$obs" ]; then
                echo
                echo "What the model was told after an action the sandbox refused (from the task's trace):"
                sed 's/^/   | /' <<<"$obs"
        fi
        echo
        echo "The whole task, with the prompt, each reply and observation, is its trace:"
        echo "   $STATE/broker/traces/$task_id.jsonl ('anvilctl trace $task_id' replays it through a running broker)"
fi
echo
echo "Run results are stored by the broker under $STATE/broker/results/, tasks under $STATE/broker/tasks/,"
echo "their traces under $STATE/broker/traces/"
if [ ${#http_args[@]} -gt 0 ]; then
        echo
        echo "== 4. The web UI: the code, the trace and the artifacts side by side, and try to break it"
        url=$("$CTL" ui --no-browser 2>/dev/null) || { echo "anvilctl ui failed: see $STATE/broker.log" >&2; exit 1; }
        [ -n "${task_id:-}" ] && url="$url#task=$task_id"
        echo "   open this link within 60 s (it works once): $url"
        if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then xdg-open "$url" >/dev/null 2>&1 & fi
        echo "   a new link: ANVIL_SOCKET=$ANVIL_SOCKET $CTL ui"
        echo "   serving until Ctrl-C"
        trap 'exit 0' INT
        while sleep 3600; do :; done
fi
