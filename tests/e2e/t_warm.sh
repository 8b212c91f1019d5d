# Warm jails (--warm N, supervisor/warm.c; DESIGN §4 "Warm jails"): a run takes a jail built
# ahead with the data stack imported, and is what a cold run is: correct, refused with the
# same words, limited by its own limits (applied at the take), one run per jail, nothing of
# one run seen by the next; a run whose shape differs gets a cold jail and says why; a warm
# jail that dies while waiting is replaced unseen; none is left after the supervisor stops.
. "$(dirname "$0")/lib.sh"
start_sup warm 960000000 --warm 1 --spares 0 --max-runs 4
WARM_PID=$SUP_PID
export ANVIL_SOCKET="$T/warm.sock"
waiting() { grep -c ': a warm jail, waiting' "$T/warm.log"; }
# wait_warm N: until N warm jails have reported waiting since the start
wait_warm() {
        for _ in $(seq 300); do
                [ "$(waiting)" -ge "$1" ] && return
                sleep 0.1
        done
        fail "no warm jail waiting ($1 expected): $(tail -5 "$T/warm.log")"
}
# warm_now: until the supervisor's latest word on its warm jails is that one is waiting
warm_now() {
        for _ in $(seq 300); do
                grep -E ': a warm jail, waiting|: a warm jail taken for|warm jail: ended' "$T/warm.log" | tail -1 |
                        grep -q ': a warm jail, waiting' && return
                sleep 0.1
        done
        fail "no warm jail waiting: $(tail -5 "$T/warm.log")"
}
warm_now
warm_msg() { j '[.events[] | select(.layer == "supervisor" and .kind == "warm") | .message] | .[0] // ""'; }
cold_msg() { j '[.events[] | select(.layer == "supervisor" and .kind == "cold") | .message] | .[0] // ""'; }

# 1. A pandas tool over an input, with an artifact, in a warm jail; the time from the request
# to its first line, as observed (the jail's clock is the host's).
printf 'region,amount\nnorth,10\nsouth,32\nnorth,5\n' >"$T/sales.csv"
tool pandas.py <<'PY'
import time
first = time.time()
import pandas as pd
import matplotlib.pyplot as plt
ready = time.time()
df = pd.read_csv("inputs/sales.csv")
totals = df.groupby("region")["amount"].sum()
print(f"first line at {first:.6f} {ready:.6f}")
print(totals.to_dict())
totals.plot.bar()
plt.savefig("artifacts/totals.png")
PY
t_req=$(date +%s.%N)
run_json "$T/pandas.py" --input "$T/sales.csv"
expect_eq "the pandas run's status" ok "$(j .status)"
expect_match "it took a warm jail" '^a warm jail, built [0-9]+ ms before the request' "$(warm_msg)"
expect_eq "its totals" "{'north': 15, 'south': 32}" "$(j .stdout | sed -n 2p)"
expect_eq "its artifact" "totals.png" "$(j '.artifacts[].path')"
# observed LABEL T_REQ: the times the tool printed, from the request
observed() {
        local f r
        read -r f r <<<"$(j .stdout | sed -n 's/^first line at //p')"
        echo "observed, $1: request -> the tool's first line $(echo "($f - $2) * 1000" | bc -l | xargs printf '%.1f') ms, -> pandas and pyplot imported $(echo "($r - $2) * 1000" | bc -l | xargs printf '%.1f') ms, wall $(j .wall_ms) ms"
}
observed "a warm jail" "$t_req"
expect_eq "the jail's events from before the take shown at 0" 0 "$(j '[.events[] | select(.kind == "in_force" or .kind == "seccomp_verified" or .kind == "warm_ready") | .t_ms] | max')"
expect_eq "in force, as its first event" in_force "$(j '[.events[] | select(.layer == "runner")][0].kind')"
t_req=$(date +%s.%N)
ANVIL_SOCKET="$ANVIL_SUP_SOCKET" run_json "$T/pandas.py" --input "$T/sales.csv"
observed "a cold jail (the suite's supervisor)" "$t_req"

