# A fork bomb is refused by seccomp at every fork, each refusal explained (200 recorded, then
# one summary), and leaves nothing behind; a thread bomb (threads are allowed) meets the
# pids limit of the run's cgroup (64 processes and threads), the creations the limit refused
# are counted by the kernel and reported, and nothing is left behind either; the next run
# succeeds.
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"
tool bomb.py <<'PY'
import os
n = 0
while True:
    try:
        os.fork()
    except OSError:
        n += 1
        if n == 2000:
            print("refused forks:", n)
            break
PY
bare_json "$T/bomb.py" --timeout 30
expect_eq "fork bomb: status" ok "$(j .status)"
expect_eq "fork bomb: every fork refused" "refused forks: 2000" "$(j .stdout)"
expect_eq "fork bomb: refusals recorded" 200 "$(j '[.events[] | select(.layer == "seccomp" and .kind == "blocked")] | length')"
expect_eq "fork bomb: the first" \
        "blocked at kernel: clone(CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD) (process creation denied by seccomp)" \
        "$(j '[.events[] | select(.layer == "seccomp")][0].message')"
expect_eq "fork bomb: the rest counted" \
        "1800 more refusals at kernel were not recorded (limit of 200)" \
        "$(j '.events[] | select(.layer == "seccomp" and .kind == "dropped") | .message')"
expect_eq "jail processes left on the host (fork bomb)" 0 "$(jail_procs_left)"

tool threads.py <<'PY'
import threading, time
stop = threading.Event()
started = 0
try:
    while True:
        t = threading.Thread(target=stop.wait, daemon=True)
        t.start()
        started += 1
except RuntimeError as e:
    print("threads started:", started, "then:", e)
stop.set()
PY
bare_json "$T/threads.py" --timeout 30
expect_eq "thread bomb: status" ok "$(j .status)"
expect_match "thread bomb: stopped by the pids limit" \
        '^threads started: (5[0-9]|6[0-3]) then: can.t start new thread$' "$(j .stdout)"
expect_eq "thread bomb: nothing refused by seccomp (threads are allowed)" 0 \
        "$(j '[.events[] | select(.layer == "seccomp")] | length')"
# The pids limit refused the thread bomb's creations, and the kernel counted them
# (pids.events max): the count is in the result and in the trace; tasks never went past the
# limit read back.
expect_eq "the pids limit, read back" 64 "$(j .blast_radius.limits.pids)"
refused=$(j .cgroup.forks_refused)
if [ "$(j .cgroup)" = null ] || [ "$refused" = null ]; then
        echo "skip: no pids cgroup here: refused creations are not counted ($(j .isolation.mechanisms))"
else
        [ "$refused" -ge 1 ] || fail "forks refused: $refused, expected at least 1"
        expect_eq "the trace says so" "$refused forks refused at the limit of 64 processes and threads" \
                "$(j '.events[] | select(.layer == "cgroup" and .kind == "refused") | .message')"
        peak=$(j .cgroup.pids_peak)
        [ "$peak" = null ] || [ "$peak" -le 64 ] || fail "tasks peaked at $peak, over the limit of 64"
        echo "ok: tasks peaked at $peak"
fi
expect_eq "jail processes left on the host" 0 "$(jail_procs_left)"
expect_serving
