# The supervisor's capabilities after start-up (issue 11, supervisor/privilege.c): every
# thread of a running supervisor holds exactly the named set in its effective, permitted and
# bounding sets, nothing inheritable or ambient, and no_new_privs:
#   cap_chown cap_fowner cap_dac_override cap_dac_read_search cap_setuid cap_setgid
#   cap_sys_admin cap_audit_control cap_audit_write, and on the direct rung (--test-no-userns)
#   cap_kill cap_sys_ptrace cap_setpcap besides; cap_sys_resource and cap_audit_read (start-up's
#   only) are gone, with every other capability.
# Rootless, it holds none: no_new_privs alone. The systemd unit's CapabilityBoundingSet= names
# the same capabilities as the supervisor's table (its start-up line). In force: with
# cap_sys_admin withheld too (--test-cap-withhold), the kernel refuses the run's tmpfs
# ("Failed to open a tmpfs context: Operation not permitted") and the run fails as the
# sandbox's failure. Control: --test-no-cap-drop (a test build's only) keeps every capability
# and sets no no_new_privs: this test's checks then fail.
. "$(dirname "$0")/lib.sh"

bit() { # capability numbers -> the mask as /proc shows it
        local m=0 c
        for c in "$@"; do m=$((m | (1 << c))); done
        printf '%016x' $m
}
# linux/capability.h: chown 0, dac_override 1, dac_read_search 2, fowner 3, kill 5,
# setgid 6, setuid 7, setpcap 8, sys_ptrace 19, sys_admin 21, audit_write 29, audit_control 30
KEPT=$(bit 0 1 2 3 6 7 21 29 30)
KEPT_DIRECT=$(bit 0 1 2 3 5 6 7 8 19 21 29 30)
NONE=0000000000000000

status_of() { # pid key: the value on every thread, one distinct value a line
        local t
        for t in /proc/"$1"/task/*; do awk -v k="$2:" '$1 == k {print $2}' "$t/status"; done | sort -u
}
check_sets() { # what pid eff/prm/bnd
        echo "ok: $1: $(ls /proc/"$2"/task | wc -l) threads read"
        expect_eq "$1: CapEff, every thread" "$3" "$(status_of "$2" CapEff)"
        expect_eq "$1: CapPrm, every thread" "$3" "$(status_of "$2" CapPrm)"
        expect_eq "$1: CapBnd, every thread" "$3" "$(status_of "$2" CapBnd)"
        expect_eq "$1: CapInh, every thread" $NONE "$(status_of "$2" CapInh)"
        expect_eq "$1: CapAmb, every thread" $NONE "$(status_of "$2" CapAmb)"
        expect_eq "$1: NoNewPrivs, every thread" 1 "$(status_of "$2" NoNewPrivs)"
}

tool ok.py <<<'print("ran")'

if [ -n "$ROOTLESS_USER" ]; then
        start_sup caps 920000000
        expect_eq "rootless: CapEff" $NONE "$(status_of "$SUP_PID" CapEff)"
        expect_eq "rootless: CapPrm" $NONE "$(status_of "$SUP_PID" CapPrm)"
        expect_eq "rootless: NoNewPrivs, every thread" 1 "$(status_of "$SUP_PID" NoNewPrivs)"
        start_sup nodrop 921000000 --test-no-cap-drop
        expect_eq "control, rootless, no drop: NoNewPrivs" 0 "$(status_of "$SUP_PID" NoNewPrivs)"
        exit 0
fi

start_sup caps 920000000
check_sets "user namespaces" "$SUP_PID" "$KEPT"
ANVIL_SOCKET="$T/caps.sock" run_json "$T/ok.py"
expect_eq "a run under the named set" ran "$(j .stdout)"
expect_match "its start-up line" "capabilities after start-up: cap_chown cap_dac_override cap_dac_read_search cap_fowner cap_setgid cap_setuid cap_sys_admin cap_audit_write cap_audit_control; no_new_privs set" "$(cat "$T/caps.log")"

# The unit's bounding set is the table's every row.
unit=$(sed -n 's/^CapabilityBoundingSet=//p' "$TOP/systemd/anvil-supervisor.service" | tr ' ' '\n' | tr 'A-Z' 'a-z' | sort | paste -sd' ')
table=$(sed -n 's/.*capabilities at start-up (the unit.s bounding set): //p' "$T/caps.log" | tr ' ' '\n' | sort | paste -sd' ')
expect_eq "the unit's CapabilityBoundingSet= is the supervisor's table" "$table" "$unit"

start_sup capsdirect 922000000 --test-no-userns
check_sets "direct" "$SUP_PID" "$KEPT_DIRECT"
ANVIL_SOCKET="$T/capsdirect.sock" run_json "$T/ok.py"
expect_eq "direct: a run under the named set" ran "$(j .stdout)"

# In force: cap_sys_admin withheld as well, the kernel refuses what needed it.
start_sup noadmin 923000000 --test-cap-withhold cap_sys_admin
check_sets "cap_sys_admin withheld" "$SUP_PID" "$(bit 0 1 2 3 6 7 29 30)"
ANVIL_SOCKET="$T/noadmin.sock" "$CTL" run "$T/ok.py" --json >"$T/result.json" 2>"$T/ctl.err" && fail "a run needing cap_sys_admin succeeded without it"
expect_match "the refusal, in the log" "Failed to open a tmpfs context: Operation not permitted" "$(cat "$T/noadmin.log")"

# Control: no drop, every capability this test has (root's) and no no_new_privs.
start_sup nodrop 924000000 --test-no-cap-drop
expect_eq "control, no drop: CapEff" "$(awk '$1 == "CapEff:" {print $2}' /proc/self/status)" "$(status_of "$SUP_PID" CapEff)"
expect_eq "control, no drop: NoNewPrivs" 0 "$(status_of "$SUP_PID" NoNewPrivs)"
[ "$(status_of "$SUP_PID" CapEff)" != "$KEPT" ] || fail "control: the full set is the named one"
echo "ok: control: without the drop the supervisor holds $(status_of "$SUP_PID" CapEff), not $KEPT"
