# The supervisor's state directory full (issue 9, F2): a client can cause it without filling
# the disk, by sending an input larger than the free space. The run fails before any jail is
# built: the client gets a clear error frame (unavailable, with the system's words), nothing
# of the run is left in the state directory (no half-written run directory, no mark of a run
# in flight), the supervisor stays up, and the next run works. Before, every such early
# failure reached collect_done() with no run (a NULL dereference): the supervisor crashed.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "mounting the small filesystem the state directory lives on needs root"
mkdir "$T/full"
mount -t tmpfs -o size=4m,mode=0711 anvil-e2e-full "$T/full" || fail "cannot mount a tmpfs at $T/full"
full_cleanup() {
        local p
        for p in "${OWN_PIDS[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${OWN_PIDS[@]}"; do wait "$p" 2>/dev/null; done
        umount "$T/full" 2>/dev/null || umount -l "$T/full"
        cleanup
}
trap full_cleanup EXIT
start_sup full 627000000 --spares 0 --max-runs 2
avail() { df --output=avail -B1 "$T/full" | tail -1 | tr -d ' '; }
before=$(avail)
runs_before=$(ls -A "$T/full/runs") # the start-up probe's run
echo "the state directory's filesystem: $before bytes free"
head -c $((before + 1048576)) /dev/zero >"$T/big.bin"
# Passed as an fd, a file others may read is bind-mounted and takes no room; one they may not
# is copied from its fd into the run's inputs/ (docs/cli.md), and that copy fills the disk.
chmod 600 "$T/big.bin"
tool read.py <<'PY'
import os
print(os.path.getsize("inputs/big.bin"))
PY
ANVIL_SOCKET="$T/full.sock" "$CTL" run "$T/read.py" --input "$T/big.bin" --json >"$T/big.json" 2>"$T/big.err"
expect_eq "anvilctl's exit status (refused)" 123 "$?"
expect_eq "the error" \
        "anvilctl: unavailable: The supervisor's state directory is full: the run's files could not be stored (No space left on device)" \
        "$(cat "$T/big.err")"
kill -0 "$SUP_PID" 2>/dev/null || fail "the supervisor died: $(tail -5 "$T/full.log")"
echo "ok: the supervisor is alive"
expect_eq "runs/ (nothing of the run left)" "$runs_before" "$(ls -A "$T/full/runs")"
expect_eq "free bytes, as before the run" "$before" "$(avail)"
expect_match "the log says why" "run [0-9T]+-[0-9a-f]+: unavailable: The supervisor's state directory is full" "$(cat "$T/full.log")"

# The next run works, and is kept; nothing of it stays marked in flight.
printf 'a,b\n1,2\n' >"$T/small.csv"
tool small.py <<'PY'
print(open("inputs/small.csv").read().strip())
PY
ANVIL_SOCKET="$T/full.sock" run_json "$T/small.py" --input "$T/small.csv"
expect_eq "a following run" ok "$(j .status)"
expect_eq "its stdout" "a,b
1,2" "$(j .stdout)"
id=$(j .run_id)
[ -f "$T/full/runs/$id/tool.py" ] || fail "the following run's directory is missing: $(ls -A "$T/full/runs")"
expect_eq "runs/ after it (no mark left)" "$(printf '%s\n%s' "$runs_before" "$id" | sort)" "$(ls -A "$T/full/runs" | sort)"
