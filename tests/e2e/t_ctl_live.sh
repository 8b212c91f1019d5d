# anvilctl run as it goes (issue 12): the tool's output and the run's events are on
# anvilctl's stdout while the tool runs, not only at its end; the summary at the end does not
# show them again; --json stays one RunResult, at the end; --events is one JSON object a line,
# each with its "type", in order, the result last. And the tool's arguments: what follows "--"
# is its sys.argv[1:], bounded, and a request whose args are not a list of strings within the
# bounds is refused, naming the field.
#
# Timing: a reader stamps each line of anvilctl's stdout with the time it arrived (stamp); the
# tool prints a line, makes a refused call, sleeps 3 s and prints another. Control: --json
# holds everything until the end, and the same reader shows it arriving at the end.
# Bounds of what is streamed: a tool writing a byte at a time makes a few frames, not one a
# write; a run's output cap holds for what is streamed as for the result (a supervisor of the
# test's own, its cap 1000 bytes). anvilctl submit --events: the task's frames as JSON lines
# (a broker of the test's own and a scripted model).
. "$(dirname "$0")/lib.sh"

# socket reached through a module that imported it itself, so that the pre-check lets the call
# be made and the audit hook refuses it as it is made (t_caps.sh).
tool slow.py <<'PY'
import logging.handlers, time
print("first line")
try:
    logging.handlers.socket.socket()
except Exception as e:
    print("refused:", type(e).__name__)
time.sleep(3)
print("second line")
PY

# stamp: each line of stdin, prefixed by the milliseconds since the epoch when it was read.
stamp() {
        local l
        while IFS= read -r l; do
                printf '%s %s\n' "$(date +%s%3N)" "$l"
        done
}
# at VAR FILE REGEX: VAR is the stamp of the first line of FILE (stamped) whose text matches
# REGEX.
at() {
        local t
        t=$(awk -v re="$3" '{ s = $1; sub(/^[0-9]+ /, ""); if ($0 ~ re) { print s; exit } }' "$2")
        [ -n "$t" ] || fail "no line matching /$3/ in $2: $(cat "$2")"
        printf -v "$1" '%s' "$t"
}

# ---- human output, live ----
t0=$(date +%s%3N)
"$CTL" run "$T/slow.py" 2>"$T/err" | stamp >"$T/human.st"
[ "${PIPESTATUS[0]}" = 0 ] || fail "anvilctl run slow.py exited ${PIPESTATUS[0]}: $(cat "$T/err")"
sed 's/^[0-9]* /    | /' "$T/human.st"
at t_first "$T/human.st" '^  stdout[|] first line$'
at t_event "$T/human.st" '^ +[0-9]+ ms +audit +blocked +blocked at runtime: socket[.]socket[(]AF_INET, SOCK_STREAM[)]'
at t_second "$T/human.st" '^  stdout[|] second line$'
at t_end "$T/human.st" '^run [0-9]+T[0-9]+-[0-9a-f]+: ok [(]exit code 0[)]'
echo "    first line at +$((t_first - t0)) ms, the refusal at +$((t_event - t0)) ms, second line at +$((t_second - t0)) ms, the summary at +$((t_end - t0)) ms"
[ $((t_end - t_first)) -ge 2000 ] || fail "the first line came $((t_end - t_first)) ms before the end: not as it was printed"
echo "ok: the tool's first line was on anvilctl's stdout $((t_end - t_first)) ms before the run's end"
[ $((t_end - t_event)) -ge 2000 ] || fail "the refusal's event came $((t_end - t_event)) ms before the end: not as it happened"
echo "ok: the refusal's event was on anvilctl's stdout $((t_end - t_event)) ms before the run's end"
[ $((t_second - t_first)) -ge 2500 ] || fail "the two lines came $((t_second - t_first)) ms apart, the tool slept 3 s between them"
echo "ok: the second line came $((t_second - t_first)) ms after the first"
sed 's/^[0-9]* //' "$T/human.st" >"$T/human"
expect_eq "the first line, shown once" 1 "$(grep -c 'first line' "$T/human")"
expect_eq "the second line, shown once" 1 "$(grep -c 'second line' "$T/human")"
expect_eq "the refusal's event, shown once" 1 "$(grep -c 'audit *blocked' "$T/human")"
expect_eq "one trace section" 1 "$(grep -cx 'trace:' "$T/human")"
expect_eq "no stdout section at the end (it was shown)" 0 "$(grep -cx 'stdout:' "$T/human")"
expect_match "the trace's end, then the summary" '^ +[0-9]+ ms +[a-z]+ +[a-z_]+ ' \
        "$(grep -B1 '^run ' "$T/human" | head -1)"