# 2. A refusal, verbatim the same as a cold run's (the suite's supervisor has no warm jails).
# Built at run time, so that the pre-check leaves them to the audit hook and the kernel.
tool refused.py <<'PY'
import os
where = "/etc/" + "shadow"
try:
    open(where).read()
except OSError as e:
    print("refused:", type(e).__name__)
getattr(os, "sys" + "tem")("true")
PY
warm_now
run_json "$T/refused.py"
expect_match "the refusal run took a warm jail" '^a warm jail' "$(warm_msg)"
warm_ref=$(j '[.events[] | select(.kind == "refused" or .kind == "blocked") | [.layer, .kind, .op, .message]]')
warm_status=$(j .status)
ANVIL_SOCKET="$ANVIL_SUP_SOCKET" run_json "$T/refused.py"
expect_eq "the cold run of it has no warm jail" "" "$(warm_msg)"
expect_eq "its status, warm as cold" "$(j .status)" "$warm_status"
expect_eq "its refusals, warm as cold, verbatim" "$(j '[.events[] | select(.kind == "refused" or .kind == "blocked") | [.layer, .kind, .op, .message]]')" "$warm_ref"

# 3. No warm jail ran tool code before its take, and the next run sees nothing of this one.
tool state.py <<'PY'
import os, sys
print("modules", sorted(sys.modules))
print("globals", sorted(k for k in globals() if not k.startswith("__") and k not in ("os", "sys")))
print("tmp", sorted(os.listdir("/tmp")), os.listdir("/tmp/matplotlib") == os.listdir("/tmp/matplotlib"))
print("cwd", os.getcwd())
print("env", sorted(os.environ))
print("leak", os.environ.get("ANVIL_LEAK"), os.path.exists("/tmp/leak"), "leaked" in globals())
os.environ["ANVIL_LEAK"] = "1"
open("/tmp/leak", "w").write("x")
import json
globals()["leaked"] = 1
PY
warm_now
run_json "$T/state.py"
expect_match "the state run took a warm jail" '^a warm jail' "$(warm_msg)"
first_state=$(j .stdout)
first_id=$(j .run_id)
# Its modules before its first import: exactly a cold run's after it imports the warm set.
tool coldmods.py <<'PY'
import sys
import numpy, pandas, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot
print("modules", sorted(sys.modules))
PY
ANVIL_SOCKET="$ANVIL_SUP_SOCKET" run_json "$T/coldmods.py"
cold_mods=$(j .stdout | grep '^modules ')
[ "$cold_mods" = "$(echo "$first_state" | grep '^modules ')" ] ||
        fail "a warm jail's modules are not a cold run's after the warm set's imports: $(diff <(echo "$cold_mods" | tr ',' '\n') <(echo "$first_state" | grep '^modules ' | tr ',' '\n'))"
echo "ok: a warm run's modules before its first line are a cold run's after numpy, pandas and matplotlib ($(echo "$cold_mods" | tr ',' '\n' | wc -l) modules)"
ANVIL_SOCKET="$ANVIL_SUP_SOCKET" run_json "$T/state.py"
cold_state=$(j .stdout)
for k in globals tmp cwd env leak; do
        expect_eq "$k, warm as cold" "$(echo "$cold_state" | grep "^$k ")" "$(echo "$first_state" | grep "^$k ")"
done
expect_eq "nothing of an earlier run (cold's view)" "leak None False False" "$(echo "$first_state" | grep '^leak ')"
warm_now
run_json "$T/state.py"
expect_match "the next state run took a warm jail" '^a warm jail' "$(warm_msg)"
second_state=$(j .stdout)
expect_eq "the next run sees nothing of the first" "leak None False False" "$(echo "$second_state" | grep '^leak ')"
second_id=$(j .run_id)
# A warm jail is a run of its own from its build: its id is the run's, built and taken once.
for id in "$first_id" "$second_id"; do
        expect_eq "jails built as $id" 1 "$(grep -c "run $id: a warm jail, waiting" "$T/warm.log")"
        expect_eq "runs that took $id" 1 "$(grep -c "run $id: a warm jail taken for" "$T/warm.log")"
