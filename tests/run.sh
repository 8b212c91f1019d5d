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
set -u
BUILD=$(cd "${1:-build}" && pwd)
shift
only=("$@")
TOP=$(cd "$(dirname "$0")/.." && pwd)
pass=0
fail=0
failed=()

record() { # name rc
        if [ "$2" -eq 0 ]; then
                pass=$((pass + 1))
                echo "PASS $1"
        else
                fail=$((fail + 1))
                failed+=("$1")
                echo "FAIL $1"
        fi
}

echo "== unit tests"
for t in "$BUILD"/tests/test_*; do
        [ -x "$t" ] || continue
        out=$(CMOCKA_MESSAGE_OUTPUT=TAP timeout 120 "$t" 2>&1)
        rc=$?
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
        echo "$(basename "$t"): $n_ok ok, $n_bad not ok"
done

echo "== end-to-end tests"
if [ "$(id -u)" -ne 0 ]; then
        echo "e2e: skipped: the supervisor needs root (CI runs this suite as root)"
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

stop_daemons() {
        kill "$ANVIL_E2E_BRO_PID" "$ANVIL_E2E_SUP_PID" "$ANVIL_E2E_BARE_PID" 2>/dev/null
        wait "$ANVIL_E2E_BRO_PID" "$ANVIL_E2E_SUP_PID" "$ANVIL_E2E_BARE_PID" 2>/dev/null
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
        for _ in $(seq 100); do [ -S "$ANVIL_SUP_SOCKET" ] && break; sleep 0.1; done
        # A second supervisor with the Python layers off (a test build's option): the kernel
        # layers' tests run against it, to show that each holds alone.
        export ANVIL_BARE_SOCKET="$STATE/bare.sock"
        ANVIL_TEST_SECRET="$ANVIL_E2E_SECRET" "${as[@]}" "$BUILD/anvil-supervisor" --config /dev/null --listen "$ANVIL_BARE_SOCKET" \
                --state-dir "$STATE/bare" --uid-base "$ANVIL_E2E_BARE_UID_BASE" --test-no-python-layers \
                "${audit[@]}" >"$STATE/bare.log" 2>&1 &
        export ANVIL_E2E_BARE_PID=$!
        for _ in $(seq 100); do [ -S "$ANVIL_BARE_SOCKET" ] && break; sleep 0.1; done
        ANVIL_TEST_SECRET="$ANVIL_E2E_SECRET" "$BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" \
                --listen "$ANVIL_SOCKET" --state-dir "$STATE/broker" >"$STATE/broker.log" 2>&1 &
        export ANVIL_E2E_BRO_PID=$!
        for _ in $(seq 100); do [ -S "$ANVIL_SOCKET" ] && break; sleep 0.1; done

        if [ ! -S "$ANVIL_SUP_SOCKET" ] || [ ! -S "$ANVIL_SOCKET" ] || [ ! -S "$ANVIL_BARE_SOCKET" ]; then
                echo "the daemons did not start:"
                cat "$STATE/supervisor.log" "$STATE/broker.log" "$STATE/bare.log"
                record "${prefix}daemons-start" 1
                stop_daemons
                return
        fi
        for t in "$TOP"/tests/e2e/t_*.sh; do
                name=$(basename "$t" .sh)
                if [ "${#only[@]}" -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then
                        continue
                fi
                out=$(timeout 300 bash "$t" 2>&1)
                rc=$?
                [ "$rc" -eq 124 ] && out="$out
FAIL: timed out after 300 s"
                if [ "$rc" -eq 77 ]; then
                        skipped+=("$prefix$name")
                        echo "SKIP $prefix$name: $(grep '^skip:' <<<"$out" | tail -1)"
                        continue
                fi
                if [ "$rc" -ne 0 ]; then
                        sed 's/^/    /' <<<"$out" | tail -"${ANVIL_E2E_TAIL:-40}"
                fi
                [ -n "${ANVIL_E2E_SHOW:-}" ] && echo "$out"
                record "$prefix$name" "$rc"
                # A test ends what it started: no process may still name a test's own
                # directory (lib.sh's $STATE/anvil-e2e.*) once it has ended. Only this suite's:
                # another suite on the machine (another checkout) has its own.
                left=$(pgrep -af "$STATE/anvil-e2e\\." | grep -v pgrep)
                if [ -n "$left" ]; then
                        echo "    left running by $name:"
                        sed 's/^/        /' <<<"$left"
                        record "${prefix}nothing-left-by-$name" 1
                        for p in $(awk '{print $1}' <<<"$left"); do kill "$p" 2>/dev/null; done
                fi
                # Both daemons must survive every test.
                if ! kill -0 "$ANVIL_E2E_SUP_PID" 2>/dev/null || ! kill -0 "$ANVIL_E2E_BRO_PID" 2>/dev/null ||
                        ! kill -0 "$ANVIL_E2E_BARE_PID" 2>/dev/null; then
                        record "${prefix}daemons-alive-after-$name" 1
                        break
                fi
        done
        stop_daemons
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
if [ "$fail" -eq 0 ]; then
        rm -rf "${STATES[@]}"
else
        echo "daemon logs kept in ${STATES[*]}"
        echo "failed: ${failed[*]}"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
