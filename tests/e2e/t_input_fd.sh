# Inputs passed as file descriptors (docs/cli.md "Inputs"): anvilctl opens each --input as the
# calling user and sends the fd (SCM_RIGHTS) with its request; the broker passes it on; the
# supervisor never opens a path for a client. As root each input is bind-mounted from its fd
# (read-only); rootless it is copied from the fd, and a directory is refused with the catalog's
# message. Checked: a 1 GiB CSV read by pandas, with the supervisor's and the broker's peak
# memory (VmHWM) and the time shown; "NAME=PATH" with a space in NAME; a directory; writes
# through an input refused, reads allowed (the control); clients that send a pipe, a socket,
# /dev/zero, an fd count that does not match, no fd, an fd with a hello, an fd in the middle of
# a frame: each refused with its message, and the daemons keep serving; a file truncated after
# it was sent: the run ends cleanly; a path the calling user cannot read: refused by anvilctl
# (exit 2), the daemons never asked; --max-input-bytes.
. "$(dirname "$0")/lib.sh"
FRAMETOOL="$ANVIL_BUILD/tests/frametool"
ROOT_SUP=1
[ -n "$ROOTLESS_USER" ] && ROOT_SUP=0

# ---- a small file, named, with a space ----
printf 'region,amount\nnorth,10\nsouth,32\n' >"$T/sales.csv"
tool read.py <<'PY'
import os
for name in sorted(os.listdir("inputs")):
    print(f"{name}: {open('inputs/' + name).read()!r}")
PY
run_json "$T/read.py" --input "$T/sales.csv" --input "my sales.csv=$T/sales.csv"
expect_eq "two fd inputs, one named with a space: status" ok "$(j .status)"
expect_eq "what the tool read" "my sales.csv: 'region,amount\\nnorth,10\\nsouth,32\\n'
sales.csv: 'region,amount\\nnorth,10\\nsouth,32\\n'" "$(j .stdout)"

# ---- read-only both ways: reading allowed (the control), writing refused ----
tool write.py <<'PY'
import os
print("READ", open("inputs/x.csv").read().splitlines()[0])
for what, f in [("write", lambda: open("inputs/x.csv", "w").write("x")),
                ("append", lambda: open("inputs/x.csv", "a").write("x")),
                ("remove", lambda: os.remove("inputs/x.csv")),
                ("create", lambda: open("inputs/new.csv", "w").write("x"))]:
    try:
        f()
        print("DID", what)
    except OSError as e:
        print("REFUSED", what, type(e).__name__)
PY
cp "$T/sales.csv" "$T/x.csv"
chmod 666 "$T/x.csv" # writable by anyone on the host: only the jail's mount holds it read-only
sum_before=$(sha256sum <"$T/x.csv")
bare_json "$T/write.py" --input "$T/x.csv"
expect_eq "the tool reads its input" "READ region,amount" "$(j .stdout | grep ^READ)"
expect_eq "writes through the input that succeeded" "" "$(j .stdout | grep ^DID | paste -sd' ')"
expect_eq "writes through the input refused" 4 "$(j .stdout | grep -c ^REFUSED)"
expect_eq "the file on the host is unchanged" "$sum_before" "$(sha256sum <"$T/x.csv")"

# ---- a directory ----
mkdir -p "$T/data/sub"
echo one >"$T/data/a.txt"
echo two >"$T/data/sub/b.txt"
chmod -R a+rX "$T/data"
chmod 666 "$T/data/a.txt" # writable on the host: only the read-only tree refuses the write
tool dir.py <<'PY'
import os
for root, dirs, files in sorted(os.walk("inputs/data")):
    for f in sorted(files):
        print(os.path.join(root, f), open(os.path.join(root, f)).read().strip())
try:
    open("inputs/data/a.txt", "a").write("x")
    print("DID write")
except OSError as e:
    print("REFUSED write", type(e).__name__)
PY
if [ "$ROOT_SUP" = 1 ]; then
        # The kernel's refusal of the write, not the audit hook's (which would say blocked).
        bare_json "$T/dir.py" --input "$T/data/"
        expect_eq "a directory input: status" ok "$(j .status)"
        expect_eq "a directory input: what the tool read" "inputs/data/a.txt one
