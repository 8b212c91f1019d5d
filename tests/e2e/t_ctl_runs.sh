# Past runs and tasks (issue 12, deliverable 5): `anvilctl runs` and `anvilctl tasks` list the
# caller's own, newest first, with status, time and tool; `anvilctl show ID` prints a stored
# run or task as run and submit printed it; `anvilctl trace RUN_ID` shows a run's events. Each
# user sees only their own; root sees all. A result stored without its owner (as every result
# stored before the broker kept them) is root's alone. `submit -o DIR` copies the task's
# deliverable. A broker of the test's own (start_bro) on the suite's supervisor and a
# scripted model; clients as uids 65533 (A) and 65532 (B), and root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
A=65533
B=65532
start_bro b
SOCK="$T/b.sock"
ctl_as() { # UID anvilctl-args...
        local uid=$1
        shift
        ANVIL_SOCKET="$SOCK" as_uid "$uid" "$CTL" "$@"
}
for n in one two three; do tool "$n.py" <<<"print('I am $n')"; done
tool b.py <<<'print("B was here")'

# ---- runs: A's three, B's one ----
ids=()
for n in one two three; do
        ctl_as $A run "$T/$n.py" >"$T/$n.human" 2>"$T/ctl.err" || fail "A: run $n.py: $(cat "$T/ctl.err")"
        ids+=("$(sed -n 's/^run \([0-9A-Za-z-]*\): .*/\1/p' "$T/$n.human")")
done
ctl_as $B run "$T/b.py" --json >"$T/result.json" 2>"$T/ctl.err" || fail "B: run: $(cat "$T/ctl.err")"
RUN_B=$(j .run_id)

# runs_col UID FIELD: the listing's FIELD (jq) of each entry, one line
runs_col() {
        ctl_as "$1" runs --json | jq -r "[.entries[] | $2] | join(\" \")"
}
expect_eq "A's runs, newest first" "${ids[2]} ${ids[1]} ${ids[0]}" "$(runs_col $A .id)"
expect_eq "A's runs: tools" "three.py two.py one.py" "$(runs_col $A .tool)"
expect_eq "A's runs: status" "ok ok ok" "$(runs_col $A .status)"
expect_eq "A's runs: owner" "$A $A $A" "$(runs_col $A .uid)"
expect_match "A's runs: time" '^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z$' "$(runs_col $A '.time' | cut -d' ' -f1)"
expect_eq "B's runs: its own alone" "$RUN_B b.py" "$(runs_col $B '"\(.id) \(.tool)"')"
expect_eq "root's runs: everyone's, newest first" "$RUN_B ${ids[2]} ${ids[1]} ${ids[0]}" "$(ANVIL_SOCKET="$SOCK" "$CTL" runs --json | jq -r '[.entries[].id] | join(" ")')"
expect_eq "runs -n 2" "${ids[2]} ${ids[1]}" "$(ctl_as $A runs -n 2 --json | jq -r '[.entries[].id] | join(" ")')"
ctl_as $A runs >"$T/runs.human" || fail "runs (human) exited $?"
expect_eq "runs (human): a header and three lines" 4 "$(wc -l <"$T/runs.human")"
expect_match "runs (human): the newest first" "^${ids[2]} +ok +20[0-9-]+T[0-9:]+Z +$A +three.py$" "$(sed -n 2p "$T/runs.human")"

# ---- show: as run printed it ----
ctl_as $A show "${ids[1]}" >"$T/show.human" 2>"$T/show.err" || fail "A: show: $(cat "$T/show.err")"
# The one difference: run showed the tool's lines among the events as they came ("  stdout| "),
# show gives them as a block after the status line (their places are not stored).
expect_eq "run showed the tool's line live" "  stdout| I am two" "$(grep '^  stdout| ' "$T/two.human")"
expect_eq "show gives it as a block" "stdout:
  I am two" "$(awk '/^stdout:$/ {b = 1; print; next} b && /^  / {print; next} {b = 0}' "$T/show.human")"
