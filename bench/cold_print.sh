#!/usr/bin/env bash
# The cold path: `anvilctl run` of print(1), through the broker and the supervisor into a new
# jail, against the anchors in the same run: bubblewrap with every namespace unshared running
# Debian's python3, and plain python3. Prints mean times and the ratios; the target is
# anvil <= 1.5x bwrap. Needs root (the supervisor) and hyperfine, bubblewrap (make deps).
# ANVIL_BENCH_SUP_OPTS: more supervisor options (e.g. "--cpu-quota none"), to compare. The
# supervisor's jails use their own uid base, away from a test suite's default.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-30}
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root" >&2; exit 1; }
STATE=$(mktemp -d /tmp/anvil-bench.XXXXXX)
chmod 711 "$STATE"
export ANVIL_SOCKET="$STATE/anvil.sock"
# shellcheck disable=SC2086
"$BUILD/anvil-supervisor" --config /dev/null --listen "$STATE/sup.sock" --state-dir "$STATE/sup" --keep-runs 5 --uid-base 3900000000 \
        ${ANVIL_BENCH_SUP_OPTS:-} >"$STATE/sup.log" 2>&1 &
SUP=$!
for _ in $(seq 100); do [ -S "$STATE/sup.sock" ] && break; sleep 0.1; done
"$BUILD/anvil-broker" --config /dev/null --supervisor "$STATE/sup.sock" --listen "$ANVIL_SOCKET" --state-dir "$STATE/broker" \
        >"$STATE/broker.log" 2>&1 &
BRO=$!
for _ in $(seq 100); do [ -S "$ANVIL_SOCKET" ] && break; sleep 0.1; done
trap 'kill $BRO $SUP 2>/dev/null; wait $BRO $SUP 2>/dev/null; rm -rf "$STATE"' EXIT
echo 'print(1)' >"$STATE/print1.py"

BWRAP="bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/lib /lib \
--symlink usr/lib64 /lib64 --symlink usr/bin /bin --proc /proc --dev /dev --tmpfs /tmp \
/usr/bin/python3 -c 'print(1)'"
hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$STATE/h.json" \
        -n anvil "$BUILD/anvilctl run $STATE/print1.py" \
        -n bwrap "$BWRAP" \
        -n python "/usr/bin/python3 -c 'print(1)'" >/dev/null || exit 1
jq -r '.results[] | "\(.command) \(.mean)"' "$STATE/h.json" | awk '
        { t[$1] = $2 }
        END {
                printf "mean of %s runs each:\n", ENVIRON["RUNS"] ? ENVIRON["RUNS"] : 30
                printf "  anvilctl run print(1)   %7.1f ms\n", t["anvil"] * 1000
                printf "  bwrap python3 print(1)  %7.1f ms\n", t["bwrap"] * 1000
                printf "  python3 print(1)        %7.1f ms\n", t["python"] * 1000
                printf "ratio anvil/bwrap:  %.2f (target <= 1.50)\n", t["anvil"] / t["bwrap"]
                printf "ratio anvil/python: %.2f\n", t["anvil"] / t["python"]
        }'
