# F6 (issue 9): a valid frame just under 16 MiB, with every optional field left out, sent to the
# broker. The broker passes requests on re-encoded with every field written out; before, one
# that came out over the limit failed as "internal" once it was being sent. Now it is refused
# at once as the client's bad_request, naming the bound; one that fits runs. The same frame
# straight to the supervisor runs: it is valid.
. "$(dirname "$0")/lib.sh"
MAX=$((16 * 1024 * 1024))
out=$("$CONNTOOL" "$ANVIL_SOCKET" big $((MAX - 10))) || fail "conntool: $out"
expect_match "broker: a frame 10 bytes under the limit" \
        "^error code=bad_request message=run_request: encoded frame of [0-9]+ bytes is over the limit of $MAX, as the broker passes the request on to the supervisor \(every field written out\); send smaller inputs$" \
        "$out"
over=$(sed -E 's/.*encoded frame of ([0-9]+) bytes.*/\1/' <<<"$out")
echo "    re-encoded, it is $over bytes: $((over - MAX + 10)) more than the client sent"
[ "$over" -gt "$MAX" ] || fail "the re-encoded size $over is not over the limit"
grep -q "run_request refused: run_request: encoded frame of" "$ANVIL_E2E_STATE/broker.log" ||
        fail "the broker's log does not say why it refused the request"
# What fits once re-encoded runs, its input whole.
fit=$((MAX - 2 * (over - MAX + 10)))
out=$("$CONNTOOL" "$ANVIL_SOCKET" big "$fit") || fail "conntool: $out"
expect_match "broker: a frame that fits once re-encoded runs" '^run_result ok [0-9]+$' "$out"
echo "ok: $fit bytes sent, the input in the jail: ${out##* } bytes"
out=$("$CONNTOOL" "$ANVIL_SUP_SOCKET" big $((MAX - 10))) || fail "conntool: $out"
expect_match "supervisor: the frame 10 bytes under the limit runs" '^run_result ok [0-9]+$' "$out"
expect_serving
