# Fail closed: a run whose jail is not restricted by Landlock, though its run spec says it is,
# is refused by the runner before the tool's first line (R6), with the catalog's reason naming
# landlock and the evidence, and nothing of the tool runs: the client gets an error frame
# "sandbox_failed" (the sandbox's failure, never reported as the tool's), not a result.
# The jail is made so by a supervisor of the test build started here with
# --test-skip-landlock (jails apply none; runners are still told to expect it), and with the
# Python layers off: the check does not depend on them. Control: the same tool on the suite's
# supervisor, whose jails are restricted, runs (and its read of /etc/hostname is refused).
. "$(dirname "$0")/lib.sh"
SOCK="$T/sup.sock"
"$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$SOCK" --state-dir "$T/state" --test-skip-landlock \
        --test-no-python-layers --spares 1 --max-runs 2 --uid-base $((ANVIL_E2E_UID_BASE + 320000000)) \
        >"$T/sup.log" 2>&1 &
SUP=$!
trap 'kill $SUP 2>/dev/null; wait $SUP 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the supervisor did not start: $(cat "$T/sup.log")"
expect_match "the supervisor says so" "TEST MODE: jails apply no Landlock" "$(cat "$T/sup.log")"

tool ran.py <<'PY'
print("the tool ran")
with open("artifacts/ran.txt", "w") as f:
    f.write("ran\n")
print(open("/etc/hostname").read().strip())
PY

# Control first: on the suite's supervisor Landlock is in force and the tool runs.
bare_json "$T/ran.py"
expect_eq "control: status" error "$(j .status)"
expect_eq "control: the tool ran" "the tool ran" "$(j .stdout | head -1)"
n=$(j '[.events[] | select(.message == "blocked at kernel: read '"'/etc/hostname'"' (outside the jail'"'"'s read roots, landlock)")] | length')
expect_eq "control: its read of /etc/hostname was refused, explained where audit can be read" "$EXPLAINS" "$n"
expect_match "control: the tool saw the refusal" "PermissionError|Errno 13" "$(j .stderr)"
abi=$(j '.isolation.mechanisms[] | select(startswith("landlock ABI"))' | sed -E 's/^landlock ABI ([0-9]+):.*/\1/')
expect_match "control: the ABI in force" '^[0-9]+$' "$abi"

# The refusal is the sandbox's failure, not the tool's: an error frame, no RunResult.
out=$(ANVIL_SOCKET="$SOCK" "$CTL" run "$T/ran.py" --json 2>&1)
rc=$?
expect_eq "anvilctl's exit code (the sandbox failed)" 122 "$rc"
expect_eq "the refusal" \
        "anvilctl: sandbox_failed: refused: landlock not in force (the jail's root could be listed, though the run spec says ABI $abi was applied)" \
        "$out"
expect_match "the supervisor's log says so" \
        "sandbox failed: refused: landlock not in force \\(the jail's root could be listed" "$(cat "$T/sup.log")"
left=$(find "$T/state/runs" -name ran.txt 2>/dev/null)
expect_eq "nothing written by the tool" "" "$left"
