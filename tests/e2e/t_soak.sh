# The soak, short (make soak runs it with 500): 50 runs of the mixed set (tools that end well,
# pandas over data/sales.csv, escape attempts, timeouts, memory kills, artifacts, failures) from
# 16 concurrent clients through a broker, against a supervisor and a broker the soak starts
# itself (its state in $T, its own uid base), after a warm-up of 32; then no fd leaked by
# either daemon, no run cgroup left, no mount of its own left, no run directory beyond
# --keep-runs, no zombie, each daemon's RSS within the tolerance of the warm-up's, and every
# result right for its kind and stored in the broker's results/. A daemon that dies fails it
# with its log's last lines. The checks themselves: tests/soak/soak.py.
. "$(dirname "$0")/lib.sh"
# A sanitized build (make check SANITIZE=1): ASan's quarantine keeps up to 256 MiB of freed
# memory in each daemon's RSS, which then grows with what was freed, not with what is held;
# without it the RSS check measures what it does in a plain build. The tolerance is the same;
# only use-after-free detection is off in the soak's daemons.
[ -n "${ANVIL_E2E_SANITIZE:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
[ -x "$ANVIL_BUILD/anvil-supervisor" ] || fail "no supervisor in $ANVIL_BUILD"
$PY "$TOP/tests/soak/soak.py" --build "$ANVIL_BUILD" --runs 50 --clients 16 --warmup 32 --keep-runs 40 \
        --uid-base $((ANVIL_E2E_UID_BASE + 720000000)) --dir "$T" ${ROOTLESS_USER:+--as-user "$ROOTLESS_USER"} ||
        fail "the soak failed (above)"
