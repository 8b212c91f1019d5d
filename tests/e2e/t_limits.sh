# Limits, each observed: the wall clock, RLIMIT_CPU before the wall clock, and memory with
# the peak the sampler saw above the cap; each with a control that stays within the limit.
. "$(dirname "$0")/lib.sh"

tool sleep.py <<'PY'
import time
while True:
    time.sleep(0.1)
PY
run_json "$T/sleep.py" --timeout 2
expect_eq "sleep loop status" killed "$(j .status)"
expect_eq "sleep loop killed" "killed: timeout" "$(j .killed)"
[ "$(j .wall_ms)" -ge 2000 ] || fail "killed before the 2 s wall clock: $(j .wall_ms) ms"
expect_eq "the kill is in the trace" "killed: timeout" "$(j '.events[] | select(.kind == "killed") | .message')"

tool busy.py <<'PY'
while True:
    pass
PY
run_json "$T/busy.py" --cpu 2 --timeout 20
expect_eq "busy loop killed" "killed: cpu limit" "$(j .killed)"
# The kernel sends SIGXCPU by the process's tick-sampled CPU time; cpu_ms is the cgroup's exact
# time, which under load here read 1773 ms at a 2 s limit. Half the limit still tells a kill for
# the CPU from one that came before it was used.
[ "$(j .cpu_ms)" -ge 1000 ] || fail "cpu_ms $(j .cpu_ms) is not near the 2 s limit"
[ "$(j .wall_ms)" -lt 20000 ] || fail "the wall clock (20 s) came first: $(j .wall_ms) ms"
echo "ok: cpu limit after $(j .cpu_ms) ms of cpu, $(j .wall_ms) ms of wall clock"

# A tool that ignores SIGXCPU is still ended, by the hard limit one second later.
tool busy_ignoring.py <<'PY'
import signal
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
while True:
    pass
PY
run_json "$T/busy_ignoring.py" --cpu 2 --timeout 20
expect_eq "busy loop ignoring SIGXCPU killed" "killed: cpu limit" "$(j .killed)"

# Control: the same budget, a tool that stays within it: a quarter of it, by its own CPU clock
# (not a count of iterations, which an emulated machine, tests/vm, takes many times longer for).
tool short.py <<'PY'
import time
t0 = time.process_time()
n = 0
while time.process_time() - t0 < 0.5:
    n += 1
print(n > 0)
PY
run_json "$T/short.py" --cpu 2 --timeout 20
expect_eq "control within the cpu limit" ok "$(j .status)"

tool hog.py <<'PY'
chunks = []
while True:
    chunks.append(b"x" * (8 * 1024 * 1024))
PY
run_json "$T/hog.py" --memory 200
expect_eq "memory hog status" killed "$(j .status)"
killed=$(j .killed)
expect_match "memory hog killed" '^killed: memory \(peak [0-9]+\.[0-9] MB > 200 MB cap\)$' "$killed"
peak=$(sed -E 's/.*peak ([0-9.]+) MB.*/\1/' <<<"$killed")
$PY -c "import sys; sys.exit(0 if float('$peak') > 200 else 1)" || fail "reported peak $peak is not above the cap"
$PY -c "import sys; sys.exit(0 if float('$(j .peak_rss_mb)') > 200 else 1)" || fail "peak_rss_mb $(j .peak_rss_mb) is not above the cap"

# Control: 100 MB under a 200 MB cap runs, and its peak is observed (not the cap).
tool hundred.py <<'PY'
block = b"x" * (100 * 1024 * 1024)
print(len(block))
PY
run_json "$T/hundred.py" --memory 200
expect_eq "control within the memory cap" ok "$(j .status)"
$PY -c "import sys; p = float('$(j .peak_rss_mb)'); sys.exit(0 if 100 <= p < 200 else 1)" ||
        fail "control's peak_rss_mb $(j .peak_rss_mb) is not between 100 and 200"
echo "ok: control peak $(j .peak_rss_mb) MB"