grep -q '^blast radius ' "$T/human" || fail "the summary has no blast radius"
expect_eq "stderr: nothing from anvilctl" "" "$(cat "$T/err")"

# Lines as the tool wrote them, whatever its writes: a line in one write, a line in two writes
# with stderr between, a last line without its newline; stderr on lines of its own.
tool cut.py <<'PY'
import sys
sys.stdout.write("x" * 100 + "\n")
sys.stdout.write("partial")
sys.stderr.write("to stderr\n")
sys.stdout.write("y" * 5000)
PY
"$CTL" run "$T/cut.py" >"$T/cut" 2>"$T/err" || fail "cut.py: $(cat "$T/err")"
expect_eq "a line of 100 bytes, whole" 1 "$(grep -cx "  stdout| $(printf 'x%.0s' $(seq 100))" "$T/cut")"
expect_eq "stderr, as a line of its own" 1 "$(grep -cx '  stderr| to stderr' "$T/cut")"
expect_eq "the last line, without its newline, whole" 1 \
        "$(grep -cx "  stdout| partial$(printf 'y%.0s' $(seq 5000))" "$T/cut")"
expect_eq "no stdout or stderr section at the end" 0 "$(grep -cxE 'std(out|err):' "$T/cut")"

# ---- --json: one RunResult, at the end (control for the timing above) ----
t0=$(date +%s%3N)
"$CTL" run "$T/slow.py" --json 2>"$T/err" | stamp >"$T/json.st"
[ "${PIPESTATUS[0]}" = 0 ] || fail "anvilctl run --json exited ${PIPESTATUS[0]}: $(cat "$T/err")"
t_first=$(awk 'NR == 1 { print $1 }' "$T/json.st")
[ $((t_first - t0)) -ge 3000 ] || fail "control: --json printed its first line at +$((t_first - t0)) ms, before the tool's sleep ended"
echo "ok: control: --json's first line came at +$((t_first - t0)) ms, after the sleep: the reader shows when lines come"
sed 's/^[0-9]* //' "$T/json.st" >"$T/result.json"
expect_eq "--json: one JSON value" 1 "$(jq -s length "$T/result.json")"
expect_eq "--json: a RunResult" "object ok" "$(jq -r '"\(type) \(.status)"' "$T/result.json")"
expect_eq "--json: its stdout whole" "first line|refused: SandboxBlocked|second line|" "$(jq -j .stdout "$T/result.json" | tr '\n' '|')"
expect_eq "--json: no type key (the RunResult as before)" false "$(j 'has("type")')"

# ---- --events: JSON lines as they come, the result last ----
t0=$(date +%s%3N)
"$CTL" run "$T/slow.py" --events 2>"$T/err" | stamp >"$T/events.st"
[ "${PIPESTATUS[0]}" = 0 ] || fail "anvilctl run --events exited ${PIPESTATUS[0]}: $(cat "$T/err")"
sed 's/^[0-9]* //' "$T/events.st" >"$T/events"
n=$(wc -l <"$T/events")
i=0
while IFS= read -r line; do
        i=$((i + 1))
        jq -e 'type == "object" and (.type | type == "string")' <<<"$line" >/dev/null ||
                fail "--events: line $i is not a JSON object with a type: $line"
done <"$T/events"
echo "ok: --events: each of the $n lines is a JSON object with a \"type\""
expect_eq "--events: the types seen" "run_event run_output run_result" \
        "$(jq -r .type "$T/events" | sort -u | paste -sd' ')"
expect_eq "--events: the last line is the result" "run_result ok" "$(tail -1 "$T/events" | jq -r '"\(.type) \(.status)"')"
expect_eq "--events: one result" 1 "$(jq -r .type "$T/events" | grep -c run_result)"
expect_eq "--events: the output, in order" "first line|refused: SandboxBlocked|second line|" \
        "$(jq -j 'select(.type == "run_output" and .stream == "stdout") | .text' "$T/events" | tr '\n' '|')"
