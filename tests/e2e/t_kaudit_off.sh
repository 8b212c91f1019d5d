# Without the kernel's audit records, the supervisor keeps working: Landlock still refuses, and
# each result says the refusals are not explained, and why. A supervisor of its own is started
# here without CAP_AUDIT_READ (dropped from its bounding set by setpriv): audit is on (the
# suite's supervisors switched it on) but its records cannot be read; it says so at start-up
# and in every result. (Switching audit off for the machine would pull it from under the
# suite's own supervisors, and from anyone else's.) Control: the same tool on the suite's
# supervisor is explained.
. "$(dirname "$0")/lib.sh"
SOCK="$T/sup.sock"
setpriv --bounding-set -audit_read -- \
        "$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$SOCK" --state-dir "$T/state" --enable-kernel-audit \
        --test-no-python-layers --spares 1 --max-runs 2 --uid-base $((ANVIL_E2E_UID_BASE + 330000000)) \
        >"$T/sup.log" 2>&1 &
SUP=$!
trap 'kill $SUP 2>/dev/null; wait $SUP 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the supervisor did not start: $(cat "$T/sup.log")"
sed 's/^/    log: /' "$T/sup.log"
OFF="kernel audit: off: landlock denials are refused but not explained (cannot read the audit multicast group: Operation not permitted)"
expect_eq "the start-up log says so" 1 "$(grep -cxF "anvil-supervisor: info: $OFF" "$T/sup.log")"
# What would explain them, said plainly: here the capability (audit itself is on), and the setting.
FIX_READ="the supervisor reads them as root with CAP_AUDIT_READ, as the installed anvil-supervisor.service runs it (and kernel_audit = on in the [supervisor] section of /etc/anvil/anvil.conf, or --enable-kernel-audit, switches audit on)"
NOTE="landlock refusals are not explained (cannot read the audit multicast group: Operation not permitted): $FIX_READ"
expect_eq "the start-up log says what would explain them" 1 "$(grep -cxF "anvil-supervisor: warning: $NOTE" "$T/sup.log")"
ANVIL_SOCKET="$SOCK" "$CTL" probe >"$T/probe.out" 2>&1 || fail "anvilctl probe: $(cat "$T/probe.out")"
expect_eq "anvilctl probe: its line" "note: $NOTE" "$(grep '^note: ' "$T/probe.out")"

tool read.py <<'PY'
try:
    open("/etc/hostname").read()
    print("read")
except PermissionError as e:
    print("refused", e.errno)
PY
ANVIL_SOCKET="$SOCK" run_json "$T/read.py"
expect_eq "status" ok "$(j .status)"
expect_eq "Landlock still refuses" "refused 13" "$(j .stdout)"
expect_eq "landlock in force" 1 "$(j '[.isolation.mechanisms[] | select(test("^landlock ABI [0-9]+: fs"))] | length')"
expect_eq "not explained, and the result says why" "$OFF" "$(j '.isolation.mechanisms[] | select(startswith("kernel audit"))')"
expect_eq "no landlock events" 0 "$(j '[.events[] | select(.layer == "landlock")] | length')"
expect_eq "the run's trace says so, and what would explain them" "$NOTE" \
        "$(j '.events[] | select(.kind == "not_explained") | .message')"
ANVIL_SOCKET="$SOCK" "$CTL" run "$T/read.py" >"$T/human.out" 2>&1
expect_eq "anvilctl run's trace shows it" 1 "$(grep -cF "$NOTE" "$T/human.out")"
ANVIL_SOCKET="$SOCK" expect_serving

# Control: the suite's supervisor reads the records.
bare_json "$T/read.py"
expect_eq "control: refused" "refused 13" "$(j .stdout)"
expect_eq "control: explained" "$(explained "blocked at kernel: read '/etc/hostname' (outside the jail's read roots, landlock)")" \
        "$(j '.events[] | select(.layer == "landlock") | .message')"
if [ "$EXPLAINS" = 1 ]; then
        expect_eq "control: no such note in the run" 0 "$(j '[.events[] | select(.kind == "not_explained")] | length')"
        "$CTL" probe >"$T/probe.out" 2>&1 || fail "control: anvilctl probe: $(cat "$T/probe.out")"
        expect_eq "control: anvilctl probe has no note" 0 "$(grep -c '^note: ' "$T/probe.out")"
        expect_eq "control: the probe's kernel audit explained" 1 \
                "$(grep -cE '^  kernel audit +yes +yes +yes +the probe.s Landlock denial was explained' "$T/probe.out")"
else
        # The rootless pass: the suite's own supervisors cannot read audit either, and say so.
        expect_eq "rootless: the suite's run says so" \
                "landlock refusals are not explained (cannot read the kernel's audit status: Operation not permitted): $FIX_READ" \
                "$(j '.events[] | select(.kind == "not_explained") | .message')"
fi
