# Who may use the supervisor: its socket is 0660 and opened only to --socket-group, and every
# peer's uid is checked with SO_PEERCRED: root and each --allow-uid. A supervisor of this
# test's own, so that the suite's is untouched.
. "$(dirname "$0")/lib.sh"
FT="$ANVIL_BUILD/tests/frametool"
SOCK="$T/sup.sock"
"$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$SOCK" --state-dir "$T/state" --socket-group 65534 \
        --allow-uid 65534 --spares 0 --max-runs 2 --uid-base $((ANVIL_E2E_UID_BASE + 200000000)) >"$T/sup.log" 2>&1 &
SUP=$!
trap 'kill $SUP 2>/dev/null; wait $SUP 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the supervisor did not start: $(cat "$T/sup.log")"
chmod 755 "$T"

expect_eq "socket mode and group" "660 65534" "$(stat -c '%a %g' "$SOCK")"
expect_eq "root may connect" "ok hello" "$("$FT" "$SOCK" hello)"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$FT" "$SOCK" hello 2>&1)
expect_eq "an allowed uid in the socket's group may connect" "ok hello" "$out"
# In the group (so the file system lets it connect) but not allowed: SO_PEERCRED refuses it.
out=$(setpriv --reuid=65533 --regid=65534 --clear-groups "$FT" "$SOCK" hello 2>&1)
rc=$?
expect_eq "a uid not allowed: exit" 2 "$rc"
expect_eq "a uid not allowed: the error frame" \
        "error code=forbidden field=- message=This uid may not use the supervisor (see --allow-uid)" "$out"
# Neither in the group nor allowed: the file system refuses it before the supervisor sees it.
out=$(setpriv --reuid=65533 --regid=65533 --clear-groups "$FT" "$SOCK" hello 2>&1)
[ $? -ne 0 ] || fail "a uid outside the socket's group connected: $out"
expect_match "outside the group: refused by the file system" "Permission denied" "$out"
expect_eq "root still served" "ok hello" "$("$FT" "$SOCK" hello)"
