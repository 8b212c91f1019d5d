# A run killed for its wall clock has run its whole wall clock: wall_ms is at least wall_s.
# libuv's timers count from the loop's clock, cached when the loop's turn began; the turn that
# starts a run also writes its inputs, so with a large input the timer fired early (a 1 s run
# killed at about 990 ms, "killed: timeout" after less than its time). Five runs, each with a
# 15 MiB input; the control is t_limits' (a tool that ends within its time is not killed).
. "$(dirname "$0")/lib.sh"
head -c $((15 * 1024 * 1024)) /dev/zero >"$T/big.bin"
tool sleeper.py <<'PY'
import time
time.sleep(30)
PY
for i in 1 2 3 4 5; do
        run_json "$T/sleeper.py" --input "$T/big.bin" --timeout 1
        expect_eq "run $i: killed" "killed: timeout" "$(j .killed)"
        [ "$(j .wall_ms)" -ge 1000 ] || fail "run $i: killed for its 1 s wall clock after $(j .wall_ms) ms"
        echo "ok: run $i: killed after $(j .wall_ms) ms"
done
