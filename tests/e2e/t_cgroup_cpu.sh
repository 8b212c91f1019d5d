# The CPU quota (--cpu-quota, default 100% of one CPU): a CPU-bound tool under a 50% quota
# gets about half a core, as the tool itself measures it (its process time over wall time);
# a control under the suite's supervisor (the default 100%) gets most of one, so the check can
# fail. The quota is reported (blast_radius.limits.cpu_quota_pct, the mechanisms, the time
# throttled) only as read back from the run's cgroup; with --cpu-quota none there is none to
# report. Bad values of the option are refused with a clear message.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "no cgroup is delegated to an ordinary user here: rootless runs have none, and say so"

tool spin.py <<'PY'
import time
t0, c0 = time.monotonic(), time.process_time()
while time.monotonic() - t0 < 2.0:
    pass
print(f"{(time.process_time() - c0) / (time.monotonic() - t0):.3f}")
PY
below() { $PY -c "import sys; sys.exit(0 if float('$1') <= float('$2') else 1)"; }

start_sup q50 500000000 --cpu-quota 50 --spares 1
grep -q "cpu quota 50% of a CPU" "$T/q50.log" || fail "no cpu quota in force on this host: $(cat "$T/q50.log")"
ANVIL_SOCKET="$T/q50.sock" run_json "$T/spin.py" --timeout 30
expect_eq "under 50%: status" ok "$(j .status)"
ratio=$(j .stdout | head -1)
below "$ratio" 0.7 || fail "under a 50% quota the tool had $ratio of a core (cpu/wall), expected at most 0.7"
echo "ok: under a 50% quota: cpu/wall = $ratio"
expect_eq "the quota read back, in the blast radius" 50 "$(j .blast_radius.limits.cpu_quota_pct)"
expect_eq "the quota among the mechanisms" 1 \
        "$(j '[.isolation.mechanisms[] | select(test("^cgroup v[12] \\(.*cpu quota 50% of a CPU\\)$"))] | length')"
throttled=$(j .cgroup.cpu_throttled_ms)
[ "$throttled" != null ] && [ "$throttled" -ge 300 ] || fail "time throttled by the quota: $throttled ms, expected at least 300"
echo "ok: throttled for $throttled ms"

# Control: the suite's supervisor, the default quota of one CPU. On a loaded machine a run may
# get less than a core for reasons of its own: the best of three tries is taken.
best=0
for try in 1 2 3; do
        run_json "$T/spin.py" --timeout 30
        expect_eq "control: status" ok "$(j .status)"
        r=$(j .stdout | head -1)
        below "$best" "$r" && best=$r
        below 0.85 "$best" && break
        echo "control try $try: cpu/wall = $r"
done
below 0.85 "$best" || fail "control: without a 50% quota the tool had only $best of a core (cpu/wall), expected at least 0.85"
echo "ok: control (quota 100%): cpu/wall = $best"
expect_eq "control: its quota read back" 100 "$(j .blast_radius.limits.cpu_quota_pct)"

# No quota: nothing claimed.
start_sup noq 510000000 --cpu-quota none --spares 0
ANVIL_SOCKET="$T/noq.sock" run_json "$T/spin.py" --timeout 30
expect_eq "--cpu-quota none: status" ok "$(j .status)"
expect_eq "--cpu-quota none: no quota in the blast radius" null "$(j .blast_radius.limits.cpu_quota_pct)"
expect_eq "--cpu-quota none: no quota among the mechanisms" 0 "$(j '[.isolation.mechanisms[] | select(test("cpu quota"))] | length')"
expect_eq "--cpu-quota none: no time throttled claimed" null "$(j .cgroup.cpu_throttled_ms)"

# Bad values: exit 2, one clear line, no supervisor left running.
ncpu=$(getconf _NPROCESSORS_ONLN)
max=$((ncpu * 100))
for bad in 0 -5 50% 1.5 "" abc "$((max + 1))" 99999999999999999999; do
        out=$("$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$T/bad.sock" --state-dir "$T/bad" --cpu-quota "$bad" 2>&1)
        rc=$?
        expect_eq "--cpu-quota '$bad': exit code" 2 "$rc"
        expect_eq "--cpu-quota '$bad': the message" \
                "anvil-supervisor: --cpu-quota: '$bad': expected a percentage of one CPU from 1 to $max (this machine has $ncpu CPUs), or none" \
                "$out"
done
out=$("$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$T/bad.sock" --state-dir "$T/bad" --cgroup none --cpu-quota 50 2>&1)
expect_eq "--cgroup none --cpu-quota 50: exit code" 2 "$?"
expect_eq "--cgroup none --cpu-quota 50: the message" \
        "anvil-supervisor: --cpu-quota needs a cgroup, and --cgroup none was given" "$out"
[ ! -e "$T/bad.sock" ] || fail "a refused command line left a socket"
