# Helpers for end-to-end tests. tests/run.sh starts one supervisor and one broker for the
# whole suite and exports:
#   ANVIL_SOCKET        the broker's socket (what anvilctl uses)
#   ANVIL_SUP_SOCKET    the supervisor's socket
#   ANVIL_E2E_STATE     the daemons' state directory (supervisor in sup/, broker in broker/)
#   ANVIL_E2E_SECRET    a secret planted in both daemons' environment
#   ANVIL_E2E_SUP_PID, ANVIL_E2E_BRO_PID
#   ANVIL_BUILD         the build directory
# Each test is its own process (bash), run with a timeout; it prints what it checked and
# exits 0 on success. `fail` ends it with a reason.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CTL="$ANVIL_BUILD/anvilctl"
PY=/usr/bin/python3 # Debian's, with the data stack; never a python3 found earlier on PATH
T=$(mktemp -d /tmp/anvil-e2e.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# run_json TOOL.py [anvilctl run options...]: the RunResult JSON in $T/result.json
run_json() {
        "$CTL" run "$@" --json >"$T/result.json" 2>"$T/ctl.err" || fail "anvilctl run $* exited $?: $(cat "$T/ctl.err")"
}

# j FILTER: a jq filter on the last result
j() {
        jq -r "$1" "$T/result.json"
}

expect_eq() { # what expected actual
        [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
        echo "ok: $1 = $3"
}

expect_match() { # what regex actual
        [[ "$3" =~ $2 ]] || fail "$1: '$3' does not match /$2/"
        echo "ok: $1 ~ /$2/"
}

# tool NAME <<'PY' ... PY: writes $T/NAME
tool() {
        cat >"$T/$1"
}

# A normal run still works: the daemons keep serving.
expect_serving() {
        tool serving.py <<<'print("still serving")'
        run_json "$T/serving.py"
        expect_eq "a following run's status" ok "$(j .status)"
        expect_eq "a following run's stdout" "still serving" "$(j .stdout | head -1)"
}

# Processes on the host running as one of the suite supervisor's jail uids (its default
# --uid-base 2000000000, runs at +1 and up), other than its spares: after a run has ended
# there must be none. A spare is a clone of the supervisor that has not executed anything
# yet, so its executable is still the supervisor's; nothing in a jail can make that so.
jail_procs_left() {
        local sup n=0 uid pid
        sup=$(readlink "/proc/$ANVIL_E2E_SUP_PID/exe")
        while read -r pid uid; do
                [ "$uid" -gt 2000000000 ] && [ "$uid" -le 2000000264 ] || continue
                [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$sup" ] && continue
                n=$((n + 1))
        done < <(ps -eo pid=,uid=)
        echo "$n"
}
