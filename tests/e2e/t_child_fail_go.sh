# A jail's child that fails before GO (C5) reports why on the sync socket and exits; the
# supervisor, whose GO then finds no one (EPIPE), must report the child's failure, not
# "Failed to send GO to the jail's child: Broken pipe". --test-child-fail-before-go (a test
# build's switch) makes the child fail at C5's root, before GO, in each of several runs (the
# order of the child's exit and the supervisor's send varies: each run must say the same).
# Control: the same supervisor's tool without the switch runs.
. "$(dirname "$0")/lib.sh"
tool ok.py <<<'print("built")'

start_sup good 1164000000 --spares 0
ANVIL_SOCKET="$T/good.sock" run_json "$T/ok.py"
expect_eq "control: status" "ok built" "$(j '"\(.status) \(.stdout)"')"

start_sup failing 1164100000 --spares 0 --test-child-fail-before-go
for i in 1 2 3 4 5; do
        out=$(ANVIL_SOCKET="$T/failing.sock" "$CTL" run "$T/ok.py" --json 2>&1)
        rc=$?
        expect_eq "run $i: anvilctl's exit code (the sandbox failed)" 122 "$rc"
        expect_eq "run $i: the child's own failure" \
                "anvilctl: sandbox_failed: Failed to make the jail's root: --test-child-fail-before-go" "$out"
done
expect_eq "the supervisor's log never blames the GO" 0 "$(grep -c 'Failed to send GO' "$T/failing.log")"
