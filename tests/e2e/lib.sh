# Helpers for end-to-end tests. tests/run.sh starts one supervisor and one broker for the
# whole suite and exports:
#   ANVIL_SOCKET        the broker's socket (what anvilctl uses)
#   ANVIL_SUP_SOCKET    the supervisor's socket
#   ANVIL_E2E_STATE     the daemons' state directory (supervisor in sup/, broker in broker/)
#   ANVIL_E2E_SECRET    a secret planted in both daemons' environment
#   ANVIL_E2E_SUP_PID, ANVIL_E2E_BRO_PID
#   ANVIL_BARE_SOCKET   a second supervisor, of the test build, with the Python layers off
#                       (--test-no-python-layers, uids from ANVIL_E2E_BARE_UID_BASE + 1): for the kernel
#                       layers' tests, which must hold without the pre-check and audit hook
#   ANVIL_E2E_BARE_PID
#   ANVIL_BUILD         the build directory
# Each test is its own process (bash), run with a timeout; it prints what it checked and
# exits 0 on success. `fail` ends it with a reason.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CTL="$ANVIL_BUILD/anvilctl"
PY=/usr/bin/python3 # Debian's, with the data stack; never a python3 found earlier on PATH
# Below the suite's own directory (tests/run.sh sets ANVIL_E2E_TMP), so that the suite's check for
# processes left behind sees only its own tests' and never another suite's on the machine.
T=$(mktemp -d "${ANVIL_E2E_TMP:-/tmp}/anvil-e2e.XXXXXX")
chmod 755 "$T"
# The rootless pass (tests/run.sh): the supervisors run as this user; a test's own do too
# (start_sup), and make their state and sockets in $T, which is theirs then.
ROOTLESS_USER=${ANVIL_E2E_ROOTLESS_USER:-}
if [ -n "$ROOTLESS_USER" ]; then
        chown "$ROOTLESS_USER:" "$T"
fi

# Whether the suite's supervisors explain Landlock's refusals: as root they read the kernel's
# audit records (--enable-kernel-audit); an ordinary user may not, and results then say so.
EXPLAINS=1
[ -n "$ROOTLESS_USER" ] && EXPLAINS=0
# explained EXPECTED: EXPECTED where Landlock's refusals are explained, "" where they are not.
explained() {
        [ "$EXPLAINS" = 1 ] && printf '%s' "$1"
}

# skip_if_rootless WHY: ends a test that checks what only a root supervisor has (exit 77).
skip_if_rootless() {
        if [ -n "$ROOTLESS_USER" ]; then
                echo "skip: $*"
                exit 77
        fi
}

# as_supervisor CMD...: starts CMD in the background as the supervisors run (root, or the
# rootless user), its pid in BG_PID and in OWN_PIDS (stopped when the test ends). The daemon
# is the background job itself, not a shell around it: a kill of BG_PID reaches it.
as_supervisor() {
        if [ -n "$ROOTLESS_USER" ]; then
                setpriv --reuid="$ROOTLESS_USER" --regid="$ROOTLESS_USER" --clear-groups -- "$@" &
        else
                "$@" &
        fi
        BG_PID=$!
        OWN_PIDS+=("$BG_PID")
}
OWN_PIDS=() # daemons a test started itself (start_sup): stopped when it ends
# For tests/run.sh's check that a test ended what it started (ANVIL_E2E_PIDFILE): the test's
# process group (timeout's, every process the test starts is in it), and at the end each of
# OWN_PIDS with its start time (so that a pid reused since is not taken for it). The suite
# then looks at those pids alone, never at a pattern over every process on the machine.
record_pid() { # PID
        local f
        [ -n "${ANVIL_E2E_PIDFILE:-}" ] || return 0
        read -r -a f <<<"$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)"
        [ -n "${f[19]:-}" ] && echo "$1 ${f[19]}" >>"$ANVIL_E2E_PIDFILE"
        return 0
}
if [ -n "${ANVIL_E2E_PIDFILE:-}" ]; then
        read -r -a _st <<<"$(sed 's/.*) //' /proc/$$/stat)"
        echo "pgid ${_st[2]}" >>"$ANVIL_E2E_PIDFILE"
        unset _st
