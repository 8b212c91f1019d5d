# Malformed frames to both daemons' sockets (the supervisor's and the broker's), one class per
# connection, sent by build/tests/frametool (tests/e2e/frametool.c): each gets an error frame
# (code bad_frame or bad_message) and the connection is closed; wrongtype and missing name the
# exact field. Meanwhile a run on another connection goes on to the end, and afterwards each
# daemon answers a hello on a new connection and carries out a normal run.
. "$(dirname "$0")/lib.sh"
FT="$ANVIL_BUILD/tests/frametool"
[ -x "$FT" ] || fail "$FT is missing: build it with 'make tests'"

# class, what frametool sends, the field the error must name ("-" for the frame as a whole),
# and a phrase of the message.
CLASSES=(
        "truncated|-|truncated"
        "oversize|-|over the limit"
        "wrongtype|run_request.limits.wall_s|expected an unsigned integer"
        "missing|run_request.source|required field is missing"
        "deep||too deep"
        "trailing|-|trailing bytes"
        "unknowntype|message.type|unknown message type 'bogus'"
)

tool slow.py <<'PY'
import time
time.sleep(2)
print("slow run done")
PY

for sock in "$ANVIL_SUP_SOCKET" "$ANVIL_SOCKET"; do
        name=$([ "$sock" = "$ANVIL_SUP_SOCKET" ] && echo supervisor || echo broker)
        # Control: a well-formed hello is answered, not refused.
        expect_eq "$name: hello before" "ok hello" "$("$FT" "$sock" hello 2>&1)"
        # A run on another connection, live while the malformed frames arrive.
        ANVIL_SOCKET="$sock" "$CTL" run "$T/slow.py" --json >"$T/slow-$name.json" 2>"$T/slow-$name.err" &
        slow=$!
        sleep 0.3
        for c in "${CLASSES[@]}"; do
                IFS='|' read -r cls field phrase <<<"$c"
                out=$("$FT" "$sock" "$cls" 2>&1) || fail "$name $cls: frametool exited $?: $out"
                echo "    $name $cls: $out"
                expect_match "$name $cls: one error line" '^error code=(bad_frame|bad_message) field=[^ ]+ message=.+$' "$out"
                got_field=$(sed -E 's/^error code=[^ ]+ field=([^ ]+) message=.*/\1/' <<<"$out")
                msg=${out#*message=}
                if [ "$cls" = deep ]; then
                        # The nested value is under the key "junk" of the run_request.
                        expect_match "$name deep: the field names the nested key" '^(message|run_request)\.junk(\[0\])+$' "$got_field"
                else
                        expect_eq "$name $cls: field" "$field" "$got_field"
                fi
                [ "$got_field" = - ] || [[ "$msg" == "$got_field: "* ]] || fail "$name $cls: the message does not start with the field: $msg"
                [[ "$msg" == *"$phrase"* ]] || fail "$name $cls: the message does not say '$phrase': $msg"
        done
        kill -0 "$slow" 2>/dev/null || fail "$name: the run on the other connection ended early: $(cat "$T/slow-$name.err")"
        wait "$slow" || fail "$name: the run on the other connection: anvilctl exited $?: $(cat "$T/slow-$name.err")"
        expect_eq "$name: the run alongside the bad frames" "ok slow run done" \
                "$(jq -r '"\(.status) \(.stdout)"' "$T/slow-$name.json" | head -1)"
        expect_eq "$name: hello after" "ok hello" "$("$FT" "$sock" hello 2>&1)"
done
kill -0 "$ANVIL_E2E_SUP_PID" || fail "the supervisor died"
kill -0 "$ANVIL_E2E_BRO_PID" || fail "the broker died"
echo "ok: both daemons alive"
# A normal run, straight to the supervisor and through the broker.
echo "a normal run on the supervisor's socket:"
ANVIL_SOCKET="$ANVIL_SUP_SOCKET" expect_serving
echo "a normal run on the broker's socket:"
expect_serving