# same_run RUN_OUT SHOW_OUT: the two alike but for the output's form
same_run() {
        diff <(grep -v '^  stdout| ' "$1") <(awk '/^stdout:$/ {b = 1; next} b && /^  / {next} {b = 0; print}' "$2")
}
same_run "$T/two.human" "$T/show.human" >"$T/show.diff" || fail "show prints the run otherwise than run did: $(cat "$T/show.diff")"
echo "ok: show ${ids[1]} prints what run printed, line for line, the tool's output as a block"
ANVIL_SOCKET="$SOCK" as_uid $B "$CTL" run "$T/b.py" --json >"$T/b1.json"
ctl_as $B show "$(jq -r .run_id "$T/b1.json")" --json >"$T/b2.json"
diff <(jq -S 'del(.request_id)' "$T/b1.json") <(jq -S 'del(.request_id)' "$T/b2.json") >"$T/json.diff" ||
        fail "show --json differs from run --json: $(cat "$T/json.diff")"
expect_eq "show --json: the same run, its request id aside" "$(jq -r .run_id "$T/b1.json")" "$(jq -r .run_id "$T/b2.json")"

# ---- another user's: refused (show, trace, the listing); root's: all ----
ctl_as $B show "${ids[0]}" >"$T/x.out" 2>"$T/x.err"
expect_eq "B shows A's run: exit (refused)" 123 "$?"
expect_eq "B shows A's run: refused" "anvilctl: forbidden: run ${ids[0]} belongs to another user" "$(cat "$T/x.err")"
expect_eq "B shows A's run: nothing printed" "" "$(cat "$T/x.out")"
ctl_as $B trace "${ids[0]}" >"$T/x.out" 2>"$T/x.err"
expect_eq "B traces A's run: exit (refused)" 123 "$?"
expect_eq "B traces A's run: refused" "anvilctl: forbidden: run ${ids[0]} belongs to another user" "$(cat "$T/x.err")"
ctl_as $A trace "${ids[0]}" >"$T/trace.out" 2>"$T/x.err" || fail "A traces its run: $(cat "$T/x.err")"
expect_eq "A traces its run: the first line" "run ${ids[0]}: ok" "$(head -1 "$T/trace.out")"
grep -q "runner" "$T/trace.out" || fail "A's trace shows no event: $(cat "$T/trace.out")"
echo "ok: A traces its own run"
ANVIL_SOCKET="$SOCK" "$CTL" show "${ids[0]}" >"$T/root.show" 2>"$T/x.err" || fail "root shows A's run: $(cat "$T/x.err")"
same_run "$T/one.human" "$T/root.show" >/dev/null || fail "root's show differs from A's run"
echo "ok: root shows A's run"
ctl_as $A show 20200101T000000000000-0000000000000000 >/dev/null 2>"$T/x.err"
expect_eq "show of nothing stored" "anvilctl: not_found: no run 20200101T000000000000-0000000000000000 is stored here" "$(cat "$T/x.err")"
ctl_as $A show ../../etc/passwd >/dev/null 2>"$T/x.err"
expect_eq "show of a path" "anvilctl: bad_request: show_request.id: not a run or task id" "$(cat "$T/x.err")"

# ---- a result stored without its owner (before the broker kept them): root's alone ----
rm "$T/b/results/${ids[0]}.meta"
expect_eq "A's runs without the one of no owner" "${ids[2]} ${ids[1]}" "$(runs_col $A .id)"
ctl_as $A show "${ids[0]}" >/dev/null 2>"$T/x.err"
expect_eq "A shows a run of no owner" "anvilctl: forbidden: run ${ids[0]} was stored before the broker recorded whose results are: only root may read it" "$(cat "$T/x.err")"
expect_eq "root lists it, owner unknown" "${ids[0]} null" "$(ANVIL_SOCKET="$SOCK" "$CTL" runs --json | jq -r ".entries[] | select(.id == \"${ids[0]}\") | \"\(.id) \(.uid)\"")"
ANVIL_SOCKET="$SOCK" "$CTL" show "${ids[0]}" >"$T/root.show" 2>"$T/x.err" || fail "root shows a run of no owner: $(cat "$T/x.err")"
same_run "$T/one.human" "$T/root.show" >/dev/null || fail "root's show of a run of no owner differs"
echo "ok: root shows a run of no owner"

