# Inputs: readable in the jail at ./inputs/NAME with exactly the bytes given (sha256 in the
# tool = sha256 on the host), and not writable (write, append, create, remove, rename, chmod
# all fail; the host's copy is unchanged). Control: the same tool on the host, over a
# scratch ./inputs, does every one of those writes. anvilctl refuses two inputs with the same
# name and a name starting with '.' (exit 125, one line).
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"

# Binary input with every byte value (NUL, invalid UTF-8, CR, LF), and the sample CSV.
$PY -c 'import os, sys; sys.stdout.buffer.write(bytes(range(256)) * 64 + os.urandom(100000))' >"$T/blob.bin"
cp "$TOP/data/sales.csv" "$T/sales.csv"
blob_sum=$(sha256sum <"$T/blob.bin")

tool inputs.py <<'PY'
import hashlib, os
for name in sorted(os.listdir("inputs")):
    with open(f"./inputs/{name}", "rb") as f:
        data = f.read()
    print(f"SHA {name} {len(data)} {hashlib.sha256(data).hexdigest()}")
attempts = [
    ("write", lambda: open("./inputs/sales.csv", "w").write("x")),
    ("append", lambda: open("./inputs/sales.csv", "a").write("x")),
    ("r+", lambda: open("./inputs/blob.bin", "r+b").write(b"x")),
    ("create", lambda: open("./inputs/new.txt", "w").write("x")),
    ("chmod", lambda: os.chmod("./inputs/sales.csv", 0o666)),
    ("rename", lambda: os.rename("./inputs/blob.bin", "./inputs/renamed.bin")),
    ("mkdir", lambda: os.mkdir("./inputs/sub")),
    ("remove", lambda: os.remove("./inputs/sales.csv")),
]
for what, attempt in attempts:
    try:
        attempt()
        print(f"DID {what}")
    except OSError as e:
        print(f"REFUSED {what}: {type(e).__name__}: {e}")
PY
bare_json "$T/inputs.py" --input "$T/blob.bin" --input "$T/sales.csv"
expect_eq status ok "$(j .status)"
for f in blob.bin sales.csv; do
        expect_eq "$f as the tool read it (size, sha256)" \
                "SHA $f $(stat -c %s "$T/$f") $(sha256sum "$T/$f" | cut -d' ' -f1)" "$(j .stdout | grep "^SHA $f ")"
done
expect_eq "inputs the tool saw" 2 "$(j .stdout | grep -c '^SHA ')"
j .stdout | grep '^REFUSED' | sed 's/^/    /'
expect_eq "writes to inputs that succeeded" "" "$(j .stdout | grep '^DID' | paste -sd' ')"
expect_eq "writes to inputs refused" 8 "$(j .stdout | grep -c '^REFUSED [a-z+]*: [A-Za-z]*Error: ')"
# anvilctl passed each input as an fd (docs/cli.md "Inputs"): the tool saw the host's own
# files, through a read-only mount (or, rootless, copies); they are unchanged, and the run's
# directory keeps nothing of them once it has ended (copies may be gigabytes).
cmp -s "$T/sales.csv" "$TOP/data/sales.csv" || fail "the host's sales.csv changed"
expect_eq "the host's blob.bin (sha256)" "$blob_sum" "$(sha256sum <"$T/blob.bin")"
rundir=$(dirname "$(j .artifacts_dir)")
for _ in $(seq 50); do [ -e "$rundir/inputs" ] || break; sleep 0.1; done
[ -e "$rundir/inputs" ] && fail "the run's directory still holds its inputs: $(ls "$rundir/inputs")"
echo "ok: the inputs on the host are unchanged, and the run's directory keeps none of them"

# Control: on the host, in a scratch directory, the same tool does all eight.
mkdir -p "$T/control/inputs"
cp "$T/blob.bin" "$T/sales.csv" "$T/control/inputs/"
out=$(cd "$T/control" && $PY "$T/inputs.py" 2>&1) || fail "control: the tool failed on the host: $out"
expect_eq "control: writes that succeeded on the host" 8 "$(grep -c '^DID' <<<"$out")"

# anvilctl refuses what the supervisor would: two inputs named alike, a hidden name.
mkdir "$T/a" "$T/b"
echo one >"$T/a/data.csv"
echo two >"$T/b/data.csv"
cp "$T/sales.csv" "$T/.hidden.csv"
usage_refused() { # what, anvilctl run arguments...
        local what=$1
        shift
        "$CTL" run "$@" >"$T/out" 2>"$T/err"
        local rc=$?
        expect_eq "$what: exit code (usage)" 125 "$rc"
        expect_eq "$what: lines on stderr" 1 "$(wc -l <"$T/err")"
        expect_eq "$what: nothing on stdout" "" "$(cat "$T/out")"
        echo "    stderr: $(cat "$T/err")"
}
usage_refused "two inputs named data.csv" "$T/inputs.py" --input "$T/a/data.csv" --input "$T/b/data.csv"
expect_match "two inputs named data.csv: the message" "data\.csv" "$(cat "$T/err")"
usage_refused "an input named .hidden.csv" "$T/inputs.py" --input "$T/.hidden.csv"
expect_match "an input named .hidden.csv: the message" "\.hidden\.csv" "$(cat "$T/err")"
# Control: each of those files alone is accepted.
bare_json "$T/inputs.py" --input "$T/a/data.csv"
expect_eq "control: one data.csv" "SHA data.csv 4 $(sha256sum "$T/a/data.csv" | cut -d' ' -f1)" "$(j .stdout | grep '^SHA')"
cp "$T/.hidden.csv" "$T/visible.csv"
bare_json "$T/inputs.py" --input "$T/visible.csv"
expect_eq "control: the same file named visible.csv" ok "$(j .status)"
