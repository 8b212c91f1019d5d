# Artifacts: regular files are listed with paths relative to artifacts/; links and FIFOs
# are never followed or copied, each reported by an "artifact_skipped" event (where Landlock is
# in force a FIFO cannot be made at all: that refusal is checked instead); the files cap
# (64 MiB by default) refuses what goes over it with an OSError in the tool (in many files or
# in one) and says so in the result, and says nothing of the kind when exactly the cap was
# written and nothing refused. Control: a 10 MB artifact is listed whole, with the right sha256.
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"
CAP=67108864

tool kinds.py <<'PY'
import os
os.makedirs("artifacts/sub/dir")
with open("artifacts/sub/dir/a.txt", "w") as f:
    f.write("hello from a.txt\n")
os.symlink("/etc/passwd", "artifacts/link")
os.symlink("/etc", "artifacts/dirlink")
os.symlink("../../sub/dir/a.txt", "artifacts/sub/inner")
try:
    os.mkfifo("artifacts/fifo")
except PermissionError as e:
    print("mkfifo refused:", e.errno)
print(" ".join(sorted(os.listdir("artifacts"))))
PY
bare_json "$T/kinds.py"
expect_eq status ok "$(j .status)"
if [ "$(j '[.isolation.mechanisms[] | select(startswith("landlock ABI"))] | length')" = 1 ]; then
        # Landlock grants no fifos, device nodes or socket files, even in artifacts/.
        expect_eq "the fifo, refused by landlock" "mkfifo refused: 13" "$(j .stdout | head -1)"
        expect_eq "what the tool made" "dirlink link sub" "$(j .stdout | sed -n 2p)"
        expect_eq "the refusal, explained (where the kernel's audit can be read)" \
                "$(explained "blocked at kernel: create a fifo in '/work/artifacts' (device nodes, fifos and socket files denied, landlock)")" \
                "$(j '.events[] | select(.layer == "landlock") | .message')"
        kinds=(link dirlink sub/inner)
else
        expect_eq "what the tool made" "dirlink fifo link sub" "$(j .stdout)"
        kinds=(link dirlink fifo sub/inner)
fi
expect_eq "artifacts listed" "sub/dir/a.txt" "$(j '[.artifacts[].path] | join(" ")')"
expect_eq "size of sub/dir/a.txt" 17 "$(j '.artifacts[0].bytes')"
skipped() { # path: the message of its artifact_skipped event
        j ".events[] | select(.kind == \"artifact_skipped\" and .op == \"$1\") | .message"
}
for p in "${kinds[@]}"; do
        expect_eq "skipped: $p" "artifact '$p' is not a regular file and is not listed" "$(skipped "$p")"
done
expect_eq "artifact_skipped events" "${#kinds[@]}" "$(j '[.events[] | select(.kind == "artifact_skipped")] | length')"
expect_eq "their layer" supervisor "$(j '[.events[] | select(.kind == "artifact_skipped") | .layer] | unique | join(" ")')"
dir=$(j .artifacts_dir)
[ -d "$dir" ] || fail "artifacts_dir $dir is not there"
expect_eq "host copy of sub/dir/a.txt" "hello from a.txt" "$(cat "$dir/sub/dir/a.txt")"
expect_eq "sha256 of the host copy" "$(j '.artifacts[0].sha256')" "$(sha256sum "$dir/sub/dir/a.txt" | cut -d' ' -f1)"
expect_eq "entries under artifacts_dir that are neither files nor directories" "" \
        "$(find "$dir" -mindepth 1 ! -type f ! -type d)"
expect_eq "files under artifacts_dir" "sub/dir/a.txt" "$(cd "$dir" && find . -type f | sed 's|^\./||' | sort | paste -sd' ')"
[ ! -e "$dir/link" ] && [ ! -L "$dir/link" ] || fail "the link was copied to $dir/link"
if grep -rqsF "$(head -1 /etc/passwd)" "$dir"; then
        fail "the host's /etc/passwd was copied under $dir"
fi
echo "ok: the link was not followed: nothing of the host's /etc/passwd under $dir"

# Over the cap, in several files: ENOSPC in the tool, and an event says so.
tool over.py <<'PY'
chunk = b"y" * (1024 * 1024)
written = 0
try:
    for k in range(8):
        with open(f"artifacts/part{k}.bin", "wb") as f:
            for _ in range(10):
                f.write(chunk)
                written += len(chunk)
    print(f"wrote all {written} bytes")
