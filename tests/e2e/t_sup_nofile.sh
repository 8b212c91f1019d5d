# The supervisor raises its own open file limit to what its configuration can need (its
# connections, and about a dozen fds per run and spare), within the hard limit; under a hard
# limit too low for it, it says so in its log. The jails keep their own limit (1024), and
# jails are built under any soft limit of the supervisor's: a jail's child made copies of its
# fds at 1000 (C2) and failed every run, "Failed to close inherited fds: Invalid argument",
# under a soft limit of 1000 or less (the first case below, 744).
. "$(dirname "$0")/lib.sh"

soft_of() { # PID: the soft "Max open files" of a process
        awk '/^Max open files/ {print $4}' "/proc/$1/limits"
}

# --max-conns 600, --max-runs 4, --spares 1: 600 + 16 * 5 + 64 = 744.
AS=("${SUP_WRAP[@]}")
SUP_WRAP=(prlimit --nofile=256:4096 -- "${AS[@]}")
start_sup raised 600000 --max-runs 4 --spares 1 --max-conns 600
expect_eq "the soft limit, raised to what 600 connections and 5 jails can need" 744 "$(soft_of "$SUP_PID")"
tool fds.py <<'PY'
import resource
print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
PY
ANVIL_SOCKET="$T/raised.sock" run_json "$T/fds.py"
expect_eq "a jail's own limit" 1024 "$(j .stdout)"

# A hard limit under the need is all it can have, and it says so; runs still work.
# --max-conns 1200: 1200 + 80 + 64 = 1344.
SUP_WRAP=(prlimit --nofile=256:1100 -- "${AS[@]}")
start_sup low 601000 --max-runs 4 --spares 1 --max-conns 1200
expect_eq "the soft limit under a hard limit of 1100" 1100 "$(soft_of "$SUP_PID")"
expect_match "its log says so" "the open file limit is 1100 \(its hard limit\), under the 1344 that --max-conns 1200 and --max-runs 4 can need" "$(cat "$T/low.log")"
ANVIL_SOCKET="$T/low.sock" run_json "$T/fds.py"
expect_eq "a run under a supervisor's limit of 1100" ok "$(j .status)"
expect_eq "its jail's own limit" 1024 "$(j .stdout)"

# A hard limit under the jails' own 1024: every run would fail to set it, so the supervisor
# does not start, and says why.
"${AS[@]}" prlimit --nofile=256:700 -- "$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$T/none.sock" --state-dir "$T/none" \
        --uid-base $((ANVIL_E2E_UID_BASE + 602000)) >"$T/none.log" 2>&1
expect_eq "its exit status under a hard limit of 700" 1 "$?"
expect_match "why" "the open file limit's hard limit is 700, under the 1024 each jail's tool is given: raise it \(ulimit -Hn, or LimitNOFILE= in the unit\)" "$(cat "$T/none.log")"