expect_eq "--events: the events, in order of their time" true \
        "$(jq -s '[.[] | select(.type == "run_event") | .event.t_ms] | . == sort' "$T/events")"
expect_eq "--events: the events streamed are the result's" true \
        "$(jq -s '[.[] | select(.type == "run_event") | .event] == (.[-1].events[:([.[] | select(.type == "run_event")] | length)])' "$T/events")"
order=$(jq -r 'if .type == "run_output" then "out:" + (.text | rtrimstr("\n")) elif .type == "run_event" then "ev:" + .event.layer + "/" + .event.kind else .type end' "$T/events" |
        grep -E '^out:(first|second)|^ev:audit/blocked|^run_result' | paste -sd' ')
expect_eq "--events: output and events in the order they happened" \
        "out:first line ev:audit/blocked out:second line run_result" "$(sed 's/out:refused[^ ]*//' <<<"$order")"
t_first=$(awk '/"first line/ { print $1; exit }' "$T/events.st")
t_end=$(awk 'END { print $1 }' "$T/events.st")
[ $((t_end - t_first)) -ge 2000 ] || fail "--events: the first line came $((t_end - t_first)) ms before the result"
echo "ok: --events: the first line came $((t_end - t_first)) ms before the result"
usage_rc=$("$CTL" run >/dev/null 2>&1; echo $?)
"$CTL" run "$T/slow.py" --json --events >"$T/out" 2>"$T/err"
expect_eq "--json with --events: a usage error" "$usage_rc" "$?"
expect_eq "--json with --events: the message" "anvilctl: run: --json and --events are two ways of printing the run: give one" "$(cat "$T/err")"

# ---- the bounds of what is streamed ----
# A tool that writes a byte at a time: 2001 writes, gathered into a few frames (at most one
# per stream each 50 ms, besides one before each event and one at the end), which together
# are exactly its output.
tool bytewise.py <<'PY'
import sys, time
for i in range(2000):
    sys.stdout.write("z")
    if i % 200 == 0:
        time.sleep(0.02)
sys.stdout.write("\n")
PY
"$CTL" run "$T/bytewise.py" --events >"$T/bytewise" 2>"$T/err" || fail "bytewise.py --events: $(cat "$T/err")"
frames=$(jq -r 'select(.type == "run_output") | .type' "$T/bytewise" | wc -l)
events=$(jq -r 'select(.type == "run_event") | .type' "$T/bytewise" | wc -l)
wall=$(tail -1 "$T/bytewise" | jq .wall_ms)
bound=$((wall / 50 + events + 2))
echo "    2001 writes in $wall ms: $frames run_output frames ($events events; at most $bound allowed)"
[ "$frames" -ge 1 ] && [ "$frames" -le "$bound" ] || fail "2001 writes made $frames frames, over $bound"
echo "ok: 2001 writes of a byte made $frames frames"
expect_eq "the frames together: the output (2001 bytes)" "$(tail -1 "$T/bytewise" | jq -j .stdout | md5sum)" \
        "$(jq -j 'select(.type == "run_output") | .text' "$T/bytewise" | md5sum)"

# Only what the run's output cap keeps is streamed: a supervisor of the test's own, with a cap
# of 1000 bytes a stream, and a tool that writes 3000.
OFF=1250000000 # this test's jail uids: ANVIL_E2E_UID_BASE + OFF and up
ROOT_ONLY=""
[ -z "$ROOTLESS_USER" ] && ROOT_ONLY=$'socket_group = 65534'
cat >"$T/capped.conf" <<EOF
[supervisor]
max_runs = 2
spares = 0
$ROOT_ONLY
[limits]
output_bytes = 1000
EOF
SUP_CONFIG="$T/capped.conf" start_sup capped "$OFF"
tool capped.py <<'PY'
import sys
for i in range(30):
    sys.stdout.write("%04d" % i + "x" * 95 + "\n")
PY
ANVIL_SOCKET="$T/capped.sock" "$CTL" run "$T/capped.py" --events >"$T/capped.events" 2>"$T/err" || fail "capped.py --events: $(cat "$T/err")"
expect_eq "capped: the result's stdout, cut" "true 3000 1000" \
        "$(tail -1 "$T/capped.events" | jq -r '"\(.stdout_truncated) \(.stdout_bytes) \(.stdout | length)"')"
