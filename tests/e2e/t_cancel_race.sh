# A run whose client goes away at any moment of its start (before its cgroup attach is done,
# while pid 1 is being verified, once the tool runs) ends as cancelled, never as a failure of
# the sandbox: what fails after the kill (an attach of a child that is gone, a verify of a pid
# 1 that died) is the kill's doing. Forty runs, each cancelled after 0-80 ms, on a supervisor
# without spares (every run takes the cold path, its attach on the thread pool).
. "$(dirname "$0")/lib.sh"
start_sup race 800000000 --spares 0 --max-runs 8
printf 'import time\ntime.sleep(60)\n' >"$T/sleep.py"
# Each client is killed 0-80 ms after its run has started (the supervisor logs the start once
# GO is sent and the attach queued: the kill lands during the attach, pid 1's verify or the
# tool), so that a slow client start (the sanitized build, a loaded machine) cannot push the
# kills before the request; every fifth is killed 0-80 ms after it was launched instead, before
# or after its request, whichever comes (a client killed before it sent one started no run).
# The probe's own run at start-up is not a client's.
started() { grep ': started for ' "$T/race.log" | grep -vc 'started for the supervisor'; }
for try in $(seq 80); do
        [ "$(started)" -ge 40 ] && break
        ANVIL_SOCKET="$T/race.sock" "$CTL" run "$T/sleep.py" --timeout 60 >/dev/null 2>&1 &
        c=$!
        if [ $((try % 5)) -ne 0 ]; then
                for _ in $(seq 500); do
                        grep -q "started for client pid $c " "$T/race.log" && break
                        kill -0 "$c" 2>/dev/null || break
                        sleep 0.01
                done
        fi
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
[ "$n" -ge 30 ] || fail "only $n runs started in 80 tries: the race was not run"
expect_eq "runs that ended cancelled (of the $n that started)" "$n" "$(grep -c 'killed: cancelled' "$T/race.log")"
expect_eq "runs reported as a failure of the sandbox" 0 "$(grep -c 'sandbox failed' "$T/race.log")"
expect_eq "jail processes left on the host" 0 "$(jail_procs_left)"
expect_serving
