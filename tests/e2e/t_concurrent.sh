# 20 runs started at the same time, each its own tool printing its index after a little work
# and a 1 s sleep: all complete with status ok, with distinct run ids and each its own
# stdout; and they ran side by side (20 one-second sleeps in well under 20 s).
. "$(dirname "$0")/lib.sh"
N=20
start=$(date +%s%N)
pids=()
for i in $(seq 1 $N); do
        cat >"$T/tool$i.py" <<PY
import time
s = sum(range(10**6))
time.sleep(1)
print(f"run $i: {s}")
PY
        "$CTL" run "$T/tool$i.py" --timeout 60 --json >"$T/result$i.json" 2>"$T/ctl$i.err" &
        pids+=($!)
done
for i in $(seq 1 $N); do
        wait "${pids[$((i - 1))]}" || fail "run $i: anvilctl exited $?: $(cat "$T/ctl$i.err")"
done
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
for i in $(seq 1 $N); do
        r="$T/result$i.json"
        [ "$(jq -r .status "$r")" = ok ] || fail "run $i: status $(jq -r .status "$r") $(jq -r .killed "$r"): $(jq -r .stderr "$r" | tail -3)"
        [ "$(jq -r .stdout "$r")" = "run $i: 499999500000" ] || fail "run $i: stdout '$(jq -r .stdout "$r" | head -3)'"
done
echo "ok: all $N runs ended ok, each printing its own index and sum"
ids=$(for i in $(seq 1 $N); do jq -r .run_id "$T/result$i.json"; done)
expect_eq "distinct run ids" $N "$(sort -u <<<"$ids" | grep -c .)"
expect_eq "distinct artifact directories" $N "$(for i in $(seq 1 $N); do jq -r .artifacts_dir "$T/result$i.json"; done | sort -u | grep -c .)"
[ "$elapsed_ms" -lt 15000 ] || fail "the $N runs took $elapsed_ms ms: they did not run side by side"
echo "ok: $N runs with a 1 s sleep each took $elapsed_ms ms in all"
expect_serving