except OSError as e:
    print(f"refused after {written} bytes: {type(e).__name__}: {e}")
PY
run_json "$T/over.py"
expect_eq "80 MB in 10 MB files: status" ok "$(j .status)"
expect_match "80 MB in 10 MB files: the tool's error" '^refused after [0-9]+ bytes: OSError: \[Errno 28\] No space left on device$' "$(j .stdout)"
expect_eq "80 MB in 10 MB files: the cap event" "artifacts: the files cap of $CAP bytes was reached; any write past it was refused" \
        "$(j '.events[] | select(.kind == "artifacts_full") | .message')"
total=$(j '[.artifacts[].bytes] | add')
[ "$total" -le "$CAP" ] || fail "artifacts listed total $total bytes, over the cap"
echo "ok: listed artifacts total $total bytes, within the cap"

# Over the cap in one file: still an OSError the tool can catch (no space, or file too large),
# never the interpreter killed by a signal. Failures from here on are reported at the end, so
# that the checks after them still run.
late=()
late_fail() {
        echo "NOT OK (reported at the end): $*"
        late+=("$*")
}
tool over1.py <<'PY'
chunk = b"z" * (1024 * 1024)
written = 0
try:
    with open("artifacts/big.bin", "wb") as f:
        for _ in range(80):
            f.write(chunk)
            f.flush()
            written += len(chunk)
    print(f"wrote all {written} bytes")
except OSError as e:
    print(f"refused after {written} bytes: {type(e).__name__}: {e}")
PY
run_json "$T/over1.py"
if [ "$(j .signal)" != null ]; then
        late_fail "80 MB in one file: the interpreter was killed by $(j .signal) (status $(j .status), stdout '$(j .stdout)', events: $(j '[.events[].kind] | join(" ")')) instead of getting an OSError"
elif ! [[ "$(j .stdout)" =~ ^refused\ after\ [0-9]+\ bytes:\ OSError:\ \[Errno\ (28|27)\]\ (No\ space\ left\ on\ device|File\ too\ large)$ ]]; then
        late_fail "80 MB in one file: the tool did not get ENOSPC or EFBIG: status $(j .status), stdout '$(j .stdout)'"
else
        expect_eq "80 MB in one file: status" ok "$(j .status)"
        echo "ok: 80 MB in one file: $(j .stdout)"
fi
expect_eq "80 MB in one file: the cap event" "artifacts: the files cap of $CAP bytes was reached; any write past it was refused" \
        "$(j '.events[] | select(.kind == "artifacts_full") | .message')"

# Exactly the cap, in one file: the cap was reached, nothing past it was written. The event
# says only that (whether a write was refused cannot be seen from outside the jail).
tool exact.py <<PY
with open("artifacts/exact.bin", "wb") as f:
    f.write(b"e" * $CAP)
print("wrote $CAP bytes")
PY
run_json "$T/exact.py"
expect_eq "exactly $CAP bytes: status" ok "$(j .status)"
expect_eq "exactly $CAP bytes: listed" "exact.bin $CAP" "$(j '.artifacts[] | "\(.path) \(.bytes)"')"
expect_eq "exactly $CAP bytes: the cap event" "artifacts: the files cap of $CAP bytes was reached; any write past it was refused" \
        "$(j '.events[] | select(.kind == "artifacts_full") | .message')"

# Control: 10 MB, under the cap, is listed whole with the right hash.
tool ten.py <<'PY'
with open("artifacts/ten.bin", "wb") as f:
    f.write(bytes(range(256)) * 40960)
PY
run_json "$T/ten.py"
expect_eq "control: status" ok "$(j .status)"
expect_eq "control: listed" "ten.bin 10485760" "$(j '.artifacts[] | "\(.path) \(.bytes)"')"
want=$($PY -c 'import hashlib; print(hashlib.sha256(bytes(range(256)) * 40960).hexdigest())')
expect_eq "control: sha256" "$want" "$(j '.artifacts[0].sha256')"
expect_eq "control: sha256 of the host copy" "$want" "$(sha256sum "$(j .artifacts_dir)/ten.bin" | cut -d' ' -f1)"
expect_eq "control: no cap event" 0 "$(j '[.events[] | select(.kind == "artifacts_full")] | length')"
[ ${#late[@]} -eq 0 ] || fail "$(printf '%s; ' "${late[@]}")"