expect_eq "capped: streamed, what the cap kept and no more" "$(tail -1 "$T/capped.events" | jq -r .stdout)" \
        "$(jq -j 'select(.type == "run_output") | .text' "$T/capped.events")"
ANVIL_SOCKET="$T/capped.sock" "$CTL" run "$T/capped.py" >"$T/capped.human" 2>"$T/err" || fail "capped.py: $(cat "$T/err")"
expect_eq "capped: the lines shown" 10 "$(grep -c '^  stdout| 00[0-9][0-9]x' "$T/capped.human")"
expect_eq "capped: the cut, said at the end" "stdout: truncated: 3000 bytes written, 1000 kept" \
        "$(grep '^stdout: ' "$T/capped.human")"

# ---- anvilctl submit --events: the task's frames as JSON lines as they come ----
. "$(dirname "$0")/agent_lib.sh"
model_script live <<<'[code("print(\"step one\")\nopen(\"artifacts/one.txt\", \"w\").write(\"1\")\nfinal_answer(1)\n")]'
cp "$T/scripts/live.json" "$T/scripts/live2.json"
start_model live
start_model live2 # a script is used up by one task: the second task's
start_bro agent --model-url "http://127.0.0.1:$PORT_live/v1" --model scripted-model
printf '{"task": "say one"}\n' >"$T/live.task.json"
ANVIL_SOCKET="$T/agent.sock" "$CTL" submit "$T/live.task.json" --events >"$T/task.events" 2>"$T/err" ||
        fail "submit --events exited $?: $(cat "$T/err")"
i=0
while IFS= read -r line; do
        i=$((i + 1))
        jq -e 'type == "object" and (.type | type == "string")' <<<"$line" >/dev/null ||
                fail "submit --events: line $i is not a JSON object with a type: $line"
done <"$T/task.events"
echo "ok: submit --events: each of the $i lines is a JSON object with a \"type\""
expect_eq "submit --events: the first, the task's start" "task_event started" "$(head -1 "$T/task.events" | jq -r '"\(.type) \(.kind)"')"
expect_eq "submit --events: the last, its result" "task_result ok" "$(tail -1 "$T/task.events" | jq -r '"\(.type) \(.status)"')"
expect_eq "submit --events: task events, then one result" "task_event:$((i - 1)) task_result:1" \
        "$(jq -r .type "$T/task.events" | sort | uniq -c | awk '{print $2 ":" $1}' | paste -sd' ')"
expect_eq "submit --events: the steps in order" true \
        "$(jq -s '[.[] | select(.type == "task_event") | .step] | . == sort' "$T/task.events")"
expect_eq "submit --events: the action's output, as it came" "run_stdout step one" \
        "$(jq -r 'select(.type == "task_event" and (.kind | startswith("run_std"))) | "\(.kind) \(.message | rtrimstr("\n"))"' "$T/task.events" | paste -sd'|')"
expect_eq "submit --events: its output before its run's result" "run_stdout run_result" \
        "$(jq -r 'select(.type == "task_event" and (.kind == "run_stdout" or .kind == "run_result")) | .kind' "$T/task.events" | paste -sd' ')"
printf '{"task": "say one", "model": {"url": "http://127.0.0.1:%s/v1"}}\n' "$PORT_live2" >"$T/live2.task.json"
ANVIL_SOCKET="$T/agent.sock" "$CTL" submit "$T/live2.task.json" >"$T/task.human" 2>"$T/err" ||
        fail "submit (human) exited $?: $(cat "$T/err")"
expect_eq "submit: the action's output, a line in the human output" "  stdout| step one" "$(grep '^  stdout|' "$T/task.human")"
tid=$(head -1 "$T/task.events" | jq -r .task_id)
ANVIL_SOCKET="$T/agent.sock" "$CTL" trace "$tid" >"$T/task.trace" 2>"$T/err" || fail "trace $tid: $(cat "$T/err")"
expect_eq "the stored trace: the output is its run's result's, not lines of their own" 0 "$(grep -c '^  stdout|' "$T/task.trace")"
grep -q 'step one' "$T/task.trace" || fail "the stored trace does not hold the action's output at all: $(cat "$T/task.trace")"
ANVIL_SOCKET="$T/agent.sock" "$CTL" submit "$T/live.task.json" --events --json >"$T/out" 2>"$T/err"
expect_eq "submit --json with --events: a usage error" "$usage_rc" "$?"