inputs/data/sub/b.txt two
REFUSED write OSError" "$(j .stdout)"
else
        "$CTL" run "$T/dir.py" --input "$T/data/" >"$T/out" 2>"$T/err"
        expect_eq "a directory input, rootless: exit (refused)" 123 "$?"
        expect_eq "a directory input, rootless: the message" "anvilctl: bad_request: run_request.inputs[0].fd: input 'data': a directory input is bind-mounted from its fd, which a rootless supervisor cannot do; send its files as inputs" "$(cat "$T/err")"
fi

# ---- clients that send what anvilctl never would: refused with their message ----
fdcase() { # KIND SOCKET EXPECTED
        local out
        out=$("$FRAMETOOL" "$2" "fd:$1" 2>&1)
        [ $? = 2 ] || fail "frametool fd:$1 on $2: no error frame: $out"
        expect_eq "fd:$1 ($(basename "$2"))" "$3" "$out"
}
sup_fds=$(n_fds "$ANVIL_E2E_SUP_PID")
bro_fds=$(n_fds "$ANVIL_E2E_BRO_PID")
for sock in "$ANVIL_SOCKET" "$ANVIL_SUP_SOCKET"; do
        for kind in pipe socket; do
                fdcase $kind "$sock" "error code=bad_request field=run_request.inputs[0].fd message=run_request.inputs[0].fd: input 'x.csv': its fd is a $kind, not a regular file or a directory"
        done
        fdcase devzero "$sock" "error code=bad_request field=run_request.inputs[0].fd message=run_request.inputs[0].fd: input 'x.csv': its fd is a character device, not a regular file or a directory"
        fdcase count "$sock" "error code=bad_request field=run_request.inputs message=run_request.inputs: 2 file descriptors came with the request and 1 of its inputs name one; each fd is one input's"
        fdcase none "$sock" "error code=bad_request field=run_request.inputs[0].fd message=run_request.inputs[0].fd: input 'x.csv': fd 0 is not one of the 0 file descriptors sent with the request"
        fdcase hello "$sock" "error code=bad_request field=- message=file descriptors came with a hello message; only a run_request's inputs may carry them"
        fdcase midframe "$sock" "error code=bad_frame field=- message=message: file descriptors came in the middle of a frame; send them with its first bytes"
done
# An fd that proves no right to read is refused, whoever sends it: O_PATH needs no read
# permission on the file (only search on its directory: a file of mode 0604 its owner may not
# read could be passed so), and write-only none. Control: sales.csv opened for reading ran above.
for kind in opath wronly; do
        for sock in "$ANVIL_SOCKET" "$ANVIL_SUP_SOCKET"; do
                fdcase "$kind:$T/sales.csv" "$sock" "error code=bad_request field=run_request.inputs[0].fd message=run_request.inputs[0].fd: input 'x.csv': its fd is not open for reading (an O_PATH or write-only fd proves no right to read)"
        done
done
# Every fd refused was closed: the daemons hold as many as before (the connections are gone).
for _ in $(seq 50); do
        [ "$(n_fds "$ANVIL_E2E_SUP_PID")" = "$sup_fds" ] && [ "$(n_fds "$ANVIL_E2E_BRO_PID")" = "$bro_fds" ] && break
        sleep 0.1
done
expect_eq "the supervisor's open fds, after the refused clients" "$sup_fds" "$(n_fds "$ANVIL_E2E_SUP_PID")"
expect_eq "the broker's open fds, after the refused clients" "$bro_fds" "$(n_fds "$ANVIL_E2E_BRO_PID")"
expect_serving

# ---- a path the calling user cannot read: anvilctl refuses it, nobody else is asked ----
echo secret >"$T/secret.csv"
chmod 600 "$T/secret.csv"
out=$(as_uid 65534 "$CTL" run "$T/read.py" --input "$T/secret.csv" 2>&1)
expect_eq "an unreadable path: anvilctl's exit (usage)" 125 "$?"
expect_eq "an unreadable path: what it says" "anvilctl: --input $T/secret.csv: cannot open it: Permission denied" "$out"

# ---- a file truncated after it was sent ----
head -c $((64 * 1024 * 1024)) /dev/zero | tr '\0' 'a' >"$T/cut.csv"
chmod 644 "$T/cut.csv"
tool cut.py <<'PY'
import os, time
time.sleep(2)
n = 0
with open("inputs/cut.csv", "rb") as f:
    while chunk := f.read(1 << 20):
        n += len(chunk)
