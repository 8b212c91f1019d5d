# The supervisor holds each jail child's mount, network, ipc and pid namespaces (pool.c), so
# that their teardown happens after the run's result is out, on the thread pool, not in the
# jail's exit. A rootless supervisor may open them only while the child is dumpable, until
# C3: the opens came after MAPPED and raced with the child clearing its dumpable flag, so a
# spare held 0, 4 or 8 of them (seen by the soak). With --spares 3 a supervisor holds 4 for
# each spare, and a run's own are let go after it.
. "$(dirname "$0")/lib.sh"
start_sup held 603000 --spares 3 --max-runs 2
# held_ns: namespace fds the supervisor holds (its own namespaces are not among its fds)
held_ns() {
        local n=0 f
        for f in /proc/"$SUP_PID"/fd/*; do
                [[ "$(readlink "$f" 2>/dev/null)" =~ ^(mnt|net|ipc|pid):\[ ]] && n=$((n + 1))
        done
        echo "$n"
}
for _ in $(seq 100); do [ "$(held_ns)" -ge 12 ] && break; sleep 0.1; done
expect_eq "namespaces held for three spares" 12 "$(held_ns)"
tool quick.py <<<'print("quick")'
for i in 1 2 3 4 5 6; do
        ANVIL_SOCKET="$T/held.sock" run_json "$T/quick.py"
        expect_eq "run $i" ok "$(j .status)"
done
for _ in $(seq 100); do [ "$(held_ns)" -eq 12 ] && break; sleep 0.1; done
expect_eq "namespaces held after six runs: the spares' again, the runs' let go" 12 "$(held_ns)"