# ---- the tool's arguments ----
tool argv.py <<'PY'
import json, sys
print(json.dumps(sys.argv))
PY
# argv_json [anvilctl options...] -- ARGS: the result in $T/result.json (run_json would put its
# --json after the "--", where it is the tool's).
argv_json() {
        "$CTL" run "$T/argv.py" --json "$@" >"$T/result.json" 2>"$T/ctl.err" || fail "anvilctl run argv.py $* exited $?: $(cat "$T/ctl.err")"
}
argv_json
expect_eq "no args: sys.argv" '["<tool>"]' "$(j .stdout)"
argv_json -- --month 2024-05 "two words" "" "é"
expect_eq "args after --: sys.argv" '["<tool>", "--month", "2024-05", "two words", "", "\u00e9"]' "$(j .stdout)"
# anvilctl's options before "--" are anvilctl's, after it the tool's.
"$CTL" run "$T/argv.py" --json -- --events --json -- >"$T/result.json" 2>"$T/err" || fail "argv.py -- --events: $(cat "$T/err")"
expect_eq "anvilctl's words after -- are the tool's" '["<tool>", "--events", "--json", "--"]' "$(j .stdout)"
"$CTL" run "$T/argv.py" -- a b >"$T/human" 2>"$T/err" || fail "argv.py human: $(cat "$T/err")"
expect_eq "the human output with args" '  stdout| ["<tool>", "a", "b"]' "$(grep '^  stdout|' "$T/human")"
"$CTL" run "$T/argv.py" extra >"$T/out" 2>"$T/err"
expect_eq "a word after the tool without --: a usage error" "$usage_rc" "$?"

# anvilctl holds them to the server's bounds before it sends anything.
"$CTL" run "$T/argv.py" -- $(seq 257) >"$T/out" 2>"$T/err"
expect_eq "257 args: a usage error" "$usage_rc" "$?"
expect_eq "257 args: the message" "anvilctl: the tool's arguments: 257 arguments is over the limit of 256" "$(cat "$T/err")"
argv_json -- $(seq 256)
expect_eq "256 args: the limit itself is taken" 257 "$(j '.stdout | fromjson | length')"
long=$(head -c 4000 /dev/zero | tr '\0' a)
"$CTL" run "$T/argv.py" -- $(for _ in $(seq 17); do echo "$long"; done) >"$T/out" 2>"$T/err"
expect_eq "17 args of 4000 bytes: a usage error" "$usage_rc" "$?"
expect_eq "17 args of 4000 bytes: the message" \
        "anvilctl: the tool's arguments: 68000 bytes of arguments is over the limit of 65536" "$(cat "$T/err")"
argv_json -- $(for _ in $(seq 16); do echo "$long"; done)
expect_eq "16 args of 4000 bytes: taken" 17 "$(j '.stdout | fromjson | length')"

# The server's own checks, on requests anvilctl would not send (frametool packs them).
FT="$ANVIL_BUILD/tests/frametool"
refused() { # KIND CODE FIELD MESSAGE-REGEX
        local out
        out=$("$FT" "$ANVIL_SOCKET" "args:$1" 2>&1)
        expect_match "args $1: refused" "^error code=$2 field=$3 message=$4" "$out"
}
refused notarray bad_message 'run_request\.args' 'run_request\.args: '
refused notstring bad_message 'run_request\.args\[1\]' 'run_request\.args\[1\]: '
refused nul bad_message 'run_request\.args\[0\]' 'run_request\.args\[0\]: '
refused long bad_message 'run_request\.args\[0\]' 'run_request\.args\[0\]: '
refused overdecoder bad_message 'run_request\.args' 'run_request\.args: 1025 items is over the limit of 1024$'
refused toomany bad_request 'run_request\.args' 'run_request\.args: 257 arguments is over the limit of 256$'
refused total bad_request 'run_request\.args' 'run_request\.args: 68000 bytes of arguments is over the limit of 65536$'
expect_eq "args ok (control): the run starts" "ok run_event" "$("$FT" "$ANVIL_SOCKET" args:ok 2>&1)"
expect_serving
