# Every run's cgroup is removed after it: after a run that ends, after one killed by its
# timeout, after one whose client went away (cancelled), and after the supervisor itself was
# killed (SIGKILL: nothing of it cleans up; the next supervisor on the same state directory
# sweeps what is left at start-up, and says so). Each "nothing left" has its control: while a
# run is live its cgroup is there, and after the SIGKILL the leftover is there until the sweep.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "no cgroup is delegated to an ordinary user here: rootless runs have none, and say so"

# No spares: every cgroup below the bases is a run's.
start_sup cl 600000000 --spares 0
log="$T/cl.log"
[ -n "$(cg_bases "$log")" ] || fail "no cgroup base in the log: $(cat "$log")"
expect_eq "bases exist" 0 "$(for b in $(cg_bases "$log"); do [ -d "$b" ] || echo "$b"; done | wc -l)"
no_run_cgroups "before any run" "$log"

tool ok.py <<<'print("done")'
ANVIL_SOCKET="$T/cl.sock" run_json "$T/ok.py"
expect_eq "a run: status" ok "$(j .status)"
no_run_cgroups "after a run" "$log"

tool sleep.py <<'PY'
import time
print("sleeping", flush=True)
time.sleep(60)
PY
ANVIL_SOCKET="$T/cl.sock" run_json "$T/sleep.py" --timeout 1
expect_eq "a run killed by its timeout" "killed: timeout" "$(j .killed)"
no_run_cgroups "after a timeout kill" "$log"

# wait_live: a live run's cgroup exists in every base (the control of "nothing left").
wait_live() {
        local nb
        nb=$(cg_bases "$log" | wc -l)
        for _ in $(seq 100); do
                [ "$(cg_runs "$log" | wc -l)" -ge "$nb" ] && { echo "ok: $1: the live run's cgroups are there"; return; }
                sleep 0.1
        done
        fail "$1: no run cgroup while a run is live: $(cg_runs "$log")"
}

ANVIL_SOCKET="$T/cl.sock" "$CTL" run "$T/sleep.py" --timeout 60 --json >"$T/cancelled.json" 2>&1 &
ctl=$!
wait_live "before the client goes"
kill "$ctl"
wait "$ctl" 2>/dev/null
for _ in $(seq 100); do grep -q "killed: cancelled" "$log" && break; sleep 0.1; done
expect_match "the supervisor cancelled it" "killed: cancelled" "$(grep -o 'killed: cancelled' "$log" | head -1)"
no_run_cgroups "after a cancel" "$log"

# The supervisor killed outright, with a run live.
ANVIL_SOCKET="$T/cl.sock" "$CTL" run "$T/sleep.py" --timeout 60 --json >"$T/orphan.json" 2>&1 &
ctl=$!
wait_live "before the supervisor is killed"
left_before=$(cg_runs "$log" | sort)
kill -KILL "$SUP_PID"
wait "$SUP_PID" 2>/dev/null
wait "$ctl" 2>/dev/null
sleep 0.5
expect_eq "after a SIGKILL the run's cgroups are left (the sweep's control)" "$left_before" "$(cg_runs "$log" | sort)"
echo "left behind: $(tr '\n' ' ' <<<"$left_before")"

start_sup cl 600000000 --spares 0
expect_match "the new supervisor swept them" "removed [1-9][0-9]* cgroups a previous supervisor left behind" "$(cat "$log")"
no_run_cgroups "after the restart" "$log"
ANVIL_SOCKET="$T/cl.sock" run_json "$T/ok.py"
expect_eq "a run after the restart" ok "$(j .status)"
no_run_cgroups "after a run after the restart" "$log"

# Stopped the normal way, it removes its bases too.
kill -TERM "$SUP_PID"
wait "$SUP_PID"
expect_eq "the supervisor's exit status" 0 "$?"
expect_eq "bases left after a stop" "" "$(for b in $(cg_bases "$log"); do [ -d "$b" ] && echo "$b"; done)"