fi
cleanup() {
        local p
        for p in "${OWN_PIDS[@]}"; do record_pid "$p"; done
        for p in "${OWN_PIDS[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${OWN_PIDS[@]}"; do wait "$p" 2>/dev/null; done
        # ANVIL_E2E_KEEP=1: a test's directory stays, for a look after a failure
        if [ -n "${ANVIL_E2E_KEEP:-}" ]; then echo "kept: $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# run_exit FILE: the exit status anvilctl gives for the RunResult in FILE (docs/cli.md, "Exit
# status"): 0 ok, 120 blocked, 124 killed: timeout, 121 killed otherwise, the tool's own
# code (1 for one in 120..127), 128+N for a signal.
run_exit() {
        local st code sig
        st=$(jq -r '.status' "$1")
        case $st in
        ok) echo 0 ;;
        blocked) echo 120 ;;
        killed) [ "$(jq -r '.killed' "$1")" = "killed: timeout" ] && echo 124 || echo 121 ;;
        *)
                code=$(jq -r '.exit_code // empty' "$1")
                sig=$(jq -r '.signal // empty' "$1")
                if [ -n "$code" ]; then
                        if [ "$code" -ge 120 ] && [ "$code" -le 127 ]; then echo 1; else echo "$code"; fi
                elif [ -n "$sig" ]; then
                        echo $((128 + $(kill -l "$sig")))
                else
                        echo 122
                fi
                ;;
        esac
}

# run_json TOOL.py [anvilctl run options...]: the RunResult JSON in $T/result.json. anvilctl's
# exit status must be the one the result gives (run_exit): a run refused (an error frame, no
# result) fails the test.
run_json() {
        local rc=0
        "$CTL" run "$@" --json >"$T/result.json" 2>"$T/ctl.err" || rc=$?
        [ -s "$T/result.json" ] || fail "anvilctl run $* exited $rc: $(cat "$T/ctl.err")"
        local want
        want=$(run_exit "$T/result.json")
        [ "$rc" = "$want" ] || fail "anvilctl run $* exited $rc, its result ($(jq -c '{status, exit_code, signal, killed}' "$T/result.json")) gives $want: $(cat "$T/ctl.err")"
}

# j FILTER: a jq filter on the last result
j() {
        jq -r "$1" "$T/result.json"
}