done
[ "$first_id" != "$second_id" ] || fail "two runs shared a jail: $first_id"
echo "ok: two runs in a row got different jails ($first_id, $second_id)"

# 4. A run whose shape differs from the warm jails' gets a cold jail, and says why (both ways:
# the same request without the difference took a warm one above).
warm_now
tool hello.py <<<'print("hello")'
run_json "$T/hello.py" --cap network
expect_eq "a run asking for a capability" "a cold jail: it asks for capabilities, and warm jails are built with none" "$(cold_msg)"
expect_eq "its status" ok "$(j .status)"
warm_now
run_json "$T/hello.py" --python-layers-off
expect_eq "a run asking for its Python layers off" \
        "a cold jail: it asks for its Python layers off, and warm jails are built with them on" "$(cold_msg)"
expect_eq "its Python layers said off" 1 "$(j '[.events[] | select(.kind == "layers_disabled")] | length')"
head -c $((17 * 1024 * 1024)) /dev/zero >"$T/big.bin"
run_json "$T/hello.py" --input "$T/big.bin"
expect_eq "a run with inputs over the copy bound" "a cold jail: its inputs' 17825792 bytes are over the 16777216 bytes a warm jail copies" "$(cold_msg)"
head -c $((16 * 1024 * 1024)) /dev/zero >"$T/fits.bin"
tool size.py <<<'import os; print(os.path.getsize("inputs/fits.bin"))'
run_json "$T/size.py" --input "$T/fits.bin"
expect_match "a run with inputs at the copy bound is warm" '^a warm jail' "$(warm_msg)"
expect_eq "its input, copied whole" 16777216 "$(j .stdout)"
if [ -z "$ROOTLESS_USER" ]; then
        mkdir -p "$T/indir" && echo a >"$T/indir/a.txt"
        run_json "$T/hello.py" --input "$T/indir"
        expect_eq "a run with a directory input" "a cold jail: an input is a directory or not a regular file on a local file system, which a warm jail does not copy" "$(cold_msg)"
fi

# 5. Limits applied at the take hold: memory, CPU (its seconds on top of the imports'), time.
warm_now
# The cap is over the default the jail was built with: killed at 700 MB, the run's own.
tool hog.py <<<'x = bytearray(1500 * 1024 * 1024)
import time; time.sleep(5)'
run_json "$T/hog.py" --memory 700
expect_match "the memory hog took a warm jail" '^a warm jail' "$(warm_msg)"
expect_match "the memory hog" '^killed: memory \(peak [0-9.]+ MB > 700 MB cap\)$' "$(j .killed)"
# A cap under the default goes cold (the imports hold part of a warm jail's), and a tool
# that fits in it there runs.
tool small.py <<<'x = bytearray(40 * 1024 * 1024); print(len(x))'
run_json "$T/small.py" --memory 64
expect_eq "a run with a memory cap under the default" "a cold jail: its memory cap of 64 MB is under the 512 MB warm jails are built with, whose imports hold about 85 MB of it" "$(cold_msg)"
expect_eq "its status" ok "$(j .status)"
warm_now
warm_now
tool spin.py <<<'while True: pass'
run_json "$T/spin.py" --cpu 1 --timeout 20
expect_match "the CPU hog took a warm jail" '^a warm jail' "$(warm_msg)"
expect_eq "the CPU hog" "killed: cpu limit" "$(j .killed)"
[ "$(j .wall_ms)" -lt 3500 ] || fail "the CPU hog ran $(j .wall_ms) ms: its 1 s of CPU was not applied at the take"
echo "ok: the CPU hog ended after $(j .wall_ms) ms (--cpu 1 on top of the imports)"
warm_now
tool sleep.py <<<'import time; time.sleep(30)'
run_json "$T/sleep.py" --timeout 1
expect_match "the sleeper took a warm jail" '^a warm jail' "$(warm_msg)"
expect_eq "the sleeper" "killed: timeout" "$(j .killed)"
[ "$(j .wall_ms)" -lt 2500 ] || fail "the timeout took $(j .wall_ms) ms: the clock did not start at the take"
echo "ok: the timeout came after $(j .wall_ms) ms"

