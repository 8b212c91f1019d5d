# A run whose client goes away at any moment of its start (before its cgroup attach is done,
# while pid 1 is being verified, once the tool runs) ends as cancelled, never as a failure of
# the sandbox: what fails after the kill (an attach of a child that is gone, a verify of a pid
# 1 that died) is the kill's doing. Forty runs, each cancelled after 0-80 ms, on a supervisor
# without spares (every run takes the cold path, its attach on the thread pool).
. "$(dirname "$0")/lib.sh"
start_sup race 800000000 --spares 0 --max-runs 8
printf 'import time\ntime.sleep(60)\n' >"$T/sleep.py"
# A client killed before it sent its request started no run (the probe's own run at start-up is
# not a client's). Where the client starts slowly (the sanitized build), more of the early kills
# land before the request: the loop goes on until forty runs have started, at most 200 tries.
started() { grep ': started for ' "$T/race.log" | grep -vc 'started for the supervisor'; }
for _ in $(seq 200); do
        [ "$(started)" -ge 40 ] && break
        ANVIL_SOCKET="$T/race.sock" "$CTL" run "$T/sleep.py" --timeout 60 >/dev/null 2>&1 &
        c=$!
        sleep "0.0$((RANDOM % 9))"
        kill "$c"
        wait "$c" 2>/dev/null
done
# Every run that started must end cancelled.
for _ in $(seq 100); do
        [ "$(grep -c 'killed: cancelled' "$T/race.log")" -ge "$(started)" ] && break
        sleep 0.1
done
n=$(started)
[ "$n" -ge 30 ] || fail "only $n runs started in 200 tries: the race was not run"
expect_eq "runs that ended cancelled (of the $n that started)" "$n" "$(grep -c 'killed: cancelled' "$T/race.log")"
expect_eq "runs reported as a failure of the sandbox" 0 "$(grep -c 'sandbox failed' "$T/race.log")"
expect_eq "jail processes left on the host" 0 "$(jail_procs_left)"
expect_serving
