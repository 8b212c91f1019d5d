# Delegation on cgroup v2, simulated: systemd starts a Delegate=yes service in its unit's cgroup
# and marks that cgroup with the trusted.delegate xattr. Here the test makes a v2 cgroup of its
# own, marks it (or not) the same way, and starts the supervisor inside it (it enters the
# cgroup, then execs the supervisor), in three ways:
#   marked                  delegated: the supervisor may use it
#   unmarked                not delegated: the supervisor must leave it exactly as it was
#   unmarked + --cgroup delegated   delegated by the option
# Where the test cgroup has the memory and pids controllers (a v2 host), a delegated
# supervisor must move itself into <cgroup>/supervisor and create runs' cgroups beside it,
# and leave none behind. Where it has not (this project's build machine: v1 holds memory and
# pids, v2 only hugetlb), the detection is all that can be checked: the log says which way it
# went and why, the cgroup is left untouched, the supervisor does not move, and runs go on in
# the v1 hierarchies. No systemd is involved either way.
. "$(dirname "$0")/lib.sh"

v2=$(awk '/ - cgroup2 /{print $5; exit}' /proc/self/mountinfo)
[ -n "$v2" ] || { echo "skip: no cgroup v2 hierarchy mounted"; exit 0; }
CG="$v2/anvil-e2e-deleg-$$"
rel="/anvil-e2e-deleg-$$"
# The test's own cleanup: supervisors first (lib.sh), then the cgroups it made.
trap 'cleanup_cg' EXIT
cleanup_cg() {
        local p
        for p in "${OWN_PIDS[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${OWN_PIDS[@]}"; do wait "$p" 2>/dev/null; done
        for _ in $(seq 50); do
                rmdir "$CG/supervisor" 2>/dev/null
                rmdir "$CG" 2>/dev/null && break
                sleep 0.1
        done
        rm -rf "$T"
}
# The parent's subtree_control decides what the test cgroup offers: on this machine's v2 root
# it is empty (hugetlb at most); on a systemd host memory and pids are there.
mkdir "$CG" || fail "cannot create $CG"
full=0
grep -qw memory "$CG/cgroup.controllers" && grep -qw pids "$CG/cgroup.controllers" && full=1
echo "test cgroup $CG offers: '$(cat "$CG/cgroup.controllers")'$([ $full = 1 ] && echo ' (v2 runs)' || echo ' (detection only)')"

cat >"$T/incg.sh" <<EOF
#!/bin/sh
echo \$\$ >"$CG/cgroup.procs" || exit 99
exec "\$@"
EOF
chmod 755 "$T/incg.sh"
SUP_WRAP=("$T/incg.sh")
mark() { $PY -c "import os, sys; os.setxattr(sys.argv[1], 'trusted.delegate', sys.argv[2].encode())" "$CG" "$1"; }
v2_line() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }
children() { find "$CG" -mindepth 1 -type d | sort | tr '\n' ' '; }

tool ok.py <<<'print("done")'
tool slow.py <<'PY'
import time
print("up", flush=True)
time.sleep(30)
PY

# check NAME WAY: after starting supervisor NAME, the cgroup was used (WAY=used) or left alone.
check() {
        local name=$1 way=$2 log="$T/$1.log"
        if [ "$way" = left ]; then
                expect_eq "$name: the supervisor stayed in the test cgroup" "$rel" "$(v2_line "$SUP_PID")"
                expect_eq "$name: nothing created in the test cgroup" "" "$(children)"
                expect_eq "$name: no controller enabled in it" "" "$(tr -d '\n' <"$CG/cgroup.subtree_control")"
                ANVIL_SOCKET="$T/$name.sock" run_json "$T/ok.py"
                expect_eq "$name: a run" ok "$(j .status)"
                expect_eq "$name: not in a v2 cgroup" 0 "$(j '[.isolation.mechanisms[] | select(startswith("cgroup v2"))] | length')"
                expect_eq "$name: still nothing in the test cgroup" "" "$(children)"
                return
        fi
        expect_eq "$name: the supervisor moved into a leaf" "$rel/supervisor" "$(v2_line "$SUP_PID")"
        expect_match "$name: it says so" "moved into $CG/supervisor" "$(cat "$log")"
        expect_match "$name: memory and pids enabled below the test cgroup" "memory" "$(cat "$CG/cgroup.subtree_control")"
        ANVIL_SOCKET="$T/$name.sock" "$CTL" run "$T/slow.py" --timeout 60 --json >"$T/live.json" 2>&1 &
        local ctl=$! n=0
        for _ in $(seq 100); do
                n=$(find "$CG" -mindepth 2 -maxdepth 2 -type d -path "$CG/anvil-*/*" | wc -l)
                [ "$n" -ge 1 ] && break
                sleep 0.1
        done
        [ "$n" -ge 1 ] || fail "$name: no run cgroup below $CG while a run is live: $(children)"
        echo "ok: $name: a live run's cgroup is below the test cgroup"
        kill "$ctl"
        wait "$ctl" 2>/dev/null
        ANVIL_SOCKET="$T/$name.sock" run_json "$T/ok.py"
        expect_eq "$name: a run" ok "$(j .status)"
        expect_eq "$name: in a v2 cgroup" 1 "$(j '[.isolation.mechanisms[] | select(startswith("cgroup v2 (memory hard limit"))] | length')"
        no_run_cgroups "$name" "$log"
}

stop() { # stops the supervisor and checks the test cgroup is as it should be after
        kill -TERM "$SUP_PID"
        wait "$SUP_PID"
        expect_eq "$1: the supervisor's exit status" 0 "$?"
        expect_eq "$1: what is left in the test cgroup" "$2" "$(children)"
        rmdir "$CG/supervisor" 2>/dev/null
        for c in memory pids cpu; do echo "-$c" >"$CG/cgroup.subtree_control" 2>/dev/null; done
}

# 1. Marked, as systemd marks a Delegate=yes unit's cgroup.
mark 1
start_sup marked 700000000 --spares 0
expect_match "marked: detected as delegated" "cgroup v2: $rel is delegated to this supervisor \(trusted\.delegate\)" "$(cat "$T/marked.log")"
if [ $full = 1 ]; then
        check marked used
        stop marked "$CG/supervisor "
else
        expect_match "marked: and why it is not used here" "cgroup v2: $rel has no memory controller" "$(cat "$T/marked.log")"
        check marked left
        stop marked ""
fi

# 2. Unmarked (a unit without Delegate=yes, a login session's scope): never touched.
mark 0
start_sup unmarked 710000000 --spares 0
expect_match "unmarked: not delegated" "cgroup v2: not used: $rel is not delegated to this supervisor" "$(cat "$T/unmarked.log")"
check unmarked left
stop unmarked ""

# 3. Unmarked, but --cgroup delegated says it is ours.
start_sup asserted 720000000 --spares 0 --cgroup delegated
expect_match "--cgroup delegated: delegated" "cgroup v2: $rel is delegated to this supervisor \(--cgroup delegated\)" "$(cat "$T/asserted.log")"
if [ $full = 1 ]; then
        check asserted used
        stop asserted "$CG/supervisor "
else
        check asserted left
        stop asserted ""
fi
