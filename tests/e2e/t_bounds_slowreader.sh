# A slow reader (issue 9, F4: unread results pinned the broker's memory): a client sends
# eight runs of 4 MiB of output each and reads nothing. With --max-unread-bytes 4 MiB the
# broker keeps at most about one result for it (its RSS grows by less than 12 MiB), ends the
# connection with the bound's error (what the client reads once it reads), still stores all
# eight results, and serves another uid meanwhile. Control: with the default bound (256 MiB)
# the same client pins all eight results (the RSS grows by more than 24 MiB), so the figure
# above shows the bound. The brokers run with glibc's mmap threshold at 64 KiB (lib.sh), so
# that their RSS is what they hold.
. "$(dirname "$0")/lib.sh"
# A sanitized build (make check SANITIZE=1): ASan's quarantine keeps freed memory (256 MiB of
# it) in the brokers' RSS, which then shows what was freed, not what is held; without it a
# large block is unmapped at its free, as glibc's 64 KiB mmap threshold does above. The bound
# is the same; only use-after-free detection is off in this test's brokers.
[ -n "${ANVIL_E2E_SANITIZE:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
tool big.py <<'PY'
import sys
sys.stdout.write("o" * 2097152)
sys.stderr.write("e" * 2097152)
PY
tool hello.py <<<'print("served")'

# slow NAME: uid 65534 sends the eight runs to broker NAME and reads nothing until all eight
# have ended (and are stored), then reads; prints the RSS figures, sets GROWN (kB).
slow() {
        local name=$1 rss0 rss1 pid out
        ANVIL_SOCKET="$T/$name.sock" as_uid 65533 "$CTL" run "$T/hello.py" >/dev/null || fail "$name: warm-up run"
        rss0=$(rss_kb "$BRO_PID")
        (exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$CONNTOOL" "$T/$name.sock" runs 8 "$T/big.py" 2097152) \
                >"$T/$name.out" 2>&1 &
        pid=$!
        OWN_PIDS+=("$pid")
        for _ in $(seq 1200); do
                [ "$(grep -c ': ended after ' "$T/$name.log")" -ge 9 ] && break
                sleep 0.1
        done
        [ "$(grep -c ': ended after ' "$T/$name.log")" -ge 9 ] || fail "$name: the eight runs did not end: $(tail "$T/$name.log")"
        for _ in $(seq 100); do
                [ "$(find "$T/$name/results" -name '*.json' | wc -l)" -ge 9 ] && break
                sleep 0.1
        done
        sleep 0.5
        rss1=$(rss_kb "$BRO_PID")
        GROWN=$((rss1 - rss0))
        echo "    $name: RSS $rss0 kB before, $rss1 kB with the eight results unread (+$GROWN kB)"
        out=$(ANVIL_SOCKET="$T/$name.sock" as_uid 65533 "$CTL" run "$T/hello.py" --json 2>&1) ||
                fail "$name: uid 65533 was not served: $out"
        expect_eq "$name: another uid served meanwhile" "ok served" "$(jq -r '"\(.status) \(.stdout)"' <<<"$out" | head -1)"
        kill -USR1 "$pid"
        wait "$pid" || fail "$name: conntool exited $?: $(cat "$T/$name.out")"
        echo "    $name: the slow reader read: $(tr '\n' '|' <"$T/$name.out")"
        expect_eq "$name: every result stored" 10 "$(find "$T/$name/results" -name '*.json' | wc -l)"
}

start_bro bounded --max-unread-bytes 4194304
slow bounded
[ "$GROWN" -lt 12288 ] || fail "bounded: the broker's RSS grew by $GROWN kB with 4 MiB unread allowed"
echo "ok: bounded: the broker's RSS grew by $GROWN kB"
expect_eq "bounded: results delivered before the bound" "run_result 1" "$(sed -n 2p "$T/bounded.out")"
expect_match "bounded: the bound's error, then the end" \
        "^error code=busy message=uid 65534 has left [0-9]+ bytes of replies unread on its connections to the broker, and the next would take it over the limit of 4194304 \(--max-unread-bytes\); this connection is closed: read the replies to a request as they come$" \
        "$(sed -n 3p "$T/bounded.out")"
expect_eq "bounded: then the connection closed" "end eof" "$(sed -n 4p "$T/bounded.out")"
grep -q 'bytes unread on this connection' "$T/bounded.log" || fail "bounded: the broker's log does not say why it closed"
kill "$BRO_PID"

# The same slow reader asking for the tools' output as it is written (run_request.stream_output,
# issue 12): those frames count towards the same bound, so the broker holds no more for it, and
# ends the connection with the same error (its runs, abandoned, are cancelled).
start_bro streaming --max-unread-bytes 4194304
ANVIL_SOCKET="$T/streaming.sock" as_uid 65533 "$CTL" run "$T/hello.py" >/dev/null || fail "streaming: warm-up run"
rss0=$(rss_kb "$BRO_PID")
(CONNTOOL_STREAM=1 exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$CONNTOOL" "$T/streaming.sock" runs 8 \
        "$T/big.py" 2097152) >"$T/streaming.out" 2>&1 &
pid=$!
OWN_PIDS+=("$pid")
for _ in $(seq 600); do
        grep -q 'bytes unread on this connection' "$T/streaming.log" && break
        sleep 0.1
done
grep -q 'bytes unread on this connection' "$T/streaming.log" ||
        fail "streaming: the broker did not end the slow reader's connection: $(tail "$T/streaming.log")"
for _ in $(seq 1200); do
        [ "$(grep -c ': ended after ' "$T/streaming.log")" -ge 9 ] && break
        sleep 0.1
done
[ "$(grep -c ': ended after ' "$T/streaming.log")" -ge 9 ] || fail "streaming: the eight runs did not end: $(tail "$T/streaming.log")"
sleep 0.5
rss1=$(rss_kb "$BRO_PID")
GROWN=$((rss1 - rss0))
echo "    streaming: RSS $rss0 kB before, $rss1 kB with the slow reader's output unread (+$GROWN kB)"
[ "$GROWN" -lt 12288 ] || fail "streaming: the broker's RSS grew by $GROWN kB with 4 MiB unread allowed"
echo "ok: streaming: the broker's RSS grew by $GROWN kB"
kill -USR1 "$pid"
wait "$pid" || fail "streaming: conntool exited $?: $(cat "$T/streaming.out")"
echo "    streaming: the slow reader read: $(tr '\n' '|' <"$T/streaming.out")"
expect_match "streaming: the bound's error" \
        "^error code=busy message=uid 65534 has left [0-9]+ bytes of replies unread on its connections to the broker, and the next would take it over the limit of 4194304 \(--max-unread-bytes\); this connection is closed: read the replies to a request as they come$" \
        "$(grep '^error ' "$T/streaming.out")"
out=$(ANVIL_SOCKET="$T/streaming.sock" as_uid 65533 "$CTL" run "$T/hello.py" --json 2>&1) ||
        fail "streaming: uid 65533 was not served after: $out"
expect_eq "streaming: the broker serves on" "ok served" "$(jq -r '"\(.status) \(.stdout)"' <<<"$out" | head -1)"
kill "$BRO_PID"

# Control: the default bound.
start_bro unbounded
slow unbounded
[ "$GROWN" -gt 24576 ] || fail "control: eight unread results grew the broker's RSS by only $GROWN kB: the figure does not show what is held"
echo "ok: control: eight unread results grew the broker's RSS by $GROWN kB"
expect_eq "control: every result delivered" "run_result 8|end all|" "$(sed -n '2,$p' "$T/unbounded.out" | tr '\n' '|')"
