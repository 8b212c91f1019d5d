# A tool tries to write to host paths: a file this test made in its own temp dir (the same
# absolute path exists on the host), /etc, /usr, /root and ./inputs. Every write fails in the
# jail, and the host's files are untouched or not created. Control: the very same tool run
# on the host by $PY, over a scratch copy of those paths, does write every one of them.
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"

MARKERS=(/etc/anvil-e2e-marker /usr/anvil-e2e-marker /root/anvil-e2e-marker)
for m in "${MARKERS[@]}"; do
        [ ! -e "$m" ] || fail "$m exists before the test (left over from an earlier run?): remove it first"
done
mkdir "$T/host"
echo original >"$T/host/target"
before=$(stat -c '%i %s %Y' "$T/host/target")

# The tool: PREFIX is empty in the jail; the control sets it to a scratch directory.
cat >"$T/write.py" <<PY
import errno, os
PREFIX = ""
TARGET = "$T/host/target"
paths = [PREFIX + TARGET, PREFIX + "/etc/anvil-e2e-marker", PREFIX + "/usr/anvil-e2e-marker",
         PREFIX + "/root/anvil-e2e-marker", "./inputs/x"]
for p in paths:
    try:
        with open(p, "w") as f:
            f.write("written by the tool\n")
        print(f"WROTE {p}")
    except OSError as e:
        print(f"FAIL {p}: {errno.errorcode.get(e.errno)}: {type(e).__name__}: {e}")
# The same absolute path made by the tool itself lands in the jail's private /tmp.
try:
    os.makedirs(os.path.dirname(PREFIX + TARGET), exist_ok=True)
    with open(PREFIX + TARGET, "w") as f:
        f.write("written by the tool\n")
    print(f"PRIVATE wrote {PREFIX + TARGET}")
except OSError as e:
    print(f"PRIVATE failed: {type(e).__name__}: {e}")
PY

echo "input" >"$T/data.csv"
bare_json "$T/write.py" --input "$T/data.csv"
expect_eq status ok "$(j .status)"
echo "the tool's output in the jail:"
printf "%s\n" "$(j .stdout)" | sed "s/^/    /"
for p in "$T/host/target" "${MARKERS[@]}" ./inputs/x; do
        line=$(j .stdout | grep -F "FAIL $p: ") || fail "the write to $p did not fail in the jail: $(j .stdout | grep -F " $p" | head -1)"
        expect_match "write to $p in the jail" '^FAIL [^ ]+: (ENOENT|EROFS|EACCES|EPERM): (FileNotFoundError|OSError|PermissionError): ' "$line"
done
expect_eq "writes that succeeded in the jail" 0 "$(j .stdout | grep -c '^WROTE')"
expect_eq "the tool's own copy of the path" "PRIVATE wrote $T/host/target" "$(j .stdout | grep '^PRIVATE')"

# The host is untouched.
expect_eq "host target's content" original "$(cat "$T/host/target")"
expect_eq "host target's inode, size, mtime" "$before" "$(stat -c '%i %s %Y' "$T/host/target")"
for m in "${MARKERS[@]}"; do
        if [ -e "$m" ]; then
                rm -f "$m"
                fail "$m was created on the host"
        fi
done
echo "ok: ${MARKERS[*]} were not created on the host"
# The input was passed as an fd (docs/cli.md): the host's own file, unchanged, nothing made
# beside it; the run's directory keeps none of its inputs once it has ended.
expect_eq "the input on the host, unchanged" input "$(cat "$T/data.csv")"
[ ! -e "$T/x" ] || fail "$T/x was created beside the input"
rundir=$(dirname "$(j .artifacts_dir)")
for _ in $(seq 50); do [ -e "$rundir/inputs" ] || break; sleep 0.1; done
[ ! -e "$rundir/inputs" ] || fail "the run's directory still holds its inputs: $(ls "$rundir/inputs")"

# Control: the same tool on the host, over a scratch tree, writes all five.
C="$T/control"
mkdir -p "$C/etc" "$C/usr" "$C/root" "$C/inputs" "$C$T/host"
echo original >"$C$T/host/target"
sed "s|^PREFIX = \"\"$|PREFIX = \"$C\"|" "$T/write.py" >"$T/write_control.py"
grep -q "^PREFIX = \"$C\"$" "$T/write_control.py" || fail "control: could not set PREFIX"
out=$(cd "$C" && $PY "$T/write_control.py" 2>&1) || fail "control: the tool failed on the host: $out"
expect_eq "control: writes that succeeded on the host" 5 "$(grep -c '^WROTE' <<<"$out")"
expect_eq "control: scratch target's content" "written by the tool" "$(cat "$C$T/host/target")"
for f in etc usr root; do
        [ -f "$C/$f/anvil-e2e-marker" ] || fail "control: $C/$f/anvil-e2e-marker was not written"
done
[ -f "$C/inputs/x" ] || fail "control: $C/inputs/x was not written"
echo "ok: control: the same tool on the host wrote all five scratch paths"
