# The isolation probe (DESIGN §6): `anvilctl probe` reports each mechanism (available, probed,
# in force, evidence) and the tier, and each claim is checked here against reality, by runs
# of our own: the namespaces differ from the host's, seccomp refuses and explains, a host file
# is unreadable, a loopback listener counts no connection from the jail. The probe's control
# canary is gone afterwards. Every run carries the tier it ran under. Then a supervisor whose
# probe environment lacks seccomp (a test build's --test-probe-break) reports the tier one
# rung lower and says why.
. "$(dirname "$0")/lib.sh"

"$CTL" probe --json >"$T/probe.json" 2>"$T/ctl.err" || fail "anvilctl probe exited $?: $(cat "$T/ctl.err")"
p() { jq -r "$1" "$T/probe.json"; }
expect_eq "tier" "namespaces+seccomp+landlock" "$(p .tier)"
in_force=(interpreter namespaces seccomp landlock rlimits "network isolation" "filesystem isolation")
# Rootless, there is no cgroup (none is delegated to the user here) and the kernel's audit
# cannot be read: both are reported not in force, with why.
if [ "$EXPLAINS" = 1 ]; then
        in_force+=("kernel audit" cgroup)
else
        expect_eq "rootless: cgroup" "false true false no cgroup" \
                "$(p '.mechanisms[] | select(.name == "cgroup") | "\(.available) \(.probed) \(.in_force) \(.evidence)"')"
        expect_eq "rootless: kernel audit, not in force, and what would explain its refusals" \
                "true true false landlock refusals are not explained (cannot read the kernel's audit status: Operation not permitted): the supervisor reads them as root with CAP_AUDIT_READ, as the installed anvil-supervisor.service runs it (and kernel_audit = on in the [supervisor] section of /etc/anvil/anvil.conf, or --enable-kernel-audit, switches audit on)" \
                "$(p '.mechanisms[] | select(.name == "kernel audit") | "\(.available) \(.probed) \(.in_force) \(.evidence)"')"
fi
for m in "${in_force[@]}"; do
        expect_eq "$m: available, probed, in force" "true true true" \
                "$(p ".mechanisms[] | select(.name == \"$m\") | \"\(.available) \(.probed) \(.in_force)\"")"
