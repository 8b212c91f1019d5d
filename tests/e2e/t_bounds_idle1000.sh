# 1,000 idle connections (issue 9, F4 and "faults as tests"): the broker keeps serving
# another uid while they are held, and once they close its fds and memory are back to what
# they were. First with the default bounds, from one uid: it gets its per-uid cap (64) and
# the rest are refused at once, with the bound's error. Then 500 from each of two uids, under
# a per-uid cap of 500: all 1,000 are held, and a third uid is served. The figures are
# printed (fds, RSS; the broker runs with glibc's mmap threshold at 64 KiB, lib.sh). Each
# part's memory is compared with what it was after one warm-up round of the same connections:
# what the first round leaves in the heap (its free lists, fragmentation) is no leak, and
# once measured against a cold start it went 2.5 MiB over the tolerance under load.
. "$(dirname "$0")/lib.sh"
# A sanitized build (make check SANITIZE=1): ASan's quarantine keeps freed memory (256 MiB of
# it) in the brokers' RSS, which then shows what was freed, not what is held; without it a
# large block is unmapped at its free, as glibc's 64 KiB mmap threshold does above. The bound
# is the same; only use-after-free detection is off in this test's brokers.
# ASan's allocator still keeps per-thread caches and its own metadata, which grew a broker by
# 4.6 MiB once in a loaded sanitized suite (passing alone, both passes): there the tolerance is
# 8 MiB, 8 KiB for each of the 1000 connections, which a leak per connection still exceeds;
# the plain build keeps 2 MiB.
SLACK_KB=2048
if [ -n "${ANVIL_E2E_SANITIZE:-}" ]; then
        export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
        SLACK_KB=8192
fi
tool hello.py <<<'print("served")'

served() { # what uid
        local out
        out=$(ANVIL_SOCKET="$T/bro.sock" as_uid "$2" "$CTL" run "$T/hello.py" --json 2>&1) ||
                fail "$1: uid $2 was not served: $out"
        expect_eq "$1: uid $2 served" "ok served" "$(jq -r '"\(.status) \(.stdout)"' <<<"$out" | head -1)"
}

# back_to WHAT FDS RSS: waits (up to 10 s) for the broker's fd count to be FDS again, then
# checks its RSS is within SLACK_KB (2 MiB; 8 MiB sanitized) of RSS.
back_to() {
        local fds rss
        for _ in $(seq 100); do
                fds=$(n_fds "$BRO_PID")
                [ "$fds" -le "$2" ] && break
                sleep 0.1
        done
        rss=$(rss_kb "$BRO_PID")
        echo "    $1: after: $fds fds, RSS $rss kB"
        expect_eq "$1: the broker's fds once they closed" "$2" "$fds"
        [ "$rss" -le $(($3 + SLACK_KB)) ] || fail "$1: the broker's RSS is $rss kB, it was $3 kB before"
        echo "ok: $1: the broker's RSS is back ($rss kB, $3 kB before)"
}

# warm_round N [M]: N connections from uid 65534 (and M from 65532) held and released, then
# until the broker's fds are what they were before.
warm_round() {
        local fds
        fds=$(n_fds "$BRO_PID")
        hold warm1 65534 "$T/bro.sock" "$1"
        [ -n "${2:-}" ] && hold warm2 65532 "$T/bro.sock" "$2"
        release warm1
        [ -n "${2:-}" ] && release warm2
        for _ in $(seq 100); do [ "$(n_fds "$BRO_PID")" -le "$fds" ] && return; sleep 0.1; done
        fail "the warm-up's connections are still open: $(n_fds "$BRO_PID") fds, $fds before"
}

start_bro bro
served "warm-up" 65533
warm_round 1000
fds0=$(n_fds "$BRO_PID")
rss0=$(rss_kb "$BRO_PID")
echo "    before: $fds0 fds, RSS $rss0 kB"

# One uid, 1,000 connections, the default bounds.
hold one 65534 "$T/bro.sock" 1000
echo "    one uid, 1000 connections held: $(n_fds "$BRO_PID") fds, RSS $(rss_kb "$BRO_PID") kB"
served "one uid's 1000" 65533
release one
echo "    $(tr '\n' '|' <"$T/one.out")"
expect_eq "one uid's 1000: admitted up to the per-uid cap" "64 open" "$(grep ' open$' "$T/one.out")"
expect_eq "one uid's 1000: the rest refused with the bound's error" \
        "936 error code=busy message=too many connections from uid 65534 to the broker: at most 64 at once (--max-conns-per-uid); close one and try again" \
        "$(grep ' error ' "$T/one.out")"
back_to "one uid's 1000" "$fds0" "$rss0"

# Two uids, 500 each, all held.
kill "$BRO_PID"
wait "$BRO_PID"
start_bro bro --max-conns-per-uid 500
served "warm-up" 65533
warm_round 500 500
fds0=$(n_fds "$BRO_PID")
rss0=$(rss_kb "$BRO_PID")
echo "    before: $fds0 fds, RSS $rss0 kB"
hold u1 65534 "$T/bro.sock" 500
hold u2 65532 "$T/bro.sock" 500
fds=$(n_fds "$BRO_PID")
echo "    two uids, 1000 connections held: $fds fds, RSS $(rss_kb "$BRO_PID") kB"
[ "$fds" -ge $((fds0 + 1000)) ] || fail "the broker holds $fds fds: not the 1000 connections"
served "two uids' 1000" 65533
release u1
release u2
expect_eq "uid 65534's 500, all held" "500 open" "$(cat "$T/u1.out" | tail -1)"
expect_eq "uid 65532's 500, all held" "500 open" "$(cat "$T/u2.out" | tail -1)"
back_to "two uids' 1000" "$fds0" "$rss0"
served "after" 65533
