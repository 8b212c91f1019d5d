# Without cgroups (--cgroup none): memory is bounded by RLIMIT_AS and the 20 ms sampler, which
# kills at the cap and reports the peak it saw; the result lists no cgroup as in force.
. "$(dirname "$0")/lib.sh"
SOCK="$T/sup.sock"
"$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$SOCK" --state-dir "$T/state" --cgroup none --spares 1 \
        --max-runs 2 --uid-base $((ANVIL_E2E_UID_BASE + 300000000)) >"$T/sup.log" 2>&1 &
SUP=$!
trap 'kill $SUP 2>/dev/null; wait $SUP 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the supervisor did not start: $(cat "$T/sup.log")"
expect_match "the supervisor says so" "no cgroup \(--cgroup none\)" "$(cat "$T/sup.log")"

tool limits.py <<'PY'
import resource
print(resource.getrlimit(resource.RLIMIT_AS)[0])
PY
ANVIL_SOCKET="$SOCK" run_json "$T/limits.py" --memory 200
expect_eq status ok "$(j .status)"
expect_eq "RLIMIT_AS in the jail" "$(( (200 + 2048) * 1024 * 1024 ))" "$(j .stdout | head -1)"
expect_eq "no cgroup among the mechanisms" 0 "$(j '[.isolation.mechanisms[] | select(test("^cgroup v"))] | length')"
expect_eq "RLIMIT_AS among the mechanisms" 1 "$(j '[.isolation.mechanisms[] | select(. == "rlimits (cpu, fsize, nproc, nofile, core, as)")] | length')"

tool hog.py <<'PY'
chunks = []
while True:
    chunks.append(b"x" * (8 * 1024 * 1024))
PY
ANVIL_SOCKET="$SOCK" run_json "$T/hog.py" --memory 200
expect_match "memory hog killed by the sampler" '^killed: memory \(peak [0-9]+\.[0-9] MB > 200 MB cap\)$' "$(j .killed)"
peak=$(sed -E 's/.*peak ([0-9.]+) MB.*/\1/' <<<"$(j .killed)")
$PY -c "import sys; sys.exit(0 if float('$peak') > 200 else 1)" || fail "reported peak $peak is not above the cap"

# Control: 100 MB under the same cap runs.
tool hundred.py <<'PY'
block = b"x" * (100 * 1024 * 1024)
print(len(block))
PY
ANVIL_SOCKET="$SOCK" run_json "$T/hundred.py" --memory 200
expect_eq "control within the cap" ok "$(j .status)"
