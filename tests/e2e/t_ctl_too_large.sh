# Inputs too large for one frame are the user's to fix: anvilctl says so and exits 125 (a usage
# error) before it connects, for submit, whose inputs travel in the frame (a run's go as fds) (issue 9: today's build exited 3, "cannot be
# reached"). Checked against a socket that does not exist, so that only a check made before
# connecting can give 2; and against the broker, so that nothing reached it. Controls: the
# same inputs within the frame run (exit 0), and with no server, a request that fits exits 126.
. "$(dirname "$0")/lib.sh"
head -c $((9 * 1024 * 1024)) /dev/zero | tr '\0' 'a' >"$T/a.csv"
cp "$T/a.csv" "$T/b.csv"
tool t.py <<<'import os; print(sorted(os.listdir("inputs")))'
# A run's inputs go as fds (t_input_fd), not in the frame: 18 MiB of them is no usage error,
# and the run has both.
ANVIL_SOCKET="$T/nothing.sock" "$CTL" run "$T/t.py" --input "$T/a.csv" --input "$T/b.csv" >"$T/out" 2>"$T/err"
expect_eq "run, 18 MiB of inputs as fds, no server: exit (unreachable)" 126 "$?"
run_json "$T/t.py" --input "$T/a.csv" --input "$T/b.csv"
expect_eq "run, 18 MiB of inputs as fds" "ok ['a.csv', 'b.csv']" "$(j '"\(.status) \(.stdout)"')"
cat >"$T/task.json" <<JSON
{"task": "sum the columns", "inputs": ["a.csv", "b.csv"]}
JSON
ANVIL_SOCKET="$T/nothing.sock" "$CTL" submit "$T/task.json" >"$T/out" 2>"$T/err"
expect_eq "submit, 18 MiB of inputs: exit (usage)" 125 "$?"
expect_match "submit: what it says" "^anvilctl: the task does not fit in one frame of 16777216 bytes: its 2 input files hold 18874368 bytes" \
        "$(cat "$T/err")"
# Controls.
run_json "$T/t.py" --input "$T/a.csv"
expect_eq "control: 9 MiB of inputs run" "ok ['a.csv']" "$(j '"\(.status) \(.stdout)"')"
ANVIL_SOCKET="$T/nothing.sock" "$CTL" run "$T/t.py" --input "$T/a.csv" >"$T/out" 2>"$T/err"
expect_eq "control: no server, a request that fits: exit (unreachable)" 126 "$?"