print("READ", n)
PY
"$CTL" run "$T/cut.py" --input "$T/cut.csv" --json >"$T/result.json" 2>"$T/ctl.err" &
ctl=$!
sleep 1
: >"$T/cut.csv"
wait $ctl || fail "the run over a file cut short: anvilctl exited $?: $(cat "$T/ctl.err")"
expect_eq "a file truncated after it was sent: status" ok "$(j .status)"
# Bind-mounted, the tool sees the file as it is now; copied (rootless), as it was when sent.
[ "$ROOT_SUP" = 1 ] && want="READ 0" || want="READ 67108864"
expect_eq "a file truncated after it was sent: what the tool read" "$want" "$(j .stdout)"
expect_serving

# ---- --max-input-bytes, on a supervisor of the test's own ----
start_sup own 100 --max-input-bytes 90
ANVIL_SOCKET="$T/own.sock" "$CTL" run "$T/read.py" --input "$T/sales.csv" --input "b.csv=$T/sales.csv" \
        --input "c.csv=$T/sales.csv" >"$T/out" 2>"$T/err"
expect_eq "inputs over --max-input-bytes: exit (refused)" 123 "$?"
expect_eq "inputs over --max-input-bytes: the message" "anvilctl: bad_request: run_request.inputs: 96 bytes of input files in all, over this supervisor's max_input_bytes of 90" "$(cat "$T/err")"
ANVIL_SOCKET="$T/own.sock" "$CTL" run "$T/read.py" --input "$T/sales.csv" --json >"$T/result.json" 2>"$T/err" ||
        fail "control: an input within --max-input-bytes: $(cat "$T/err")"
expect_eq "control: an input within --max-input-bytes" ok "$(j .status)"

# ---- direct mode (no user namespace, so no mount namespace): a file is copied from its fd
# into the run's inputs/, bounded by --max-input-bytes; a directory is refused ----
start_sup direct 200 --test-no-userns --test-no-python-layers --spares 1 --max-runs 2
ANVIL_SOCKET="$T/direct.sock" "$CTL" run "$T/read.py" --input "my sales.csv=$T/sales.csv" --json >"$T/result.json" \
        2>"$T/err" || fail "direct: a file input: $(cat "$T/err")"
expect_eq "direct: a file input" "ok my sales.csv: 'region,amount\\nnorth,10\\nsouth,32\\n'" "$(j '"\(.status) \(.stdout)"')"
ANVIL_SOCKET="$T/direct.sock" "$CTL" run "$T/dir.py" --input "$T/data/" >"$T/out" 2>"$T/err"
expect_eq "direct: a directory input: exit (refused)" 123 "$?"
expect_eq "direct: a directory input: the message" "anvilctl: bad_request: run_request.inputs[0].fd: input 'data': a directory input is bind-mounted from its fd, which a direct supervisor cannot do; send its files as inputs" "$(cat "$T/err")"

# ---- a copy in flight: other runs are served meanwhile, and a cancel ends it ----
# A file the jail's uid cannot read (0600) is copied as root too, as every input is rootless.
# The copy runs on the thread pool, in steps of 16 MiB; this supervisor pauses 500 ms before
# each (a test build's --test-copy-step-ms), so that 96 MiB take at least 3 s to copy. A run
# that needs no copy, asked for while the copy goes on, ends before it: on the loop, the copy
# would have held it (and every other run's events, timers and samples) until the copy's end.
start_sup copy 220 --test-copy-step-ms 500 --max-runs 4 --spares 0
head -c $((96 << 20)) /dev/zero | tr '\0' 'x' >"$T/slow.csv"
chmod 600 "$T/slow.csv"
tool size.py <<'PY'
import os
print("SIZE", os.path.getsize("inputs/slow.csv"))
PY
tool quick.py <<<'print("quick")'
copying() { grep -c 'started for .*(copying 1 inputs)' "$T/copy.log" || true; }
wait_copying() { # N: until N runs have begun to copy
        local i
        for i in $(seq 100); do [ "$(copying)" -ge "$1" ] && return 0; sleep 0.1; done
        fail "no run began to copy its input: $(tail -5 "$T/copy.log")"
}
ANVIL_SOCKET="$T/copy.sock" "$CTL" run "$T/size.py" --input "$T/slow.csv" --json >"$T/slow.json" 2>"$T/slow.err" &
slow_pid=$!
wait_copying 1
ANVIL_SOCKET="$T/copy.sock" "$CTL" run "$T/quick.py" --json >"$T/quick.json" 2>"$T/quick.err" ||
        fail "a run during the copy: $(cat "$T/quick.err")"