# 6. A warm jail whose runner is killed while it waits is replaced, and no run sees it.
warm_now
n=$(waiting)
pid1=$(pgrep -P "$WARM_PID" | head -1)
runner=$(pgrep -P "$pid1" | head -1)
[ -n "$runner" ] || fail "no warm runner found below the supervisor $WARM_PID"
echo "observed: a waiting warm jail's runner: $(awk '/^(Rss|Pss|Private_Clean|Private_Dirty):/ {printf "%s %.1f MB  ", $1, $2 / 1024}' "/proc/$runner/smaps_rollup")"
kill -KILL "$runner"
wait_warm $((n + 1))
run_json "$T/hello.py"
expect_match "the run after a warm jail died took the replacement" '^a warm jail' "$(warm_msg)"
expect_eq "and is correct" hello "$(j .stdout)"
grep -q "warm jail: ended before a run took it" "$T/warm.log" || fail "the dead warm jail was not noticed: $(tail "$T/warm.log")"
echo "ok: the killed warm jail was replaced"

# 7. Cancel of a warm run: its client goes, the run is killed, cancelled.
warm_now
"$CTL" run "$T/sleep.py" --timeout 30 >/dev/null 2>&1 &
c=$!
for _ in $(seq 100); do grep -q "a warm jail taken for client pid $c " "$T/warm.log" && break; sleep 0.05; done
grep -q "a warm jail taken for client pid $c " "$T/warm.log" || fail "the cancelled run took no warm jail"
kill "$c"
wait "$c" 2>/dev/null
for _ in $(seq 100); do grep -q ": killed: cancelled in " "$T/warm.log" && break; sleep 0.1; done
grep -q "ok, killed: cancelled in \|: killed: cancelled in " "$T/warm.log" || grep -q "killed: cancelled" "$T/warm.log" ||
        fail "the warm run was not cancelled: $(tail -3 "$T/warm.log")"
echo "ok: the warm run was cancelled"

# 8. Memory short: the pool shrinks, and says so; the runs then go cold (a second supervisor,
# whose threshold is above what any machine has).
start_sup short 961000000 --warm 1 --spares 0 --warm-min-available-mb 1000000000
for _ in $(seq 50); do grep -q "the pool shrinks" "$T/short.log" && break; sleep 0.1; done
grep -q "warm: MemAvailable [0-9]* MB is under 1000000000 MB: the pool shrinks" "$T/short.log" ||
        fail "the short supervisor did not say the pool shrinks: $(tail -3 "$T/short.log")"
ANVIL_SOCKET="$T/short.sock" run_json "$T/hello.py"
expect_eq "a run when memory is short" "a cold jail: no warm jail was waiting" "$(cold_msg)"
expect_eq "its status" ok "$(j .status)"

# 8b. Without user namespaces (the direct rung) there are no warm jails: said in the log, and
# runs are cold as without --warm.
start_sup direct 962000000 --warm 1 --spares 0 --test-no-userns
grep -q "warm: not without user namespaces (the direct rung): every run is cold" "$T/direct.log" ||
        fail "the direct supervisor did not say it has no warm jails: $(tail -3 "$T/direct.log")"
ANVIL_SOCKET="$T/direct.sock" run_json "$T/hello.py"
expect_eq "a direct run's status" ok "$(j .status)"
expect_eq "a direct run took no warm jail" "" "$(warm_msg)"

