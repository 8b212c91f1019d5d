# anvilctl's exit status (docs/cli.md, "Exit status"), through the suite's daemons: the
# tool's own exit code passes through (0, 3; 123, one of Anvil's own, is reported as 1 and
# the summary says the real one), a signal the tool dies of is 128+N, a timeout 124, a
# blocked tool 120, a memory kill 121, a usage error 125, a broker that cannot be reached 126,
# a request the broker refuses (an error frame) 123; `submit` 0 for a task that delivered and
# 120 for one that failed. Each code is checked with the result that gives it, human and
# --json alike, so that a code and a result cannot disagree. (122, the sandbox failed:
# t_landlock_refused.sh, where a jail is made to fail its promise.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"

# exits WHAT WANT ARGS...: anvilctl ARGS (human output) exits WANT, and so does ARGS --json,
# whose RunResult is then in $T/result.json.
exits() {
        local what=$1 want=$2 rc
        shift 2
        "$CTL" "$@" >"$T/human" 2>"$T/err"
        rc=$?
        expect_eq "$what: exit status" "$want" "$rc"
        "$CTL" "$@" --json >"$T/result.json" 2>"$T/err"
        rc=$?
        expect_eq "$what: exit status with --json" "$want" "$rc"
        echo "ok: $what: anvilctl exits $want ($(grep -m1 "^run " "$T/human"))"
}

tool ok.py <<<'print("fine")'
exits "a tool that exits 0" 0 run "$T/ok.py"
expect_eq "exit 0: status" "ok 0" "$(j '"\(.status) \(.exit_code)"')"

tool three.py <<<'import sys; print("three"); sys.exit(3)'
exits "a tool that exits 3" 3 run "$T/three.py"
expect_eq "exit 3: status" "error 3" "$(j '"\(.status) \(.exit_code)"')"
expect_match "exit 3: the summary" '^run [0-9T]+-[0-9a-f]+: error \(exit code 3\) in ' "$(grep -m1 "^run " "$T/human")"

# An uncaught exception is Python's exit 1.
tool raise.py <<<'raise KeyError("amount")'
exits "a tool that raises" 1 run "$T/raise.py"

# 123 is Anvil's (refused): the tool's 123 is reported as 1, its real code in the summary.
tool t123.py <<<'import sys; sys.exit(123)'
exits "a tool that exits 123" 1 run "$T/t123.py"
expect_eq "exit 123: the RunResult keeps the tool's code" "error 123" "$(j '"\(.status) \(.exit_code)"')"
expect_match "exit 123: the summary says the real code" '^run [0-9T]+-[0-9a-f]+: error \(exit code 123\) in ' \
        "$(grep -m1 "^run " "$T/human")"
grep -qxF "note: the tool exited 123, in 120..127, which anvilctl keeps for Anvil's own outcomes: it exits 1" "$T/human" ||
        fail "exit 123: no note says why anvilctl exits 1: $(cat "$T/human")"
# The control: 119, just below Anvil's range, passes through.
tool t119.py <<<'import sys; sys.exit(119)'
exits "control: a tool that exits 119" 119 run "$T/t119.py"
grep -q '^note: the tool exited' "$T/human" && fail "control: exit 119 has the note of a code in 120..127"

# A signal the tool sends itself (os.kill is refused by the policy; abort() raises SIGABRT in
# the process itself): not Anvil's, so 128 + 6.
tool abort.py <<<'import os; print("aborting", flush=True); os.abort()'
exits "a tool that aborts (SIGABRT)" 134 run "$T/abort.py"
expect_eq "abort: the result" "error SIGABRT null" "$(j '"\(.status) \(.signal) \(.killed)"')"

tool sleep.py <<<'import time; time.sleep(60)'
exits "a tool past its wall clock" 124 run "$T/sleep.py" --timeout 1
expect_eq "timeout: the result" "killed|killed: timeout" "$(j '"\(.status)|\(.killed)"')"

tool passwd.py <<<'print(open("/etc/passwd").read())'
exits "a blocked tool" 120 run "$T/passwd.py"
expect_eq "blocked: the result" blocked "$(j .status)"

tool hog.py <<'PY'
chunks = []
while True:
    chunks.append(b"x" * (8 * 1024 * 1024))