done
expect_match "landlock's evidence: the read of a file in the jail but not a read root, explained" \
        "^in the jail a read of /etc/hostname \\(there, but not a read root\\) failed \\(EACCES\\)$(explained ": blocked at kernel: read '/etc/hostname' \\(outside the jail's read roots, landlock\\)"); outside, the control's read succeeded; landlock ABI [0-9]+" \
        "$(p '.mechanisms[] | select(.name == "landlock") | .evidence')"
expect_match "seccomp's evidence is the refusal the supervisor recorded" \
        '^blocked at kernel: socket\(AF_INET, SOCK_STREAM\) \(network denied by seccomp\); seccomp filter' \
        "$(p '.mechanisms[] | select(.name == "seccomp") | .evidence')"
expect_match "network isolation's evidence" \
        'listener counted 0 connections; outside, the control.s connect succeeded \(the listener counted 1\)' \
        "$(p '.mechanisms[] | select(.name == "network isolation") | .evidence')"
expect_match "filesystem isolation's evidence" \
        'failed \((EROFS|EACCES|EPERM)\) and a read of the host.s .*/probe/host-canary failed \((ENOENT|EACCES)\); outside, the control.s write succeeded and read succeeded' \
        "$(p '.mechanisms[] | select(.name == "filesystem isolation") | .evidence')"
[ ! -e "$ANVIL_E2E_STATE/sup/probe/control/anvil-probe-canary" ] || fail "the control's canary was left behind"
echo "ok: the control's canary is gone"
# The human form says the same.
human=$("$CTL" probe) || fail "anvilctl probe exited $?"
expect_eq "human: first line" "isolation tier: namespaces+seccomp+landlock" "$(head -1 <<<"$human")"
expect_match "human: a mechanism's line" '  seccomp +yes +yes +yes +blocked at kernel' "$(grep '^  seccomp ' <<<"$human")"

# The claims, checked by our own runs.
echo "anvil test host file $RANDOM" >"$T/hostfile"
chmod 644 "$T/hostfile"
tool claims.py <<PY
import os, socket
print("userns", os.readlink("/proc/self/ns/user"))
try:
    open("$T/hostfile").read()
    print("read ok")
except OSError as e:
    print("read", type(e).__name__)
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    print("socket ok")
except OSError as e:
    print("socket", type(e).__name__)
PY
bare_json "$T/claims.py"
out=$(j .stdout)
expect_eq "namespaces: the run's user namespace is not the host's" "" \
        "$(grep "^userns $(readlink /proc/self/ns/user)\$" <<<"$out")"
expect_eq "filesystem: the host file is not readable in the jail" "read FileNotFoundError" "$(grep '^read' <<<"$out")"
expect_eq "seccomp: the socket was refused" "socket PermissionError" "$(grep '^socket' <<<"$out")"
expect_eq "seccomp: and explained" "blocked at kernel: socket(AF_INET, SOCK_STREAM) (network denied by seccomp)" \
        "$(j '.events[] | select(.layer == "seccomp") | .message')"
expect_eq "the run's tier" "namespaces+seccomp+landlock" "$(j .isolation.tier)"
expect_match "the run's mechanisms name the filter, seen from outside" \
        "seccomp filter, refusals explained by the supervisor \(the runner's /proc status: Seccomp 2" \
        "$(j '.isolation.mechanisms | join("; ")')"
# Control for the file check: the same file is readable on the host.
expect_match "control: the host file reads on the host" '^anvil test host file' "$(cat "$T/hostfile")"
# A tool the pre-check refused was judged under every layer (the runner loads them first):
# its tier is the probe's (t_filter_first.sh shows the order).
tool refused.py <<<'import socket'
run_json "$T/refused.py"
expect_eq "a refused tool's status" blocked "$(j .status)"
expect_eq "a refused tool's tier" "namespaces+seccomp+landlock" "$(j .isolation.tier)"

# A probe environment without seccomp, then one without Landlock: the tier drops and says why.
broken() { # LAYER N: a supervisor whose probe's jail leaves LAYER out; its probe in $T/probe.json
        local sock="$T/broken-$1.sock"
        ANVIL_TEST_SECRET="$ANVIL_E2E_SECRET" "$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$sock" --state-dir "$T/broken-$1" \
                --uid-base $((ANVIL_E2E_UID_BASE + 500000000 + $2 * 1000)) --spares 0 --test-probe-break "$1" \
                >"$T/broken-$1.log" 2>&1 &
        BPIDS+=($!)
        for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
        [ -S "$sock" ] || fail "the supervisor without $1 did not start: $(cat "$T/broken-$1.log")"
        ANVIL_SOCKET="$sock" "$CTL" probe --json >"$T/probe.json" || fail "probe of the supervisor without $1 failed"
}
BPIDS=()
trap 'kill "${BPIDS[@]}" 2>/dev/null; wait "${BPIDS[@]}" 2>/dev/null; rm -rf "$T"' EXIT
broken seccomp 1
expect_eq "without seccomp: tier" "namespaces+landlock" "$(p .tier)"
expect_eq "without seccomp: seccomp" "true true false the probe's runner did not load the filter" \
        "$(p '.mechanisms[] | select(.name == "seccomp") | "\(.available) \(.probed) \(.in_force) \(.evidence)"')"
expect_match "without seccomp: network isolation holds by the namespace and Landlock" \
        'connect to 127.0.0.1:[0-9]+ failed \((ENETUNREACH|EACCES)\)' \
        "$(p '.mechanisms[] | select(.name == "network isolation") | .evidence')"
expect_match "without seccomp: the log says the tier" 'isolation tier namespaces\+landlock\)' \
        "$(grep 'listening on' "$T/broken-seccomp.log")"
broken landlock 2
expect_eq "without landlock: tier" "namespaces+seccomp" "$(p .tier)"
expect_eq "without landlock: landlock" "true true false the kernel offers it; in the jail a read of /etc/hostname: ok" \
        "$(p '.mechanisms[] | select(.name == "landlock") | "\(.available) \(.probed) \(.in_force) \(.evidence)"')"
