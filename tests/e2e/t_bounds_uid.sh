# One user cannot lock another out (issue 9, F4): the broker's connections are capped per uid
# (--max-conns-per-uid) well below the global cap (--max-conns). Uid A (65534) holds its cap
# of connections, idle ones and ones with an unfinished frame; uid B (65533) is still served
# at once, and A's next connection gets the busy error, which anvilctl prints, exiting 1 (not
# dying of SIGPIPE, rc 141, in silence: also when the refusal comes while it is still writing
# a large request). Control: with the per-uid cap equal to the global one, A's connections
# lock B out. The same for the bytes of unfinished frames per uid (--max-partial-bytes), and
# for the supervisor's own per-uid cap.
. "$(dirname "$0")/lib.sh"
A=65534
B=65533
tool hello.py <<<'print("served")'

start_bro capped --max-conns 16 --max-conns-per-uid 4
SOCK="$T/capped.sock"
hold a-idle $A "$SOCK" 2
hold a-part $A "$SOCK" 2 1000
out=$(ANVIL_SOCKET="$SOCK" as_uid $B "$CTL" run "$T/hello.py" --json 2>&1) || fail "uid B was not served: $out"
expect_eq "uid B served while uid A holds its cap" "ok served" "$(jq -r '"\(.status) \(.stdout)"' <<<"$out" | head -1)"
UIDCAP="anvilctl: busy: too many connections from uid $A to the broker: at most 4 at once (--max-conns-per-uid); close one and try again"
out=$(ANVIL_SOCKET="$SOCK" as_uid $A "$CTL" run "$T/hello.py" 2>&1)
rc=$?
expect_eq "uid A's next connection: anvilctl's exit status (refused)" 123 "$rc"
expect_eq "uid A's next connection: the broker's error, printed" "$UIDCAP" "$out"
# A request larger than the socket's buffers: the broker refuses the connection and closes it
# while anvilctl is still writing (EPIPE), and its error frame is still read and printed.
head -c $((8 * 1024 * 1024)) /dev/zero >"$T/big.bin"
out=$(ANVIL_SOCKET="$SOCK" as_uid $A "$CTL" run "$T/hello.py" --input "$T/big.bin" 2>&1)
rc=$?
expect_eq "uid A, a large request: anvilctl's exit status (refused)" 123 "$rc"
expect_eq "uid A, a large request: the broker's error, printed" "$UIDCAP" "$out"
release a-idle
release a-part
expect_eq "uid A's held connections: none refused, none closed" "2 open" "$(cat "$T/a-idle.out" | tail -1)"
expect_eq "uid A's unfinished frames: none refused, none closed" "2 open" "$(cat "$T/a-part.out" | tail -1)"

# Control: the per-uid cap as high as the global one. Uid A's connections fill the broker,
# and uid B is locked out: what the per-uid cap prevents.
start_bro flat --max-conns 4 --max-conns-per-uid 4
SOCK="$T/flat.sock"
hold a-flat $A "$SOCK" 4
out=$(ANVIL_SOCKET="$SOCK" as_uid $B "$CTL" run "$T/hello.py" 2>&1)
rc=$?
expect_eq "control: uid B locked out: exit status (refused)" 123 "$rc"
expect_eq "control: uid B locked out: the broker's error" \
        "anvilctl: busy: too many connections to the broker: at most 4 at once from all users (--max-conns); try again later" "$out"
release a-flat

# The bytes of unfinished frames, per uid: 2.5 MiB. Uid A's connections with 1 MiB of a frame
# each: the third goes over and is refused with the bound's error; B is still served.
start_bro partial --max-partial-bytes 2621440
SOCK="$T/partial.sock"
hold a-bytes $A "$SOCK" 3 1048576
out=$(ANVIL_SOCKET="$SOCK" as_uid $B "$CTL" run "$T/hello.py" --json 2>&1) || fail "uid B was not served: $out"
expect_eq "partial bytes: uid B served" "ok served" "$(jq -r '"\(.status) \(.stdout)"' <<<"$out" | head -1)"
release a-bytes
echo "    $(tr '\n' '|' <"$T/a-bytes.out")"
expect_eq "partial bytes: two connections of uid A held" "2 open" "$(grep ' open$' "$T/a-bytes.out")"
expect_match "partial bytes: the third refused, the bound named" \
        "^1 error code=busy message=message: uid $A's unfinished frames on its connections to the broker would take [0-9]+ bytes, over the limit of 2621440 \(--max-partial-bytes\); send each frame whole, on fewer connections at once$" \
        "$(grep ' error ' "$T/a-bytes.out")"

# The supervisor's own cap per uid: at least --max-runs + 1 (the broker's runs and a probe);
# root holds it, and another allowed uid is still served; with the per-uid cap at the global
# one, root's connections lock it out.
# This test's supervisors run as root in both passes: they open their sockets to another
# uid's group (65534), which only root may give a socket.
SUP_WRAP=()
FT="$ANVIL_BUILD/tests/frametool"
start_sup supcap 340000000 --max-runs 2 --spares 0 --max-conns-per-uid 3 --max-conns 6 --allow-uid $A --socket-group 65534
hold root-sup 0 "$T/supcap.sock" 3
expect_eq "supervisor: uid $A served while root holds its cap" "ok hello" "$(as_uid $A "$FT" "$T/supcap.sock" hello 2>&1)"
expect_eq "supervisor: root's next connection refused" \
        "error code=busy field=- message=too many connections from uid 0 to the supervisor: at most 3 at once (--max-conns-per-uid); close one and try again" \
        "$("$FT" "$T/supcap.sock" hello 2>&1)"
release root-sup
start_sup supflat 340000100 --max-runs 2 --spares 0 --max-conns-per-uid 3 --max-conns 3 --allow-uid $A --socket-group 65534
hold root-flat 0 "$T/supflat.sock" 3
expect_eq "supervisor control: uid $A locked out" \
        "error code=busy field=- message=too many connections to the supervisor: at most 3 at once from all users (--max-conns); try again later" \
        "$(as_uid $A "$FT" "$T/supflat.sock" hello 2>&1)"
release root-flat
out=$("$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$T/x.sock" --state-dir "$T/x" --max-runs 4 --max-conns-per-uid 4 2>&1)
expect_eq "supervisor: a per-uid cap below --max-runs + 1 is refused" \
        "anvil-supervisor: --max-conns-per-uid 4: at least --max-runs + 1 (5): the broker carries each run on a connection of its own, and a probe on another" \
        "$out"
expect_serving
