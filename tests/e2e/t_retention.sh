# Run directories are kept under a retention setting, and the number of live runs is capped.
# A supervisor of this test's own (--keep-runs 3 --max-runs 4, its own socket, state dir and
# uids) takes runs directly (the protocol is the broker's):
#   - 5 runs a second or more apart: only the 3 newest run directories remain;
#   - 5 runs in quick succession (several in one second): still only the 3 newest remain;
# and another (--max-runs 1) refuses a second run with "busy" (anvilctl exit 123) while a
# first one (a 3 s sleep) is live, and takes a run again once it has ended (the control).
. "$(dirname "$0")/lib.sh"

MYPID=
stop_sup() {
        if [ -n "$MYPID" ]; then
                kill -TERM "$MYPID" 2>/dev/null
                wait "$MYPID" 2>/dev/null
                MYPID=
        fi
}
trap 'stop_sup; rm -rf "$T"' EXIT

start_sup() { # name, supervisor options...
        local name=$1
        shift
        SOCK="$T/$name.sock"
        STATE="$T/$name"
        "$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$SOCK" --state-dir "$STATE" --uid-base $((ANVIL_E2E_UID_BASE + 100000000)) "$@" \
                >"$T/$name.log" 2>&1 &
        MYPID=$!
        for _ in $(seq 300); do
                [ -S "$SOCK" ] && break
                kill -0 "$MYPID" 2>/dev/null || fail "supervisor $name exited: $(cat "$T/$name.log")"
                sleep 0.1
        done
        [ -S "$SOCK" ] || fail "supervisor $name did not start: $(cat "$T/$name.log")"
        echo "ok: supervisor $name (pid $MYPID) listening with $*"
}
my_run() { # tool, anvilctl options...: the result in $T/result.json
        ANVIL_SOCKET="$SOCK" run_json "$@"
}
run_dirs() {
        ls "$STATE/runs" | sort | paste -sd' '
}
sorted() {
        printf '%s\n' "$@" | sort | paste -sd' '
}

tool quick.py <<<'print("ok")'
start_sup keep --keep-runs 3 --max-runs 4

ids=()
for i in 1 2 3 4 5; do
        my_run "$T/quick.py"
        [ "$(j .status)" = ok ] || fail "run $i: status $(j .status)"
        ids+=("$(j .run_id)")
        [ -d "$STATE/runs/$(j .run_id)" ] || fail "run $i: its directory is not there right after it ended"
        sleep 1.1
done
expect_eq "5 runs a second apart: distinct run ids" 5 "$(printf '%s\n' "${ids[@]}" | sort -u | wc -l)"
expect_eq "5 runs a second apart: the run directories kept" "$(sorted "${ids[@]:2}")" "$(run_dirs)"

# Several runs in one second: "newest" is still the order they ran in.
ids=()
for i in 1 2 3 4 5; do
        my_run "$T/quick.py"
        [ "$(j .status)" = ok ] || fail "quick run $i: status $(j .status)"
        ids+=("$(j .run_id)")
done
echo "    run ids, oldest first: ${ids[*]}"
# Checked, but reported at the end, so that the --max-runs checks below still run.
late_failure=
if [ "$(sorted "${ids[@]:2}")" = "$(run_dirs)" ]; then
        echo "ok: 5 runs in quick succession: the 3 newest run directories are kept"
else
        late_failure="5 runs in quick succession: kept $(run_dirs), not the 3 newest ($(sorted "${ids[@]:2}"))"
        missing=$(for id in "${ids[@]:2}"; do [ -d "$STATE/runs/$id" ] || echo "$id"; done | paste -sd' ')
        [ -z "$missing" ] || late_failure="$late_failure; the directories of the newest runs, whose results had just named them, are gone: $missing"
        echo "NOT OK (reported at the end): $late_failure"
fi
stop_sup
echo "ok: supervisor stopped"

# --max-runs 1: a second run while the first is live is refused with "busy".
start_sup one --max-runs 1
tool sleep3.py <<'PY'
import time
time.sleep(3)
print("slept")
PY
ANVIL_SOCKET="$SOCK" "$CTL" run "$T/sleep3.py" --timeout 20 --json >"$T/first.json" 2>"$T/first.err" &
first=$!
for _ in $(seq 100); do
        [ -n "$(ls "$STATE/runs" 2>/dev/null)" ] && break
        sleep 0.05
done
[ -n "$(ls "$STATE/runs")" ] || fail "the first run did not start"
sleep 0.5
kill -0 "$first" 2>/dev/null || fail "the first run ended before the second was tried: $(cat "$T/first.err")"
ANVIL_SOCKET="$SOCK" "$CTL" run "$T/quick.py" --json >"$T/second.json" 2>"$T/second.err"
rc=$?
kill -0 "$first" 2>/dev/null || fail "the first run was no longer live when the second was refused"
expect_eq "second run while the first is live: anvilctl exit code (refused)" 123 "$rc"
expect_match "second run: the refusal" '^anvilctl: busy: ' "$(cat "$T/second.err")"
echo "    $(cat "$T/second.err")"
expect_eq "second run: nothing on stdout" "" "$(cat "$T/second.json")"
wait "$first" || fail "the first run: anvilctl exited $?: $(cat "$T/first.err")"
expect_eq "the first run's status" ok "$(jq -r .status "$T/first.json")"
expect_eq "the first run's stdout" slept "$(jq -r .stdout "$T/first.json")"
# Control: with the first run over, the same run is taken.
my_run "$T/quick.py"
expect_eq "control: the same run once the first has ended" ok "$(j .status)"
stop_sup
echo "ok: supervisor stopped"
[ -z "$late_failure" ] || fail "$late_failure"
