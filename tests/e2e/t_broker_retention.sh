# The broker's retention (issue 9): DIR/results keeps the newest --keep-results results, and
# DIR/tasks with DIR/traces the newest --keep-tasks ended tasks (each its result, its
# deliverable's source and its trace), pruned after the result has gone to its client. A
# broker of this test's own (--keep-results 3 --keep-tasks 2), against the suite's supervisor
# and a scripted model server:
#   runs: three are all kept (at the limit, nothing goes: the control); after five, the three
#       newest remain, the two oldest are gone
#   tasks: two are kept; after a third, the oldest's three files are gone, the others whole
#   restarted with --keep-results 1: the newest result alone remains, pruned at the start
#   a bad --keep-results or --keep-tasks: refused with its message (exit 2)
# Each result has its record of whose it is (<id>.meta) beside it, pruned with it, and a task
# its deliverable's artifacts (<task_id>.artifacts/), the broker's own copy (issue 12):
#   a supervisor of the test's own that keeps one run directory (--keep-runs 1) removes the
#       deliverable's run directory after two more runs (the control: the run's artifact is
#       then no longer served by its run id); the task's artifacts are still copied out by
#       its task id, byte for byte
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"

model_script m <<'PY'
[code('with open("artifacts/out.txt", "w") as f:\n    f.write("1\\n")\nfinal_answer(1)\n')] * 3
PY
start_model m
printf '{"task": "write 1", "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' "$PORT_m" >"$T/task.json"
tool hello.py <<<'print("hello")'

start_broker() { # options...
        "$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/b.sock" --state-dir "$T/b" "$@" \
                >"$T/b.log" 2>&1 &
        BRO=$!
        OWN_PIDS+=("$BRO")
        for _ in $(seq 100); do [ -S "$T/b.sock" ] && return; sleep 0.1; done
        fail "the broker did not start: $(cat "$T/b.log")"
}
export ANVIL_SOCKET="$T/b.sock"
# results_are WHAT IDS...: until results/ holds exactly these (up to 5 s: pruning follows
# the result to its client)
results_are() {
        local what=$1 want got
        shift
        want=$(printf '%s.json\n' "$@" | sort | paste -sd' ')
        for _ in $(seq 50); do
                got=$(ls "$T/b/results" | grep '\.json$' | sort | paste -sd' ')
                [ "$got" = "$want" ] && [ "$(ls "$T/b/results" | grep '\.meta$' | sort | paste -sd' ')" = "${want//.json/.meta}" ] && break
                [ "$got" = "$want" ] && break
                sleep 0.1
        done
        expect_eq "$what" "$want" "$got"
}

start_broker --keep-results 3 --keep-tasks 2
grep -q "keeping 3 results, 2 tasks" "$T/b.log" || fail "the log does not say what is kept: $(cat "$T/b.log")"
ids=()
for i in 1 2 3; do
        run_json "$T/hello.py"
        ids+=("$(j .run_id)")
done
results_are "three runs, all kept" "${ids[@]}"
for i in 4 5; do
        run_json "$T/hello.py"
        ids+=("$(j .run_id)")
done
results_are "five runs: the three newest" "${ids[@]:2}"

# Tasks (each also stores two runs, its describe run and its action: results/ stays at 3).
tids=()
for i in 1 2 3; do
        "$CTL" submit "$T/task.json" --json >"$T/task.out" 2>"$T/task.err" || fail "task $i: exited $?: $(cat "$T/task.err")"
        expect_eq "task $i's status" ok "$(jq -r .status "$T/task.out")"
        tids+=("$(jq -r .task_id "$T/task.out")")
        if [ "$i" = 2 ]; then
                for t in "${tids[@]}"; do
                        [ -f "$T/b/tasks/$t.json" ] && [ -f "$T/b/tasks/$t.tool.py" ] && [ -f "$T/b/traces/$t.jsonl" ] ||
                                fail "two tasks: $t is not whole: $(ls "$T/b/tasks" "$T/b/traces")"
                done
                echo "ok: two tasks, both kept (the control)"
        fi
