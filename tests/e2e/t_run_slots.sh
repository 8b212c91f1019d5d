# A full supervisor answers "busy" and keeps serving (issue 9, F1): a run's place is held
# until its slot is free, so a run admitted by the count check always finds a slot. Before,
# the count was released when the result went out and the slot only later, on the thread
# pool; a run admitted in between found no slot, and that failure crashed the supervisor
# (F2). Four client loops of back-to-back runs against --max-runs 2 --spares 0: every run ends
# ok or with the busy error, never with the connection closed; the supervisor is alive at the
# end, and serves a following run.
. "$(dirname "$0")/lib.sh"
start_sup slots 617000000 --max-runs 2 --spares 0
tool quick.py <<<'print("quick")'
LOOPS=4
RUNS=40
loop() {
        local i=$1 n
        for n in $(seq $RUNS); do
                ANVIL_SOCKET="$T/slots.sock" "$CTL" run "$T/quick.py" --json >"$T/r.$i.$n.json" 2>"$T/e.$i.$n"
                echo $? >"$T/rc.$i.$n"
        done
}
pids=()
for i in $(seq $LOOPS); do
        loop "$i" &
        pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
kill -0 "$SUP_PID" 2>/dev/null || fail "the supervisor died under load: $(tail -5 "$T/slots.log")"
echo "ok: the supervisor is alive after $((LOOPS * RUNS)) runs from $LOOPS clients"
ok=0 busy=0
for i in $(seq $LOOPS); do
        for n in $(seq $RUNS); do
                rc=$(cat "$T/rc.$i.$n")
                if [ "$rc" = 0 ] && [ "$(jq -r .status "$T/r.$i.$n.json")" = ok ] &&
                        [ "$(jq -r .stdout "$T/r.$i.$n.json")" = quick ]; then
                        ok=$((ok + 1))
                elif [ "$rc" = 123 ] && [ "$(cat "$T/e.$i.$n")" = "anvilctl: busy: All 2 run slots are in use; try again later" ]; then
                        busy=$((busy + 1))
                else
                        fail "client $i, run $n: exit $rc: $(cat "$T/e.$i.$n") $(head -c 300 "$T/r.$i.$n.json")"
                fi
        done
done
echo "ok: $ok runs ended ok, $busy were refused as busy, none otherwise"
# Both outcomes seen: the slots were contended, and runs still went through.
[ "$ok" -gt 0 ] || fail "no run ended ok"
[ "$busy" -gt 0 ] || fail "no run was refused as busy: the slots were never all in use, nothing was tested"
expect_eq "sandbox failures in the log" 0 "$(grep -c 'sandbox failed' "$T/slots.log")"
ANVIL_SOCKET="$T/slots.sock" run_json "$T/quick.py"
expect_eq "a following run" ok "$(j .status)"

# A probe asked for while every slot is taken needs a slot of its own: it is told busy, and
# nothing is claimed (before, it got a probe_result of tier "none", "the probe could not be
# started"). Once a slot is free, it runs.
tool sleeper.py <<<'import time; print("up", flush=True); time.sleep(30)'
sl=()
started=$(grep -c 'started for' "$T/slots.log")
for i in 1 2; do
        ANVIL_SOCKET="$T/slots.sock" "$CTL" run "$T/sleeper.py" --timeout 60 --json >"$T/sl.$i.json" 2>&1 &
        sl+=($!)
done
for _ in $(seq 100); do [ "$(grep -c 'started for' "$T/slots.log")" -ge $((started + 2)) ] && break; sleep 0.1; done
ANVIL_SOCKET="$T/slots.sock" "$CTL" probe --json >"$T/probe.json" 2>"$T/probe.err"
expect_eq "a probe while both slots are taken: exit (refused)" 123 "$?"
expect_eq "its error" "anvilctl: busy: The probe needs a run slot of its own: All 2 run slots are in use; try again later" "$(cat "$T/probe.err")"
for p in "${sl[@]}"; do kill -INT "$p"; done
for p in "${sl[@]}"; do wait "$p"; done
for _ in $(seq 50); do
        ANVIL_SOCKET="$T/slots.sock" "$CTL" probe --json >"$T/probe.json" 2>"$T/probe.err" && break
        sleep 0.2
done
expect_match "the probe once a slot is free" "seccomp" "$(jq -r .tier "$T/probe.json")"
