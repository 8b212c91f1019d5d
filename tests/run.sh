#!/usr/bin/env bash
# Runs every test and ends with the line "N passed, N failed".
#   unit: each build/tests/test_* program (cmocka, TAP output: one count per test case)
#   e2e:  each tests/e2e/t_*.sh, in its own process with a timeout, against one supervisor
#         and one broker started here for the whole suite (they need root: run as root)
# Usage: tests/run.sh [BUILD] [t_NAME...]: with names, only those end-to-end tests are run.
# A failing test shows the last 40 lines of its output; ANVIL_E2E_TAIL=N shows N;
# ANVIL_E2E_SHOW=1 shows every test's output.
# ANVIL_E2E_KEEP=1 keeps each test's directory (its path is printed) instead of removing it.
# ANVIL_E2E_UID_BASE (default 2000000000): see below.
# Each result line carries the test's wall time in seconds, and the slowest five are listed
# before the last line.
# Not root: the end-to-end tests cannot run (the supervisor needs root), and the suite says
# "NOT RUN: N end-to-end tests need root" and counts them as failed (in the last line and the
# exit status): a security suite that checked none of its jails must not look green. The
# unit tests alone are a pass only when asked for: ANVIL_E2E_ALLOW_ROOTLESS=1 (then the NOT
# RUN line stays, and they are not counted).
# A sanitized build (make check SANITIZE=1, seen from anvil-supervisor linking libasan): every
# sanitized process writes its ASan and LeakSanitizer reports to files of a directory of the
# suite's own (never mixed into the daemons' logs), and a report after a test, or from the
# daemons at their exit, is a failure of its own ("sanitizer-after-NAME"), with the report
# shown; UBSan's go to stderr (see e2e_pass).
set -u
BUILD=$(cd "${1:-build}" && pwd)
shift
only=("$@")
TOP=$(cd "$(dirname "$0")/.." && pwd)
pass=0
fail=0
failed=()

TIMES=() # "seconds name" of every test program and end-to-end test, for the slowest five

# since T0: the seconds since $EPOCHREALTIME was T0, to a tenth.
since() {
        local now=$EPOCHREALTIME
        awk -v a="$1" -v b="$now" 'BEGIN { printf "%.1f", b - a }'
}

record() { # name rc [seconds]
        local t=${3:+ (${3} s)}
        [ -n "${3:-}" ] && TIMES+=("$3 $1")
        if [ "$2" -eq 0 ]; then
                pass=$((pass + 1))
                echo "PASS $1$t"
        else
                fail=$((fail + 1))
                failed+=("$1")
                echo "FAIL $1$t"
        fi
}

# ---- a sanitized build's reports (see the top) ----
SAN_DIR=""
if ldd "$BUILD/anvil-supervisor" 2>/dev/null | grep -q libasan; then
        SAN_DIR=$(mktemp -d /tmp/anvil-sanitizer.XXXXXX)
        mkdir "$SAN_DIR/new" "$SAN_DIR/seen"
        # Written by every sanitized process: the daemons as root or as the rootless user, the
        # tools of the tests as other uids.
        chmod 755 "$SAN_DIR" && chmod 1777 "$SAN_DIR/new"
        # detect_leaks: LeakSanitizer at every sanitized program's exit, against the
        # suppressions of tests/lsan.supp (each says why; nothing is suppressed wholesale).
        # abort_on_error=0: a report ends the program with exit code 1 (the tests see it fail)
        # rather than a core dump per report.
        export ASAN_OPTIONS="log_path=$SAN_DIR/new/asan:detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_invalid_pointer_pairs=0:check_initialization_order=1"
        export LSAN_OPTIONS="suppressions=$TOP/tests/lsan.supp:print_suppressions=0"
        export UBSAN_OPTIONS="log_path=$SAN_DIR/new/ubsan:print_stacktrace=1:halt_on_error=1"
        # For the tests that measure a daemon's memory: ASan's shadow and quarantine are in its
        # RSS, and a test widens its bound under a sanitized build only (it says so).
        export ANVIL_E2E_SANITIZE=1
        echo "sanitized build: ASan and UBSan reports in $SAN_DIR"
