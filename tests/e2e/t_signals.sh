# Signals reset before every exec (issue 11): the supervisor ignores SIGPIPE (and libuv
# blocks signals in its threads and around its forks), and an ignored signal and the signal
# mask survive execve; so the jail's child resets every disposition and empties the mask
# before it executes pid 1 (C11), and pid 1 again before it executes the runner (P3)
# (lib/proc.c, anvil_reset_signals). A tool reads its own /proc status and its parent's,
# pid 1's:
#   - the tool (anvil-py): nothing blocked; ignored exactly SIGPIPE and SIGXFSZ, which the
#     runner's interpreter ignores itself, as python3 does (runner/main.c);
#   - pid 1: nothing ignored; blocked SIGCHLD alone, which it blocks itself for its
#     signalfd (P5);
# with user namespaces (on the direct rung Landlock keeps the host's /proc from the tool, its
# own status included: nothing to read there; the same C11 and P3 execute pid 1 and the
# runner). Control: a supervisor of the
# test build with --test-no-signal-reset, whose pid 1 then ignores exactly what the
# supervisor ignores (its own status: SIGPIPE at least), and the tool that and its own.
. "$(dirname "$0")/lib.sh"

SIGPIPE_BIT=0000000000001000
PY_IGN=0000000001001000 # SIGPIPE and SIGXFSZ
CHLD_BLK=0000000000010000
NONE=0000000000000000

tool sigs.py <<'PY'
import os
def sig(path):
    d = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("SigIgn", "SigBlk"):
                d[k] = v.strip()
    return d
import time
me = sig("/proc/self/status")
# pid 1 blocks its SIGCHLD as it begins to reap (P5), just after it let the runner go (P4a): a
# tool this quick may look before; it looks again for up to a second.
for _ in range(100):
    parent = sig("/proc/%d/status" % os.getppid())
    if parent["SigBlk"] != "0000000000000000":
        break
    time.sleep(0.01)
print(me["SigIgn"], me["SigBlk"], parent["SigIgn"], parent["SigBlk"])
PY

# GLIBC_RT: signals 32 and 33, glibc's own. A process below GNU make inherits them ignored
# (make ignores both); the reset must clear them too (it does, with rt_sigaction), but what the
# supervisor's own status shows of them depends on whether glibc has installed its handler for
# 33 yet (it does when the first thread starts), so the control, which compares the tool with
# the supervisor, leaves them out on both sides.
GLIBC_RT=0000000180000000
check() { # what, supervisor socket, expected pid 1 SigIgn, expected tool SigIgn [mask]
        ANVIL_SOCKET="$2" run_json "$T/sigs.py"
        expect_eq "$1: status" ok "$(j .status)"
        read -r ign blk pign pblk <<<"$(j .stdout)"
        if [ -n "${5:-}" ]; then
                ign=$(printf '%016x' $((16#$ign & ~16#$5)))
                pign=$(printf '%016x' $((16#$pign & ~16#$5)))
        fi
        expect_eq "$1: the tool's blocked signals" $NONE "$blk"
        expect_eq "$1: the tool's ignored signals (its interpreter's own)" "$4" "$ign"
        expect_eq "$1: pid 1's blocked signals (its own SIGCHLD)" $CHLD_BLK "$pblk"
        expect_eq "$1: pid 1's ignored signals" "$3" "$pign"
}

# The Python layers off (a test build's --test-no-python-layers): the audit hook would refuse
# the tool's read of its parent's /proc status; the kernel layers still hold the tool.
start_sup sig 910000000 --test-no-python-layers
check "user namespaces" "$T/sig.sock" $NONE $PY_IGN

# Control: without the reset, pid 1 ignores what the supervisor ignores (SIGPIPE, and what
# the shell that started it ignored).
start_sup nosig 912000000 --test-no-python-layers --test-no-signal-reset
sup_ign=$(awk '/^SigIgn:/ {print $2}' "/proc/$SUP_PID/status")
sup_ign=$(printf '%016x' $((16#$sup_ign & ~16#$GLIBC_RT)))
expect_eq "control: the supervisor itself ignores SIGPIPE" 1 $(((16#$sup_ign & 16#$SIGPIPE_BIT) != 0))
check "control, no reset" "$T/nosig.sock" "$sup_ign" "$(printf '%016x' $((16#$sup_ign | 16#$PY_IGN)))" $GLIBC_RT