# ---- tasks: listed, shown, their deliverable copied out ----
model_script m <<'PY'
[code('with open("artifacts/out.csv", "w") as f:\n    f.write("region,total\\nnorth,3\\n")\nfinal_answer(1)\n')] * 2
PY
start_model m
printf '{"task": "sum by region\\nand write out.csv", "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' "$PORT_m" >"$T/task.json"
mkdir "$T/deliv" && chown $A "$T/deliv"
ctl_as $A submit "$T/task.json" -o "$T/deliv" >"$T/task.human" 2>"$T/task.err" || fail "A: submit -o: $(cat "$T/task.err")"
TASK=$(task_id_of "$T/task.human")
[ -n "$TASK" ] || fail "no task id in: $(head -3 "$T/task.human")"
expect_eq "submit -o: the deliverable copied" "region,total north,3" "$(paste -sd' ' "$T/deliv/out.csv")"
expect_eq "submit -o: what it said" "anvilctl: copied 2 of 2 artifacts ($(( $(stat -c %s "$T/deliv/out.csv") + $(stat -c %s "$T/deliv/tool.py") )) bytes) to $T/deliv" "$(tail -1 "$T/task.err")"
ctl_as $B submit "$T/task.json" >"$T/taskb.human" 2>&1 || fail "B: submit: $(cat "$T/taskb.human")"
TASK_B=$(task_id_of "$T/taskb.human")
expect_eq "A's tasks" "$TASK ok sum by region" "$(ctl_as $A tasks --json | jq -r '.entries[] | "\(.id) \(.status) \(.tool)"')"
expect_eq "B's tasks" "$TASK_B" "$(ctl_as $B tasks --json | jq -r '[.entries[].id] | join(" ")')"
expect_eq "root's tasks, newest first" "$TASK_B $TASK" "$(ANVIL_SOCKET="$SOCK" "$CTL" tasks --json | jq -r '[.entries[].id] | join(" ")')"
expect_eq "A's runs now hold the task's, named for it" "describe step 1" \
        "$(ctl_as $A runs --json | jq -r "[.entries[] | select(.uid == $A) | .tool] | .[0:2] | reverse | join(\" \")")"
ctl_as $A show "$TASK" >"$T/task.show" 2>"$T/x.err" || fail "A shows its task: $(cat "$T/x.err")"
sed -n "/^task $TASK: /,\$p" "$T/task.human" >"$T/task.tail"
diff <(sed 1d "$T/task.show") "$T/task.tail" >"$T/task.diff" || fail "show prints the task otherwise than submit did: $(cat "$T/task.diff")"
echo "ok: show $TASK prints what submit printed of its result"
ctl_as $B show "$TASK" >/dev/null 2>"$T/x.err"
expect_eq "B shows A's task" "anvilctl: forbidden: task $TASK belongs to another user" "$(cat "$T/x.err")"
ANVIL_SOCKET="$SOCK" as_uid $B "$ANVIL_BUILD/tests/frametool" "$SOCK" "artifact:$TASK:out.csv" >"$T/x.out" 2>&1
expect_eq "B asks for A's task's artifact" "error code=forbidden field=artifact_request.id message=task $TASK belongs to another user" "$(cat "$T/x.out")"

# ---- a task stored without its record: its owner is its trace's first line ----
rm "$T/b/tasks/$TASK.meta"
expect_eq "A's tasks, the one of no record too" "$TASK" "$(ctl_as $A tasks --json | jq -r '[.entries[].id] | join(" ")')"
expect_eq "B's tasks without it" "$TASK_B" "$(ctl_as $B tasks --json | jq -r '[.entries[].id] | join(" ")')"
ctl_as $A show "$TASK" >"$T/task.show2" 2>"$T/x.err" || fail "A shows its task of no record: $(cat "$T/x.err")"
diff "$T/task.show" "$T/task.show2" >/dev/null || fail "the task of no record is shown otherwise"
ctl_as $B show "$TASK" >/dev/null 2>"$T/x.err"
expect_eq "B shows A's task of no record" "anvilctl: forbidden: task $TASK belongs to another user" "$(cat "$T/x.err")"
