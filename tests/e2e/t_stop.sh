# Stopping the supervisor (SIGTERM): a live run is killed and its result still reaches the
# client, with what the tool printed before; the supervisor exits 0 and leaves no socket,
# no jail process and no cgroup behind.
. "$(dirname "$0")/lib.sh"
SOCK="$T/sup.sock"
"$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$SOCK" --state-dir "$T/state" --spares 1 --max-runs 2 \
        --uid-base $((ANVIL_E2E_UID_BASE + 400000000)) >"$T/sup.log" 2>&1 &
SUP=$!
trap 'kill $SUP 2>/dev/null; wait $SUP 2>/dev/null; rm -rf "$T"' EXIT
# while it lives, up to 180 s (an emulated machine, tests/vm, starts it slowly)
for _ in $(seq 1800); do [ -S "$SOCK" ] && break; kill -0 $SUP 2>/dev/null || break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the supervisor did not start: $(cat "$T/sup.log")"
base=$(sed -nE 's/.*, as (anvil-[0-9a-f]+)$/\1/p' "$T/sup.log")
[ -n "$base" ] || fail "no cgroup base in the log: $(cat "$T/sup.log")"
expect_eq "its cgroup base exists while it runs" 1 "$(find /sys/fs/cgroup -maxdepth 5 -type d -name "$base" | wc -l | awk '{print ($1 > 0)}')"

tool slow.py <<'PY'
import time
print("before the stop")
time.sleep(30)
PY
ANVIL_SOCKET="$SOCK" "$CTL" run "$T/slow.py" --timeout 60 --json >"$T/result.json" 2>"$T/ctl.err" &
CTLPID=$!
# The tool has printed once it sleeps: a process of the run's uids in clock_nanosleep (230 on
# x86_64, /proc/PID/syscall), however slow the machine (tests/vm emulates one).
asleep() {
        local p u b=$((ANVIL_E2E_UID_BASE + 400000000))
        for p in /proc/[0-9]*; do
                u=$(awk '/^Uid:/ { print $2 }' "$p/status" 2>/dev/null) || continue
                [ -n "$u" ] && [ "$u" -gt "$b" ] && [ "$u" -le $((b + 264)) ] || continue
                case $(cat "$p/syscall" 2>/dev/null) in "230 "*) return 0 ;; esac
        done
        return 1
}
for _ in $(seq 600); do asleep && break; sleep 0.1; done
asleep || fail "the tool never reached its sleep: $(cat "$T/sup.log")"
kill -TERM "$SUP"
wait "$CTLPID"
expect_eq "anvilctl's exit status (the run killed by Anvil)" 121 "$?"
wait "$SUP"
expect_eq "the supervisor's exit status" 0 "$?"
expect_eq "the run's result" "killed: the supervisor is stopping" "$(j .killed)"
expect_eq "what it printed before" "before the stop" "$(j .stdout | head -1)"
[ ! -e "$SOCK" ] || fail "the socket was left behind"
echo "ok: the socket is gone"
# (ps shows a uid of 2^31 and more as negative: this count saw none before it said so)
expect_eq "jail processes of its uids" 0 "$(ps -eo uid= | awk -v b=$((ANVIL_E2E_UID_BASE + 400000000)) '{ u = $1 < 0 ? $1 + 4294967296 : $1 } u > b && u <= b + 264' | wc -l)"
expect_eq "its cgroup base is gone" 0 "$(find /sys/fs/cgroup -maxdepth 5 -type d -name "$base" | wc -l)"