expect_eq "a run asked for during another's copy: status" ok "$(jq -r .status "$T/quick.json")"
copied=$(grep -c 'inputs copied' "$T/copy.log" || true)
expect_eq "it ended before the copy did (runs that ended their copy)" 0 "$copied"
wait "$slow_pid" || fail "the run with the copied input: $(cat "$T/slow.err")"
expect_eq "the run with the copied input: status, what it read" "ok SIZE $((96 << 20))" \
        "$(jq -r '"\(.status) \(.stdout | rtrimstr("\n"))"' "$T/slow.json")"
# A client gone while its input is copied: the copy stops at its next step, no jail is taken.
ANVIL_SOCKET="$T/copy.sock" "$CTL" run "$T/size.py" --input "$T/slow.csv" --json >/dev/null 2>&1 &
gone_pid=$!
wait_copying 2
kill -KILL "$gone_pid"
wait "$gone_pid" 2>/dev/null
for i in $(seq 40); do grep -q 'killed while its inputs were copied' "$T/copy.log" && break; sleep 0.1; done
grep -q 'killed while its inputs were copied' "$T/copy.log" || fail "the copy went on after its client was gone"
echo "ok: a client gone during its input's copy: the run ended within $((i * 100)) ms, no jail taken"
ANVIL_SOCKET="$T/copy.sock" "$CTL" run "$T/quick.py" --json >"$T/quick.json" 2>"$T/quick.err" ||
        fail "a run after the cancelled copy: $(cat "$T/quick.err")"
expect_eq "a run after the cancelled copy: status" ok "$(jq -r .status "$T/quick.json")"
rm -f "$T/slow.csv"

# ---- 1 GiB of CSV, read by pandas in chunks ----
hwm() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
$PY - "$T/big.csv" <<'PY'
import sys
line = b"2024-05-01,north,widget,12.50,a fairly long free-text note to make the rows wide enough\n"
block = line * (1 << 14)
with open(sys.argv[1], "wb") as f:
    f.write(b"date,region,product,amount,note\n")
    n = 0
    while n < (1 << 30):
        f.write(block)
        n += len(block)
PY
chmod 644 "$T/big.csv"
tool big.py <<'PY'
import pandas as pd, resource
total, rows = 0.0, 0
for chunk in pd.read_csv("inputs/big.csv", usecols=["amount"], chunksize=1_000_000):
    total += chunk["amount"].sum()
    rows += len(chunk)
print(f"ROWS {rows} TOTAL {total:.2f} TOOL_MAXRSS_KB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}")
PY
sup_before=$(hwm "$ANVIL_E2E_SUP_PID")
bro_before=$(hwm "$ANVIL_E2E_BRO_PID")
t0=$EPOCHREALTIME
run_json "$T/big.py" --input "$T/big.csv" --timeout 600 --cpu 600 --memory 2048
secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
sup_after=$(hwm "$ANVIL_E2E_SUP_PID")
bro_after=$(hwm "$ANVIL_E2E_BRO_PID")
expect_eq "1 GiB of CSV: status" ok "$(j .status)"
rows=$(( (1 << 30) / 88 ))
[ $(( (1 << 30) % (88 << 14) )) = 0 ] || rows=$(( ( (1 << 30) / (88 << 14) + 1) << 14 ))
expect_match "1 GiB of CSV: the rows pandas read" "^ROWS $rows TOTAL " "$(j .stdout)"
echo "    observed: $(stat -c %s "$T/big.csv") bytes in ${secs} s (the run's own wall: $(j .wall_ms) ms);" \
        "the tool's peak RSS $(j .stdout | sed 's/.*TOOL_MAXRSS_KB //') KiB;" \
        "supervisor VmHWM ${sup_before} -> ${sup_after} KiB; broker VmHWM ${bro_before} -> ${bro_after} KiB"
# Neither daemon holds the file: their peaks grow by less than 16 MiB, whatever its size.
[ $((sup_after - sup_before)) -lt 16384 ] || fail "the supervisor's peak grew by $((sup_after - sup_before)) KiB"
[ $((bro_after - bro_before)) -lt 16384 ] || fail "the broker's peak grew by $((bro_after - bro_before)) KiB"
echo "ok: neither daemon's peak memory grew with the 1 GiB input"
rm -f "$T/big.csv"
expect_serving
