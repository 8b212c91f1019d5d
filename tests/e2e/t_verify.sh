# anvilctl verify (docs/verify.md): against the suite's daemons every check passes (the
# suite's broker has no model: check 1 says it used the bundled scripted one); then, against
# supervisors of this test's own with a protection switched off (a test build's switches),
# verify fails, exits 1, and names the check that sees it:
#   --test-no-python-layers        2a: the canned escapes are not refused by the Python layers
#   --test-skip-seccomp            2b: the escapes past the Python layers get through (socket)
#   --test-skip-landlock           2b: the runner refuses every run (landlock not in force)
#   --test-probe-break landlock    6: the probe does not see Landlock hold
# Control: the same verify passes against the suite's daemons, so each failure is the switch's.
. "$(dirname "$0")/lib.sh"

verify() { # OUT [ANVIL_SOCKET]: verify's output in $T/OUT, its exit status in VRC
        local sock=${2:-$ANVIL_SOCKET}
        ANVIL_SOCKET="$sock" timeout 200 "$CTL" verify >"$T/$1" 2>&1
        VRC=$?
        grep -E '^  (PASS|FAIL|NOT CHECKED) \[|checks passed' "$T/$1" | sed 's/^/    /'
}

verify all.out
[ "$VRC" = 0 ] || { cat "$T/all.out"; fail "verify against the suite's daemons exited $VRC"; }
expect_match "the last line" '^11/11 checks passed in [0-9]+ s$' "$(tail -1 "$T/all.out")"
# The calibration run: on this machine the limits are as written (a slow machine's would be
# multiplied, and 2b's card, 3 and 3b check the multiplied figures).
expect_match "the calibration" 'time limits as written$' "$(grep -A1 '^\[calibration\]' "$T/all.out" | tail -1)"
echo "ok: $(grep -A1 '^\[calibration\]' "$T/all.out" | tail -1 | sed 's/^ *//')"
expect_eq "check 1 says which model" 1 \
        "$(grep -c '^    model: the bundled scripted model (anvilctl.s own, at http://127.0.0.1:[0-9]*/v1)' "$T/all.out")"
expect_eq "check 2a's refusal of net_connect, verbatim" 1 \
        "$(grep -cxF '    net_connect: blocked; precheck: blocked: import socket (network denied by policy)' "$T/all.out")"
expect_eq "check 2b's seccomp refusal, verbatim" 1 \
        "$(grep -cxF '    socket: refused (EPERM): seccomp: blocked at kernel: socket(AF_INET, SOCK_STREAM) (network denied by seccomp)' "$T/all.out")"
expect_eq "check 3's reason" 1 "$(grep -c '^    run .*: killed, killed: timeout; wall [0-9]* ms' "$T/all.out")"
expect_match "check 4's observed peak" 'killed: memory \(peak [0-9.]+ MB > 128 MB cap\)' "$(grep '^    run ' "$T/all.out" | grep memory)"
# The suite plants a secret in both daemons' environment: check 9 looked for it in each.
expect_eq "check 9 looked for the planted secret in both daemons" 2 "$(grep -c '^      the [a-z]*.s ANVIL_TEST_SECRET ' "$T/all.out")"
grep -qF "$ANVIL_E2E_SECRET" "$T/all.out" && fail "verify printed a secret's value"
echo "ok: no secret's value in verify's output"
if [ "$EXPLAINS" = 1 ]; then
        expect_eq "check 8: Landlock explained" 1 "$(grep -c "^    landlock: the tool met EACCES; explained: blocked at kernel: read '/etc/hostname'" "$T/all.out")"
else
        expect_eq "check 8: says plainly Landlock is not explained, and the setting" 1 \
                "$(grep -c '^      to explain them: kernel_audit = on in /etc/anvil/anvil.conf' "$T/all.out")"
fi

# failing NAME SWITCH... : verify against a supervisor with SWITCH fails and names CHECK.
n=0
failing() {
        local name=$1 check=$2 why=$3
        shift 3
        n=$((n + 1))
        start_sup "$name" $((n * 300)) "$@"
        start_bro "$name-bro" --supervisor "$T/$name.sock"
        verify "$name.out" "$T/$name-bro.sock"
        expect_eq "$name: verify's exit status" 1 "$VRC"
        expect_match "$name: the last line" '^[0-9]+/11 checks passed in [0-9]+ s; failed: ' "$(tail -1 "$T/$name.out")"
        local line
        line=$(grep -F "  FAIL [$check] " "$T/$name.out") || { cat "$T/$name.out"; fail "$name: check $check did not fail"; }
        expect_match "$name: check $check fails, saying why" "$why" "$line"
        kill "$BRO_PID" "$SUP_PID"
        wait "$BRO_PID" "$SUP_PID" 2>/dev/null
}
audit=()
[ "$EXPLAINS" = 1 ] && audit=(--enable-kernel-audit)
failing nopy 2a 'net_connect: not refused by the Python layers' --test-no-python-layers "${audit[@]}"
failing noseccomp 2b 'socket: got through in the jail' --test-skip-seccomp "${audit[@]}"
failing nolandlock 2b 'refused: landlock not in force' --test-skip-landlock "${audit[@]}"
failing probebreak 6 'landlock: this kernel offers it, and the probe did not see it hold' --test-probe-break landlock "${audit[@]}"
expect_eq "jail processes left on the host" 0 "$(jail_procs_left)"
