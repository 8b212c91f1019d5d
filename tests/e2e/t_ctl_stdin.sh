# `anvilctl run -`: the tool's source from stdin (a pipe, or a file redirected), within the
# bound of a file source (PROTO_SOURCE_MAX, 1 MiB): the same run as from the file, its exit
# status the tool's; over the bound, or not UTF-8, a usage error (125) that names the source
# "-", nothing sent. The controls: a source of exactly 1 MiB runs, and the same bytes as a
# file run alike.
. "$(dirname "$0")/lib.sh"

tool io.py <<'PY'
import sys
print("from stdin", open("inputs/a.csv").read().strip())
sys.exit(7)
PY
echo "x,1" >"$T/a.csv"
"$CTL" run - --input "$T/a.csv" <"$T/io.py" >"$T/human" 2>"$T/err"
expect_eq "run - < io.py: exit status (the tool's 7)" 7 "$?"
grep -qx '  stdout| from stdin x,1' "$T/human" || fail "run - < io.py: the tool's output: $(cat "$T/human")"
cat "$T/io.py" | "$CTL" run - --input "$T/a.csv" --json >"$T/result.json" 2>"$T/err"
expect_eq "cat io.py | run - --json: exit status" 7 "$?"
expect_eq "cat io.py | run - --json: the result" "error 7 from stdin x,1" "$(j '"\(.status) \(.exit_code) \(.stdout)"' | head -1)"
# The control: the file itself, the same result.
run_json "$T/io.py" --input "$T/a.csv"
expect_eq "control: run io.py: the same result" "error 7 from stdin x,1" "$(j '"\(.status) \(.exit_code) \(.stdout)"' | head -1)"
echo "ok: run - reads the source from stdin, as run io.py reads it from the file"

# The bound: 1 MiB (a comment, then a print) runs; one byte more is refused before sending.
max=$((1024 * 1024))
{ printf 'print("big")\n#'; head -c $((max - 15)) /dev/zero | tr '\0' 'x'; printf '\n'; } >"$T/max.py"
expect_eq "the largest source: its size" "$max" "$(stat -c %s "$T/max.py")"
"$CTL" run - --json <"$T/max.py" >"$T/result.json" 2>"$T/err"
expect_eq "run - of exactly 1 MiB: exit status" 0 "$?"
expect_eq "run - of exactly 1 MiB: the result" "ok big" "$(j '"\(.status) \(.stdout)"' | head -1)"
{ cat "$T/max.py"; printf '#'; } | ANVIL_SOCKET="$T/nothing.sock" "$CTL" run - >"$T/out" 2>"$T/err"
expect_eq "run - of 1 MiB + 1: exit status (usage, before connecting)" 125 "$?"
expect_eq "run - of 1 MiB + 1: the message" "anvilctl: - is larger than $max bytes" "$(cat "$T/err")"
expect_eq "run - of 1 MiB + 1: stdout" "" "$(cat "$T/out")"
# A source that never ends (a stream larger than any bound) is cut at the bound, not read whole.
timeout 20 "$CTL" run - </dev/zero >"$T/out" 2>"$T/err"
expect_eq "run - < /dev/zero: exit status" 125 "$?"
expect_eq "run - < /dev/zero: the message" "anvilctl: - is larger than $max bytes" "$(cat "$T/err")"
printf 'print("caf\xe9")\n' | "$CTL" run - >"$T/out" 2>"$T/err"
expect_eq "run - of Latin-1: exit status" 125 "$?"
expect_eq "run - of Latin-1: the message" "anvilctl: -: the tool's source must be UTF-8 text" "$(cat "$T/err")"
echo "ok: run - is bounded as a file source is, and refuses what is not UTF-8"
