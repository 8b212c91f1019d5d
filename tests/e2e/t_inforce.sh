# Fail closed (DESIGN §6): inside the jail, before the tool's first line, the runner checks what
# the jail promises (no_new_privs, the seccomp filter, Landlock, the namespaces, no fd beyond
# 0-3). In every jail these hold (every other test runs a tool); here the runner is started
# outside any jail, as nobody, with a run spec of its own (tests/e2e/runspec.c), so that each
# check is seen refusing: the control that shows the checks can fail. Nothing of the tool runs.
# And they come first (R6): nothing of the request's, its source for the pre-check (R6b) nor
# its variables (R6a), is read before every check has passed.
. "$(dirname "$0")/lib.sh"
RS="$ANVIL_BUILD/tests/runspec"
tool ran.py <<'PY'
print("ESCAPED: the tool ran outside a jail")
PY
chmod 644 "$T/ran.py"
SPEC=("$T/ran.py") # runspec encode's arguments
run_outside() { # setpriv options...: the runner on the host; its events in $T/events
        "$RS" encode "${SPEC[@]}" | (cd "$T" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@" \
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

# A tool the pre-check refuses, with variables well-formed or not: outside a jail the layer's
# refusal is all there is, the request's bytes unread. Before the checks came first, the runner
# reported here the variables' refusal, or bound them and reported the pre-check's findings
# (exit code 1): it had parsed both without any of the jail's layers.
tool findings.py <<'PY'
import socket
socket.socket(socket.AF_INET).connect(("127.0.0.1", 9))
PY
printf '[1, 2' >"$T/bad.json"
printf '{"port": 9}' >"$T/good.json"
chmod 644 "$T/findings.py" "$T/bad.json" "$T/good.json"
for v in bad good; do
        SPEC=("$T/findings.py" "$T/$v.json")
        run_outside --no-new-privs
        expect_eq "$v variables, unread: exit code" 125 "$(cat "$T/rc")"
        expect_eq "$v variables, unread: the events, the layer's refusal only" \
                "runner refused: refused: user namespace not in force (/proc/self/uid_map is the initial identity map)" \
                "$(cat "$T/events")"
done
# In a jail, where the checks pass, the same tool and variables are refused at the pre-check
# and at the variables' decoding (t_filter_first.sh): what is missing here is their reading.
