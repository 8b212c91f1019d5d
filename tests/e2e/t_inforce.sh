# Fail closed (DESIGN §6): inside the jail, before the tool's first line, the runner checks what
# the jail promises (no_new_privs, the seccomp filter, Landlock, the namespaces, no fd beyond
# 0-3). In every jail these hold (every other test runs a tool); here the runner is started
# outside any jail, as nobody, with a run spec of its own (tests/e2e/runspec.c), so that each
# check is seen refusing: the control that shows the checks can fail. Nothing of the tool runs.
. "$(dirname "$0")/lib.sh"
RS="$ANVIL_BUILD/tests/runspec"
tool ran.py <<'PY'
print("ESCAPED: the tool ran outside a jail")
PY
chmod 644 "$T/ran.py"
run_outside() { # setpriv options...: the runner on the host; its events in $T/events
        "$RS" encode "$T/ran.py" | (cd "$T" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@" \
                "$ANVIL_BUILD/anvil-py" 3>"$T/ev.bin" >"$T/out" 2>"$T/err")
        echo $? >"$T/rc"
        "$RS" events <"$T/ev.bin" >"$T/events" || fail "the runner's events do not decode"
}

run_outside --no-new-privs
expect_eq "outside a user namespace: exit code" 125 "$(cat "$T/rc")"
expect_eq "outside a user namespace: the refusal" \
        "runner refused: refused: user namespace not in force (/proc/self/uid_map is the initial identity map)" \
        "$(grep refused "$T/events")"
expect_eq "outside a user namespace: nothing of the tool ran" "" "$(cat "$T/out")"
expect_eq "outside a user namespace: no start" "" "$(grep started "$T/events")"

run_outside
expect_eq "without no_new_privs: exit code" 125 "$(cat "$T/rc")"
expect_eq "without no_new_privs: the refusal" \
        "runner refused: refused: no_new_privs not in force (prctl(PR_GET_NO_NEW_PRIVS) says 0)" \
        "$(grep refused "$T/events")"
expect_eq "without no_new_privs: nothing of the tool ran" "" "$(cat "$T/out")"