PY
exits "a tool over its memory" 121 run "$T/hog.py" --memory 128
expect_match "memory: the result" '^killed\|killed: memory \(peak ' "$(j '"\(.status)|\(.killed)"')"

# Anvil's own: usage, unreachable, refused.
"$CTL" run "$T/ok.py" --timeout 0 >"$T/out" 2>"$T/err"
expect_eq "usage (--timeout 0): exit status" 125 "$?"
"$CTL" run "$T/ok.py" --cap gpu >"$T/out" 2>"$T/err"
expect_eq "usage (--cap gpu): exit status" 125 "$?"
"$CTL" frobnicate >"$T/out" 2>"$T/err"
expect_eq "usage (an unknown command): exit status" 125 "$?"
ANVIL_SOCKET="$T/nothing.sock" "$CTL" run "$T/ok.py" >"$T/out" 2>"$T/err"
expect_eq "unreachable: exit status" 126 "$?"
expect_match "unreachable: the message" "^anvilctl: cannot reach Anvil at $T/nothing.sock: " "$(cat "$T/err")"
ANVIL_SOCKET="$T/nothing.sock" "$CTL" probe >"$T/out" 2>"$T/err"
expect_eq "unreachable (probe): exit status" 126 "$?"

# Refused: a broker of this test's own that takes one connection at once, held by another uid.
start_bro one --max-conns 1 --max-conns-per-uid 1
hold one-held 65533 "$T/one.sock" 1
ANVIL_SOCKET="$T/one.sock" "$CTL" run "$T/ok.py" >"$T/out" 2>"$T/err"
expect_eq "refused (busy): exit status" 123 "$?"
expect_match "refused (busy): the error frame, printed" '^anvilctl: busy: too many connections to the broker' "$(cat "$T/err")"
release one-held
ANVIL_SOCKET="$T/one.sock" "$CTL" run "$T/ok.py" >"$T/out" 2>"$T/err"
expect_eq "control: the same broker, the connection released: exit status" 0 "$?"

# ---- submit: 0 only for a task that delivered ----
model_script deliver <<'PY'
[code('with open("artifacts/n.txt", "w") as f:\n    f.write("5\\n")\nfinal_answer(5)\n')]
PY
model_script never <<'PY'
[reply("I would sum the amounts."), reply("Summing them now, in my head.")]
PY
start_model deliver
start_model never
printf '{"task": "write 5", "max_steps": 2, "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' \
        "$PORT_deliver" >"$T/deliver.task.json"
printf '{"task": "write 5", "max_steps": 2, "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' \
        "$PORT_never" >"$T/never.task.json"
"$CTL" submit "$T/deliver.task.json" --json >"$T/deliver.json" 2>"$T/deliver.err"
expect_eq "submit, a task that delivered: exit status" 0 "$?"
expect_eq "submit, a task that delivered: its status" ok "$(jq -r .status "$T/deliver.json")"
"$CTL" submit "$T/never.task.json" >"$T/never.human" 2>"$T/never.err"
expect_eq "submit, a task that failed: exit status" 120 "$?"
grep -qE '^task task-[0-9T]+-[0-9a-f]+: failed: the step limit of 2 was reached' "$T/never.human" ||
        fail "submit, a task that failed: its result line: $(tail -3 "$T/never.human")"
ANVIL_SOCKET="$T/nothing.sock" "$CTL" submit "$T/deliver.task.json" >"$T/out" 2>"$T/err"
expect_eq "submit, unreachable: exit status" 126 "$?"
printf '{"task": "x", "capabilities_approved": ["gpu"], "model": {"url": "http://127.0.0.1:1/v1"}}\n' >"$T/gpu.task.json"
"$CTL" submit "$T/gpu.task.json" >"$T/out" 2>"$T/err"
expect_eq "submit, refused by the broker: exit status" 123 "$?"
expect_eq "submit, refused: the broker's message" \
        "anvilctl: bad_request: task_submit.capabilities_approved: 'gpu' is not a capability (there are: network, process)" \
        "$(cat "$T/err")"
echo "ok: submit exits 0 delivered, 120 failed, 123 refused, 126 unreachable"