done
want="${tids[1]}.artifacts ${tids[1]}.json ${tids[1]}.meta ${tids[1]}.tool.py ${tids[2]}.artifacts ${tids[2]}.json ${tids[2]}.meta ${tids[2]}.tool.py | ${tids[1]}.jsonl ${tids[2]}.jsonl"
for _ in $(seq 50); do
        got="$(ls "$T/b/tasks" | sort | paste -sd' ') | $(ls "$T/b/traces" | sort | paste -sd' ')"
        [ "$got" = "$want" ] && break
        sleep 0.1
done
expect_eq "three tasks: the two newest, whole" "$want" "$got"
expect_eq "results/ after the tasks" 3 "$(ls "$T/b/results" | grep -c '\.json$')"
expect_eq "their records" 3 "$(ls "$T/b/results" | grep -c '\.meta$')"

# Restarted with a lower count: applied at the start.
newest=$(ls "$T/b/results" | grep '\.json$' | sort | tail -1)
kill -TERM "$BRO"
wait "$BRO"
start_broker --keep-results 1
results_are "restarted with --keep-results 1" "${newest%.json}"

# Bad values.
for opt in --keep-results --keep-tasks; do
        for v in 0 1000001 -1 1k; do
                out=$("$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$T/x.sock" --listen "$T/y.sock" --state-dir "$T/z" "$opt" "$v" 2>&1)
                rc=$?
                expect_eq "$opt $v: exit" 2 "$rc"
                expect_eq "$opt $v: why" "anvil-broker: $opt: '$v' is not a whole number within 1..1000000 (see --help)" "$out"
        done
done

# ---- the deliverable's artifacts, out of reach of the supervisor's retention ----
kill -TERM "$BRO"
wait "$BRO"
start_sup keep1 935000000 --keep-runs 1
"$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$T/keep1.sock" --listen "$T/b.sock" --state-dir "$T/k" \
        >"$T/k.log" 2>&1 &
BRO=$!
OWN_PIDS+=("$BRO")
for _ in $(seq 100); do grep -q ": listening on " "$T/k.log" && break; sleep 0.1; done
model_script k <<'PY'
[code('with open("artifacts/out.txt", "w") as f:\n    f.write("1\\n")\nfinal_answer(1)\n')]
PY
start_model k
printf '{"task": "write 1", "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' "$PORT_k" >"$T/taskk.json"
"$CTL" submit "$T/taskk.json" --json >"$T/task.out" 2>"$T/task.err" || fail "the kept task: exited $?: $(cat "$T/task.err")"
TASK=$(jq -r .task_id "$T/task.out")
D=$(jq -r .deliverable.run_id "$T/task.out")
[ -f "$T/keep1/runs/$D/artifacts/out.txt" ] || fail "the deliverable's run directory is not there to begin with: $D: $(ls -R "$T/keep1/runs" | head -20)"
expect_eq "the broker's copy, made" "1" "$(cat "$T/k/tasks/$TASK.artifacts/out.txt")"
[ ! -e "$T/k/tasks/$TASK.runs" ] || fail "the task's other runs' copies are left: $(ls -R "$T/k/tasks/$TASK.runs")"
run_json "$T/hello.py"
run_json "$T/hello.py"
for _ in $(seq 50); do [ -d "$T/keep1/runs/$D" ] || break; sleep 0.1; done
[ ! -d "$T/keep1/runs/$D" ] || fail "the supervisor kept the deliverable's run directory: $(ls "$T/keep1/runs")"
echo "ok: the supervisor's retention removed the deliverable's run directory"
out=$("$ANVIL_BUILD/tests/frametool" "$T/b.sock" "artifact:$D:out.txt" 2>&1)
expect_eq "the artifact by its run id (the control)" \
        "error code=not_found field=artifact_request.path message='out.txt' of run $D is no longer kept (No such file or directory)" "$out"
mkdir "$T/kept"
"$CTL" show "$TASK" -o "$T/kept" >/dev/null 2>"$T/show.err" || fail "show -o of the task: $(cat "$T/show.err")"
expect_eq "the deliverable's artifact, copied out by the task's id" \
        "$(jq -r '.deliverable.artifacts[] | select(.path == "out.txt") | .sha256' "$T/task.out")" "$(sha256sum "$T/kept/out.txt" | cut -d' ' -f1)"
