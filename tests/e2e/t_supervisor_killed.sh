# No jail outlives its supervisor (issue 9, F3), by two independent means, each shown alone:
# the parent-death signal, re-armed after the last change of credentials (which clears it:
# before, it was set at C2 only and gone after C4, and a SIGKILLed supervisor left its jails
# running), and pid 1 watching its sync socket. For each of: both on, the signal alone
# (--test-no-sync-watch), the watch alone (--test-no-pdeathsig), with user namespaces and in
# direct mode (--test-no-userns): a sleeping tool with a long --timeout on a supervisor of its
# own, the supervisor killed with SIGKILL about 1.5 s in, and every process of the run (its
# pid 1 and what descends from it, and as root every process of the run's uid) gone within a
# second. The control, both off, shows the jail does survive its supervisor (so the test can
# fail); it is then ended by its pid. After each kill the supervisor is started again on the
# same state directory: it sweeps the cgroups left behind and the run directories of runs
# that never finished (a finished run's is kept), and a new run works.
. "$(dirname "$0")/lib.sh"

tool sleeper.py <<'PY'
import time
print("sleeping", flush=True)
time.sleep(120)
PY
tool quick.py <<<'print("quick")'

ms() { echo $(($(date +%s%N) / 1000000)); }

# stat_of PID: "STATE STARTTIME" of a process, or nothing.
stat_of() {
        local s
        s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
        s=${s##*) }
        # shellcheck disable=SC2086
        set -- $s
        echo "$1 ${20}"
}

# tree PID: PID and every process descending from it, "PID:STARTTIME" each.
tree() {
        local todo=("$1") out=() p c st
        while [ "${#todo[@]}" -gt 0 ]; do
                p=${todo[0]}
                todo=("${todo[@]:1}")
                st=$(stat_of "$p") || continue
                out+=("$p:${st#* }")
                for c in $(ps -o pid= --ppid "$p"); do todo+=("$c"); done
        done
        echo "${out[@]}"
}

# alive LIST: those of LIST ("PID:STARTTIME"...) still running (a zombie has ended).
alive() {
        local e st
        for e in "$@"; do
                st=$(stat_of "${e%%:*}") || continue
                [ "${st#* }" = "${e#*:}" ] && [ "${st%% *}" != Z ] && echo "${e%%:*}"
        done
}

# uid_procs OFF: processes (not zombies) running as a jail uid of the supervisor at OFF; root
# only (rootless, every jail has the rootless user's uid, like other suites' jails).
uid_procs() {
        [ -n "$ROOTLESS_USER" ] && return
        local b=$((ANVIL_E2E_UID_BASE + $1))
        # ps shows a uid of 2^31 and more as negative
        ps -eo pid=,uid=,stat= | awk -v b="$b" '{ u = $2 < 0 ? $2 + 4294967296 : $2 } u > b && u <= b + 264 && $3 !~ /^Z/ {print $1}'
}

# start_run NAME: a sleeper on supervisor NAME; sets CTL_PID, JAIL (pid 1's pid), PROCS (the
# run's processes), once the runner has loaded its seccomp filter (the tool starts right
# after) and about 1.5 s have passed since the run started.
start_run() {
        local name=$1 t0 runner=""
        ANVIL_SOCKET="$T/$name.sock" "$CTL" run "$T/sleeper.py" --timeout 120 --json >"$T/$name.json" 2>"$T/$name.err" &
        CTL_PID=$!
        for _ in $(seq 100); do grep -q "started for client" "$T/$name.log" && break; sleep 0.1; done
        t0=$(ms)
        JAIL=""
        for _ in $(seq 200); do
                JAIL=$(ps -o pid= --ppid "$SUP_PID" | head -1 | tr -d ' ')
                [ -n "$JAIL" ] && runner=$(ps -o pid= --ppid "$JAIL" | head -1 | tr -d ' ')
                [ -n "$runner" ] && grep -q "^Seccomp:[[:space:]]*2" "/proc/$runner/status" 2>/dev/null && break
                runner=""
                sleep 0.05
        done
        [ -n "$runner" ] || fail "$name: the run's tool did not start: $(tail -3 "$T/$name.log")"
        while [ $(($(ms) - t0)) -lt 1500 ]; do sleep 0.05; done
        # shellcheck disable=SC2207
        PROCS=($(tree "$JAIL"))
        [ "${#PROCS[@]}" -ge 2 ] || fail "$name: expected the jail's pid 1 and the runner, found ${PROCS[*]}"
}

# kill_sup NAME: SIGKILL to the supervisor; its client sees the connection close.
kill_sup() {
        kill -KILL "$SUP_PID"
        wait "$SUP_PID" 2>/dev/null
        KILLED_AT=$(ms)
        wait "$CTL_PID"
        expect_eq "$1: anvilctl's exit status (the connection closed)" 126 "$?"
}

# restart NAME OFF OPTIONS...: the supervisor again on the same state directory: it sweeps
# the killed run's cgroups (where there are cgroups) and its directory, keeps the start-up
# probe's (a finished run's), and serves a new run; then it is stopped the normal way (its
# cgroup bases go with it).
restart() {
        local name=$1 off=$2 killed probe
        shift 2
        killed=$(sed -nE 's/.*: run ([0-9T]+-[0-9a-f]+): started for client.*/\1/p' "$T/$name.log" | tail -1)
        probe=$(sed -nE 's/.*: run ([0-9T]+-[0-9a-f]+): started for the supervisor.*/\1/p' "$T/$name.log" | head -1)
        [ -d "$T/$name/runs/$killed" ] || fail "$name: the killed run's directory is not there (the sweep's control)"
        [ -e "$T/$name/runs/.$killed.live" ] || fail "$name: the killed run is not marked in flight"
        start_sup "$name" "$off" "$@"
        if [ -n "$(cg_bases "$T/$name.log")" ]; then
                expect_match "$name: the restart swept the cgroups" "removed [1-9][0-9]* cgroups a previous supervisor left behind" \
                        "$(cat "$T/$name.log")"
        fi
        expect_match "$name: the restart swept the unfinished run" "removed 1 run directories a previous supervisor left unfinished" \
                "$(cat "$T/$name.log")"
        [ ! -e "$T/$name/runs/$killed" ] || fail "$name: the killed run's directory is still there"
        [ ! -e "$T/$name/runs/.$killed.live" ] || fail "$name: the killed run's mark is still there"
        [ -d "$T/$name/runs/$probe" ] || fail "$name: the finished probe run's directory was swept too"
        echo "ok: $name: the killed run's directory is gone, the finished one's kept"
        ANVIL_SOCKET="$T/$name.sock" run_json "$T/quick.py"
        expect_eq "$name: a run after the restart" ok "$(j .status)"
        [ -z "$(uid_procs "$off")" ] || fail "$name: processes of the run's uids are left: $(uid_procs "$off")"
        kill -TERM "$SUP_PID"
        wait "$SUP_PID"
}

# dies NAME OFF OPTIONS...: with these options, the run's processes are gone within 1 s.
dies() {
        local name=$1 off=$2 left gone_ms=""
        shift 2
        start_sup "$name" "$off" --spares 0 --max-runs 2 "$@"
        start_run "$name"
        [ -n "$(uid_procs "$off")" ] || [ -n "$ROOTLESS_USER" ] || fail "$name: no process of the run's uid (the count's control)"
        kill_sup "$name"
        while [ $(($(ms) - KILLED_AT)) -le 1000 ]; do
                if [ -z "$(alive "${PROCS[@]}")" ] && [ -z "$(uid_procs "$off")" ]; then
                        gone_ms=$(($(ms) - KILLED_AT))
                        break
                fi
                sleep 0.05
        done
        if [ -z "$gone_ms" ]; then
                left="$(alive "${PROCS[@]}") $(uid_procs "$off")"
                for p in $left; do kill -KILL "$p" 2>/dev/null; done
                fail "$name: processes of the run outlived the supervisor by more than 1 s: $left"
        fi
        echo "ok: $name: the run's ${#PROCS[@]} processes were gone ${gone_ms} ms after the supervisor's SIGKILL"
        restart "$name" "$off" --spares 0 --max-runs 2 "$@"
}

# survives NAME OFF OPTIONS...: the control, both means off: the jail is still there 3 s
# after its supervisor's SIGKILL; ended by its pid 1's pid.
survives() {
        local name=$1 off=$2
        shift 2
        start_sup "$name" "$off" --spares 0 --max-runs 2 "$@"
        start_run "$name"
        kill_sup "$name"
        sleep 3
        left=$(alive "${PROCS[@]}")
        expect_eq "$name: the run's processes 3 s after the SIGKILL (the control: both means off)" \
                "$(echo "${PROCS[@]%%:*}" | tr ' ' '\n' | sort | tr '\n' ' ')" "$(echo "$left" | sort | tr '\n' ' ')"
        kill -KILL "$JAIL"
        for _ in $(seq 50); do [ -z "$(alive "${PROCS[@]}")" ] && break; sleep 0.1; done
        expect_eq "$name: the orphan, ended by its pid 1's pid" "" "$(alive "${PROCS[@]}")"
        restart "$name" "$off" --spares 0 --max-runs 2 "$@"
}

dies both 637000000
dies pdeathsig 637001000 --test-no-sync-watch
dies syncwatch 637002000 --test-no-pdeathsig
survives neither 637003000 --test-no-pdeathsig --test-no-sync-watch
dies direct-pdeathsig 637004000 --test-no-userns --test-no-sync-watch
dies direct-syncwatch 637005000 --test-no-userns --test-no-pdeathsig
survives direct-neither 637006000 --test-no-userns --test-no-pdeathsig --test-no-sync-watch