# bare_json TOOL.py [options...]: run_json against the supervisor with the Python layers off;
# the run must say so ("layers_disabled"), or the test would not show what it claims.
bare_json() {
        ANVIL_SOCKET="$ANVIL_BARE_SOCKET" run_json "$@"
        [ "$(j '[.events[] | select(.kind == "layers_disabled")] | length')" = 1 ] ||
                fail "the bare supervisor's run does not say its Python layers are off"
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

# Processes on the host running as one of the suite supervisors' jail uids (uid bases
# ANVIL_E2E_UID_BASE and ANVIL_E2E_BARE_UID_BASE, runs at +1 and up), other than spares: after a run has ended
# there must be none. A spare is a clone of a supervisor that has not executed anything yet,
# so its executable is still anvil-supervisor; after GO every jail process has executed
# anvil-init, anvil-py or what they start, and nothing in a jail can execute the supervisor.
# (Other supervisors on the machine with the same uid base would be counted too.)
# Rootless, every jail runs as the rootless user: its processes other than the supervisors
# are counted.
jail_procs_left() {
        local n=0 uid pid exe ruid=-1
        [ -n "$ROOTLESS_USER" ] && ruid=$(id -u "$ROOTLESS_USER")
        while read -r pid uid; do
                [ "$uid" -lt 0 ] && uid=$((uid + 4294967296)) # ps shows a uid over 2^31 as negative
                { [ "$uid" -gt "$ANVIL_E2E_UID_BASE" ] && [ "$uid" -le $((ANVIL_E2E_UID_BASE + 264)) ]; } ||
                        { [ "$uid" -gt "$ANVIL_E2E_BARE_UID_BASE" ] &&
                                [ "$uid" -le $((ANVIL_E2E_BARE_UID_BASE + 264)) ]; } || [ "$uid" = "$ruid" ] || continue
                exe=$(readlink "/proc/$pid/exe" 2>/dev/null)
                [[ "$(basename "${exe% (deleted)}")" = anvil-supervisor ]] && continue
                n=$((n + 1))
        done < <(ps -eo pid=,uid=)
        echo "$n"
}

# start_sup NAME UID_OFFSET [supervisor options...]: a supervisor of the test's own, with its
# socket at $T/NAME.sock, state in $T/NAME, log in $T/NAME.log, jail uids from
# ANVIL_E2E_UID_BASE + UID_OFFSET (each test its own offset); its pid in SUP_PID. It is
# stopped when the test ends. SUP_WRAP (an array) is a command that execs it. SUP_CONFIG: its
# --config (default /dev/null: every daemon the tests start is given --config, so that a host's
# /etc/anvil/anvil.conf never changes a test).
SUP_WRAP=()
[ -n "$ROOTLESS_USER" ] && SUP_WRAP=(setpriv --reuid="$ROOTLESS_USER" --regid="$ROOTLESS_USER" --clear-groups --)
start_sup() {
        local name=$1 off=$2 before
        shift 2
        # A socket left by a supervisor killed outright is no sign of this one: its log is.
        before=$(grep -c ": listening on " "$T/$name.log" 2>/dev/null)
        "${SUP_WRAP[@]}" "$ANVIL_BUILD/anvil-supervisor" --config "${SUP_CONFIG:-/dev/null}" \
                --listen "$T/$name.sock" --state-dir "$T/$name" --uid-base $((ANVIL_E2E_UID_BASE + off)) "$@" >>"$T/$name.log" 2>&1 &
        SUP_PID=$!
        OWN_PIDS+=("$SUP_PID")
        # while it lives, up to 180 s: its start (font cache, probe) takes much longer on an
        # emulated machine (tests/vm) than here
        for _ in $(seq 1800); do
                [ "$(grep -c ": listening on " "$T/$name.log")" -gt "${before:-0}" ] && return
                kill -0 "$SUP_PID" 2>/dev/null || break
                sleep 0.1
        done
        fail "the supervisor $name did not start: $(cat "$T/$name.log")"
}

# cg_bases LOG: the cgroup base directories a supervisor's log names, one a line.
cg_bases() {
        sed -nE 's/.*: cgroup base \([a-z]+\): (.*)$/\1/p' "$1" | sort -u
}

# cg_runs LOG: the run cgroups (directories) below those bases, one a line.
cg_runs() {
        local b
        for b in $(cg_bases "$1"); do
                [ -d "$b" ] && find "$b" -mindepth 1 -maxdepth 1 -type d
        done
}

# no_run_cgroups WHAT LOG: waits (up to 10 s: removal runs after the result is sent) until no
# run cgroup is left below the bases, and fails naming them if one is.
no_run_cgroups() {
        for _ in $(seq 100); do
                [ -z "$(cg_runs "$2")" ] && { echo "ok: $1: no run cgroup left"; return; }
                sleep 0.1
        done
        fail "$1: run cgroups left: $(cg_runs "$2" | tr '\n' ' ')"
}

# ---- the daemons' bounds on clients (t_bounds_*.sh) ----
CONNTOOL="$ANVIL_BUILD/tests/conntool"

# start_bro NAME [broker options...]: a broker of the test's own on the suite's supervisor,
# its socket at $T/NAME.sock opened to group 65534 (the group of the tests' other uids),
# state in $T/NAME, log in $T/NAME.log; its pid in BRO_PID; stopped when the test ends.
# glibc's mmap threshold is set to 64 KiB, so that every buffer of a frame is a mapping of
# its own, given back when it is freed: the broker's RSS then shows what it holds. BRO_CONFIG:
# its --config (default /dev/null, as SUP_CONFIG above).
start_bro() {
        local name=$1 before
        shift
        # A log of an earlier broker of the same name says nothing of this one.
        before=$(grep -c ": listening on " "$T/$name.log" 2>/dev/null)
        GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=65536 \
                "$ANVIL_BUILD/anvil-broker" --config "${BRO_CONFIG:-/dev/null}" --supervisor "$ANVIL_SUP_SOCKET" \
                --listen "$T/$name.sock" --state-dir "$T/$name" --socket-group 65534 "$@" >>"$T/$name.log" 2>&1 &
        BRO_PID=$!
        OWN_PIDS+=("$BRO_PID")
        for _ in $(seq 100); do
                [ "$(grep -c ": listening on " "$T/$name.log")" -gt "${before:-0}" ] && return
                kill -0 "$BRO_PID" 2>/dev/null || break
                sleep 0.1
        done
        fail "the broker $name did not start: $(cat "$T/$name.log")"
}

# as_uid UID CMD...: CMD as UID, in group 65534 (so that it may use the sockets above).
as_uid() {
        local uid=$1
        shift
        setpriv --reuid="$uid" --regid=65534 --clear-groups -- "$@"
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
n_fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l; }

# hold NAME UID SOCKET N [PARTIAL]: uid UID holds N connections to SOCKET (conntool hold,
# each with PARTIAL bytes of an unfinished frame) until `release NAME`, which has it print
# what each had received (conntool's summary) into $T/NAME.out.
declare -A HOLD_PID
hold() {
        local name=$1 uid=$2
        shift 2
        # setpriv and conntool exec in turn: the background job's pid is conntool's.
        (exec setpriv --reuid="$uid" --regid=65534 --clear-groups -- "$CONNTOOL" "$1" hold "${@:2}") \
                >"$T/$name.out" 2>&1 &
        HOLD_PID[$name]=$!
        OWN_PIDS+=("$!")
        for _ in $(seq 300); do
                grep -q '^held ' "$T/$name.out" && return
                kill -0 "${HOLD_PID[$name]}" 2>/dev/null || break
                sleep 0.1
        done
        fail "hold $name: $(cat "$T/$name.out")"
}
release() {
        kill -USR1 "${HOLD_PID[$1]}"
        wait "${HOLD_PID[$1]}" || fail "hold $1: conntool exited $?: $(cat "$T/$1.out")"
}
