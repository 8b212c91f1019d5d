# Retention goes by when a run ended, not when it started: a long run that ends after
# --keep-runs shorter ones started later keeps its directory (its artifacts) when its result
# goes out, and the shorter ones that ended first go (issue 9's soak: with 16 clients and
# --keep-runs 50, one pandas run in five lost its artifacts as its result was sent; today's
# build prunes by the names, which sort by start). Control: the shorter runs' directories are
# pruned, oldest-ended first, so that --keep-runs holds.
. "$(dirname "$0")/lib.sh"
start_sup ret 730000000 --keep-runs 3 --max-runs 8 --spares 0
tool long.py <<'PY'
import time
open("artifacts/long.txt", "w").write("long\n")
time.sleep(8)
PY
tool short.py <<<'open("artifacts/short.txt", "w").write("short\n")'
ANVIL_SOCKET="$T/ret.sock" "$CTL" run "$T/long.py" --timeout 60 --json >"$T/long.json" 2>"$T/long.err" &
long=$!
sleep 1
shorts=()
for i in 1 2 3 4; do
        ANVIL_SOCKET="$T/ret.sock" run_json "$T/short.py"
        shorts+=("$(j .run_id)")
done
kill -0 "$long" 2>/dev/null || fail "the long run ended before the short ones: $(cat "$T/long.err")"
wait "$long" || fail "the long run: anvilctl exited $?: $(cat "$T/long.err")"
long_id=$(jq -r .run_id "$T/long.json")
# Its teardown (and the prune after it) follows its result: wait for retention to hold.
for _ in $(seq 100); do
        [ "$(ls "$T/ret/runs" | wc -l)" -le 3 ] && break
        sleep 0.1
done
expect_eq "run directories" 3 "$(ls "$T/ret/runs" | wc -l)"
[ -f "$T/ret/runs/$long_id/artifacts/long.txt" ] || fail "the long run's artifacts are gone: $(ls "$T/ret/runs")"
echo "ok: the long run, which ended last, kept its directory"
expect_eq "the short runs that ended first are gone" "gone gone" \
        "$(for r in "${shorts[0]}" "${shorts[1]}"; do [ -d "$T/ret/runs/$r" ] && echo kept || echo gone; done | paste -sd' ')"
expect_eq "the last two short runs are kept" "kept kept" \
        "$(for r in "${shorts[2]}" "${shorts[3]}"; do [ -d "$T/ret/runs/$r" ] && echo kept || echo gone; done | paste -sd' ')"