fi
# san_check NAME: a failure named sanitizer-after-NAME if a sanitized process reported since
# the last check, with the reports' first lines; they are kept in $SAN_DIR/seen.
san_check() {
        [ -n "$SAN_DIR" ] || return 0
        local f any=""
        for f in "$SAN_DIR"/new/*; do
                [ -e "$f" ] || continue
                any=1
                echo "    sanitizer report $(basename "$f"):"
                grep -m1 -E 'ERROR|runtime error|SUMMARY' "$f" | sed 's/^/        /'
                sed -n '1,40p' "$f" | sed 's/^/        /'
                mv "$f" "$SAN_DIR/seen/${1//\//_}.$(basename "$f")" # rootless/t_x: no directory
        done
        [ -z "$any" ] || record "sanitizer-after-$1" 1
}

slowest() {
        [ "${#TIMES[@]}" -gt 0 ] || return 0
        echo "slowest:"
        printf '%s\n' "${TIMES[@]}" | sort -rn | head -5 | awk '{ printf "    %6.1f s  %s\n", $1, $2 }'
}

echo "== unit tests"
for t in "$BUILD"/tests/test_*; do
        [ -x "$t" ] || continue
        t0=$EPOCHREALTIME
        out=$(CMOCKA_MESSAGE_OUTPUT=TAP timeout 120 "$t" 2>&1)
        rc=$?
        secs=$(since "$t0")
        TIMES+=("$secs $(basename "$t")")
        n_ok=$(grep -c '^ok ' <<<"$out")
        n_bad=$(grep -c '^not ok ' <<<"$out")
        pass=$((pass + n_ok))
        fail=$((fail + n_bad))
        if [ "$n_bad" -gt 0 ] || { [ "$rc" -ne 0 ] && [ "$n_bad" -eq 0 ]; }; then
                grep -A5 '^not ok ' <<<"$out"
                failed+=("$(basename "$t")")
                # A crash before any TAP line counts as one failure.
                [ "$n_bad" -eq 0 ] && fail=$((fail + 1))
        fi
        echo "$(basename "$t"): $n_ok ok, $n_bad not ok ($secs s)"
        san_check "$(basename "$t")"
done

e2e_names=()
for t in "$TOP"/tests/e2e/t_*.sh; do
        name=$(basename "$t" .sh)
        if [ "${#only[@]}" -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then
                continue
        fi
        e2e_names+=("$name")
done

echo "== end-to-end tests"
if [ "$(id -u)" -ne 0 ]; then
        echo "NOT RUN: ${#e2e_names[@]} end-to-end tests need root (the supervisor does; CI runs this suite as root)"
        if [ -n "${ANVIL_E2E_ALLOW_ROOTLESS:-}" ]; then
                echo "(ANVIL_E2E_ALLOW_ROOTLESS=1: the unit tests alone were asked for; the end-to-end tests are not counted)"
        else
                fail=$((fail + ${#e2e_names[@]}))
                echo "they count as failed: ANVIL_E2E_ALLOW_ROOTLESS=1 runs the unit tests alone as a pass"
        fi
        slowest
        [ -n "$SAN_DIR" ] && [ "$fail" -eq 0 ] && rm -rf "$SAN_DIR"
        echo "$pass passed, $fail failed"
        [ "$fail" -eq 0 ]
        exit
fi
# The suite's supervisors switch the kernel's audit on (see below); it is put back as it was.
AUDIT_BEFORE=$("$BUILD/tests/auditstate" 2>/dev/null)
export ANVIL_BUILD="$BUILD"
export ANVIL_E2E_SECRET="anvil-e2e-secret-$RANDOM$RANDOM"
# The jails' host uids: the suite's supervisor uses ANVIL_E2E_UID_BASE + 1 and up, the bare
# one 50,000,000 above. Two suites at once on one machine (two checkouts) need different bases.
export ANVIL_E2E_UID_BASE=${ANVIL_E2E_UID_BASE:-2000000000}
export ANVIL_E2E_BARE_UID_BASE=$((ANVIL_E2E_UID_BASE + 50000000))
skipped=()
STATES=()

# wait_socket PATH PID: until the daemon PID listens on PATH, for as long as it lives, up to
# 180 s (a supervisor's start builds the font cache and runs the probe: seconds here, more on
# an emulated machine, tests/vm).
wait_socket() {
        for _ in $(seq 1800); do
                [ -S "$1" ] && return 0
                kill -0 "$2" 2>/dev/null || return 1
                sleep 0.1
        done
        return 1
}

stop_daemons() {
        kill "$ANVIL_E2E_BRO_PID" "$ANVIL_E2E_SUP_PID" "$ANVIL_E2E_BARE_PID" 2>/dev/null
        wait "$ANVIL_E2E_BRO_PID" "$ANVIL_E2E_SUP_PID" "$ANVIL_E2E_BARE_PID" 2>/dev/null
}

# start_time PID: the process's start time (field 22 of /proc/PID/stat, after the command
# name, which may hold spaces), so that a pid the kernel has since given to another process
# is never taken for the one recorded.
start_time() {
        local f
        read -r -a f <<<"$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)"
        echo "${f[19]:-}"
}
MY_PGID=$(ps -o pgid= $$ | tr -d ' ')

# left_by PIDFILE: the processes a test left running, one "pid command" a line: those still
# in its process group (timeout made one for the test; lib.sh writes "pgid N" in PIDFILE:
# everything the test started, in the background or not, is in it unless it left the group,
# which nothing of ours does outside a jail), and the daemons it recorded (lib.sh writes "pid
# start-time" of each) still running with the same start time. Nothing else on the machine is
# looked at: another suite's processes are not ours to count, nor to end.
left_by() {
        local pidfile=$1 pid st pgid
        pgid=$(awk '$1 == "pgid" { print $2; exit }' "$pidfile")
        {
                [ -n "$pgid" ] && [ "$pgid" != "$MY_PGID" ] && ps -eo pid=,pgid= | awk -v g="$pgid" '$2 == g { print $1 }'
                while read -r pid st; do
                        [ "$pid" != pgid ] && [ -n "$st" ] && [ "$(start_time "$pid")" = "$st" ] && echo "$pid"
                done <"$pidfile"
        } | sort -un | while read -r pid; do
                # A zombie is not running (its parent, gone, leaves it to init to reap), and a
                # process that has exited has no command line left.
                local f
                read -r -a f <<<"$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null)"
                [ -n "${f[0]:-}" ] && [ "${f[0]}" != Z ] && [ "${f[0]}" != X ] || continue
                echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
        done
}
restore_audit() {
        if [ "$AUDIT_BEFORE" = 0 ]; then
                "$BUILD/tests/auditstate" set 0 || echo "could not switch the kernel's audit back off"
        fi
}
trap 'stop_daemons; restore_audit' EXIT

# e2e_pass MODE: the daemons and every end-to-end test, once.
#   root:     the supervisors run as root, as systemd starts them.
#   rootless: they run as an ordinary user (ANVIL_E2E_ROOTLESS_USER, made if missing): jails
#             in user namespaces alone, no cgroups, no kernel audit. A test that checks what
#             only root has says so and exits 77 (skipped); the rest must pass unchanged.
e2e_pass() {
        local mode=$1 prefix="" as=()
        STATE=$(mktemp -d /tmp/anvil-suite.XXXXXX)
        STATES+=("$STATE")
        chmod 711 "$STATE"
        local audit=(--enable-kernel-audit)
        if [ "$mode" = rootless ]; then
                prefix="rootless/"
                export ANVIL_E2E_ROOTLESS_USER=${ANVIL_E2E_ROOTLESS_USER:-anvil-e2e}
                if ! id -u "$ANVIL_E2E_ROOTLESS_USER" >/dev/null 2>&1; then
                        echo "rootless: making the user $ANVIL_E2E_ROOTLESS_USER for this pass"
                        useradd --system --no-create-home --shell /usr/sbin/nologin "$ANVIL_E2E_ROOTLESS_USER" ||
                                { record "${prefix}user" 1; return; }
                fi
                chown "$ANVIL_E2E_ROOTLESS_USER:" "$STATE"
                as=(setpriv --reuid="$ANVIL_E2E_ROOTLESS_USER" --regid="$ANVIL_E2E_ROOTLESS_USER" --clear-groups --)
                audit=() # an ordinary user may not switch it on (nor read it)
        else
                unset ANVIL_E2E_ROOTLESS_USER
        fi
        export ANVIL_E2E_STATE="$STATE"
        export ANVIL_E2E_TMP="$STATE" # each test's own directory is made below it (lib.sh)
        export ANVIL_SUP_SOCKET="$STATE/supervisor.sock"
        export ANVIL_SOCKET="$STATE/anvil.sock"
        # --enable-kernel-audit (both supervisors, as root): the Landlock tests check that the
        # kernel's denials are explained with their exact messages, and the legitimate tools
        # that none happens at all; both need the kernel's audit on. It is switched on for the
        # machine (one switch for everyone) and put back as it was when the suite ends.
        ANVIL_TEST_SECRET="$ANVIL_E2E_SECRET" "${as[@]}" "$BUILD/anvil-supervisor" --config /dev/null --listen "$ANVIL_SUP_SOCKET" \
                --state-dir "$STATE/sup" --uid-base "$ANVIL_E2E_UID_BASE" "${audit[@]}" >"$STATE/supervisor.log" 2>&1 &
        export ANVIL_E2E_SUP_PID=$!
        wait_socket "$ANVIL_SUP_SOCKET" "$ANVIL_E2E_SUP_PID"
        # A second supervisor with the Python layers off (a test build's option): the kernel
        # layers' tests run against it, to show that each holds alone.
        export ANVIL_BARE_SOCKET="$STATE/bare.sock"
        ANVIL_TEST_SECRET="$ANVIL_E2E_SECRET" "${as[@]}" "$BUILD/anvil-supervisor" --config /dev/null --listen "$ANVIL_BARE_SOCKET" \
                --state-dir "$STATE/bare" --uid-base "$ANVIL_E2E_BARE_UID_BASE" --test-no-python-layers \
                "${audit[@]}" >"$STATE/bare.log" 2>&1 &
        export ANVIL_E2E_BARE_PID=$!
        wait_socket "$ANVIL_BARE_SOCKET" "$ANVIL_E2E_BARE_PID"
        ANVIL_TEST_SECRET="$ANVIL_E2E_SECRET" "$BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" \
                --listen "$ANVIL_SOCKET" --state-dir "$STATE/broker" >"$STATE/broker.log" 2>&1 &
        export ANVIL_E2E_BRO_PID=$!
        wait_socket "$ANVIL_SOCKET" "$ANVIL_E2E_BRO_PID"

        if [ ! -S "$ANVIL_SUP_SOCKET" ] || [ ! -S "$ANVIL_SOCKET" ] || [ ! -S "$ANVIL_BARE_SOCKET" ]; then
                echo "the daemons did not start:"
                cat "$STATE/supervisor.log" "$STATE/broker.log" "$STATE/bare.log"
                record "${prefix}daemons-start" 1
                stop_daemons
                return
        fi
        for name in "${e2e_names[@]}"; do
                t=$TOP/tests/e2e/$name.sh
                # The daemons the test starts itself, and its process group, are recorded here
                # (lib.sh), for the check below: timeout runs the test in a group of its own.
                # In the foreground (a background job of a script ignores SIGINT and SIGQUIT,
                # and so would every daemon and tool the test starts), its output to a file (a
                # process it left holding a pipe would keep $(...) waiting, and the check
                # below would never be reached).
                export ANVIL_E2E_PIDFILE="$STATE/pids.$name"
                : >"$ANVIL_E2E_PIDFILE"
                t0=$EPOCHREALTIME
                timeout 300 bash "$t" >"$STATE/out.$name" 2>&1
                rc=$?
                secs=$(since "$t0")
                out=$(cat "$STATE/out.$name")
                rm -f "$STATE/out.$name"
                [ "$rc" -eq 124 ] && out="$out
FAIL: timed out after 300 s"
                if [ "$rc" -eq 77 ]; then
                        skipped+=("$prefix$name")
                        echo "SKIP $prefix$name: $(grep '^skip:' <<<"$out" | tail -1) ($secs s)"
                        continue
                fi
                if [ "$rc" -ne 0 ]; then
                        sed 's/^/    /' <<<"$out" | tail -"${ANVIL_E2E_TAIL:-40}"
                fi
                [ -n "${ANVIL_E2E_SHOW:-}" ] && echo "$out"
                record "$prefix$name" "$rc" "$secs"
                # A test ends what it started: nothing of its process group, nor a daemon it
                # recorded, may still run once it has ended. Only those pids are looked at,
                # and only those are ended.
                # Up to 5 s: what the test ended in its cleanup may still be exiting.
                for _ in $(seq 50); do
                        left=$(left_by "$ANVIL_E2E_PIDFILE")
                        [ -z "$left" ] && break
                        sleep 0.1
                done
                if [ -n "$left" ]; then
                        echo "    left running by $name:"
                        sed 's/^/        /' <<<"$left"
                        record "${prefix}nothing-left-by-$name" 1
                        for p in $(awk '{print $1}' <<<"$left"); do kill "$p" 2>/dev/null; done
                fi
                rm -f "$ANVIL_E2E_PIDFILE"
                san_check "$prefix$name"
                # Both daemons must survive every test.
                if ! kill -0 "$ANVIL_E2E_SUP_PID" 2>/dev/null || ! kill -0 "$ANVIL_E2E_BRO_PID" 2>/dev/null ||
                        ! kill -0 "$ANVIL_E2E_BARE_PID" 2>/dev/null; then
                        record "${prefix}daemons-alive-after-$name" 1
                        break
                fi
        done
        stop_daemons
        # The suite's daemons' own reports at their exit (LeakSanitizer's, say).
        san_check "${prefix}the-suite-daemons"
        # UBSan's reports: GCC links its runtime apart from ASan's, and that one writes to
        # stderr whatever log_path says, so they are in the daemons' logs (and any of them
        # ends its program: -fno-sanitize-recover).
        if [ -n "$SAN_DIR" ] && grep -q 'runtime error:' "$STATE"/*.log; then
                grep -A12 'runtime error:' "$STATE"/*.log | sed 's/^/    /'
                record "${prefix}ubsan-in-the-suite-daemons" 1
        fi
}

# CI runs the suite once more with the supervisors as an ordinary user (issue 4):
# ANVIL_E2E_PASSES="root" runs the first pass only, "rootless" the second only.
for mode in ${ANVIL_E2E_PASSES:-root rootless}; do
        [ "$mode" = rootless ] && echo "== end-to-end tests, rootless (the supervisors as an ordinary user)"
        e2e_pass "$mode"
done
restore_audit
trap - EXIT
[ "${#skipped[@]}" -gt 0 ] && echo "${#skipped[@]} skipped (what only root has): ${skipped[*]}"
slowest
if [ "$fail" -eq 0 ]; then
        rm -rf "${STATES[@]}"
        [ -n "$SAN_DIR" ] && rm -rf "$SAN_DIR"
else
        echo "daemon logs kept in ${STATES[*]}"
        [ -n "$SAN_DIR" ] && echo "sanitizer reports kept in $SAN_DIR/seen"
        echo "failed: ${failed[*]}"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