# 8c. The pool refills while runs are in flight, bounded by the CPUs (supervisor/warm.c): with
# fewer runs in flight than CPUs, a taken jail is rebuilt beside the run; with as many runs in
# flight as CPUs, none is built until one ends. The other half of the bound (no build beside a
# run while other work keeps every core busy) depends on the machine's load: this supervisor
# is told to count none (--test-machine-idle), so that the test is the same on a shared one.
cpus=$(nproc)
start_sup refill 963000000 --warm 1 --spares 0 --max-runs $((cpus + 2)) --test-machine-idle
rlog="$T/refill.log"
grep -q "warm: 1 warm jail, built while fewer than $cpus runs are in flight and a core is idle" "$rlog" ||
        fail "the refill supervisor does not state its bound: $(grep 'warm:' "$rlog")"
rwait() { # N: until N warm jails have reported waiting in the refill supervisor's log
        for _ in $(seq 300); do
                [ "$(grep -c ': a warm jail, waiting' "$rlog")" -ge "$1" ] && return
                sleep 0.1
        done
        fail "no warm jail waiting ($1 expected): $(tail -5 "$rlog")"
}
rwait 1
tool sleep6.py <<<'import time; time.sleep(6); print("slept")'
ANVIL_SOCKET="$T/refill.sock" "$CTL" run "$T/sleep6.py" --json >"$T/long.json" 2>&1 &
long=$!
rwait 2 # a new warm jail waiting, built while the long run (which took the first) runs
kill -0 "$long" 2>/dev/null || fail "the long run ended before the refill was seen: nothing shown"
expect_match "the refill's build, with a run in flight" "warm: building a warm jail \(1 run in flight\)" "$(grep 'warm: building' "$rlog" | tail -1)"
wait "$long"
expect_eq "the long run, warm" "a warm jail" "$(jq -r '[.events[] | select(.kind == "warm") | .message][0]' "$T/long.json" | cut -c1-11)"
# The bound: as many runs in flight as CPUs (cold ones: a memory cap under the warm default),
# then the waiting jail taken by a short run: no build until a long run ends.
pids=()
for _ in $(seq "$cpus"); do
        ANVIL_SOCKET="$T/refill.sock" "$CTL" run "$T/sleep6.py" --memory 400 --json >/dev/null 2>&1 &
        pids+=($!)
done
for _ in $(seq 100); do
        [ "$(grep -c ': started for' "$rlog")" -ge $((cpus + 2)) ] && break
        sleep 0.1
done
builds=$(grep -c 'warm: building' "$rlog")
ANVIL_SOCKET="$T/refill.sock" run_json "$T/hello.py"
expect_match "the short run took the waiting jail" '^a warm jail' "$(warm_msg)"
sleep 2
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || fail "a long run ended early: the bound is not shown"; done
expect_eq "builds while $cpus runs were in flight on $cpus CPUs" "$builds" "$(grep -c 'warm: building' "$rlog")"
wait "${pids[@]}"
rwait 3
expect_match "the build once they ended" "warm: building a warm jail \([0-$((cpus - 1))] runs? in flight\)" "$(grep 'warm: building' "$rlog" | tail -1)"

# 9. Stopping with a warm jail waiting leaves no jail process and no run cgroup.
# jail_procs: processes that executed the state directory's anvil-py (a jail's runner, and what
# it could start); its pid 1 is in the jail's cgroup, which cannot be removed while it lives
jail_procs() {
        local p n=0
        for p in /proc/[0-9]*; do
                case "$(readlink "$p/exe" 2>/dev/null)" in "$T/warm/"*) n=$((n + 1)) ;; esac
        done
        echo "$n"
}
warm_now
[ "$(jail_procs)" -ge 1 ] || fail "the waiting warm jail's runner is not seen ($(jail_procs)): the check below would see nothing"
kill -TERM "$WARM_PID"
wait "$WARM_PID"
expect_eq "the warm supervisor's exit status" 0 "$?"
[ ! -e "$T/warm.sock" ] || fail "the socket was left behind"
no_run_cgroups "after the stop with a warm jail waiting" "$T/warm.log"
expect_eq "processes of the warm supervisor's jails left" 0 "$(jail_procs)"
empty=$(find "$T/warm/runs" -mindepth 2 -maxdepth 2 -name tool.py -empty | wc -l)
expect_eq "run directories of warm jails no run took (an empty tool.py) left" 0 "$empty"
