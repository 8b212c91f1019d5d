# The broker stores each RunResult as JSON under its state dir, results/<run_id>.json, equal
# (as JSON, keys sorted) to what `anvilctl run --json` printed for that run; stored before
# the result is relayed, so it is there when anvilctl returns; not readable by other users.
# Controls: a run made straight to the supervisor (not through the broker) is not stored
# there, and one run's stored result does not equal another's output.
. "$(dirname "$0")/lib.sh"
RES="$ANVIL_E2E_STATE/broker/results"

check_stored() { # what: the last result ($T/result.json) is stored, equal
        local id f
        id=$(j .run_id)
        f="$RES/$id.json"
        [ -f "$f" ] || fail "$1: $f is not there when anvilctl has returned (results/: $(ls "$RES" 2>&1 | head -5 | paste -sd' '))"
        jq -S . "$f" >"$T/stored.sorted" || fail "$1: $f is not JSON"
        jq -S . "$T/result.json" >"$T/printed.sorted"
        if ! cmp -s "$T/stored.sorted" "$T/printed.sorted"; then
                diff "$T/printed.sorted" "$T/stored.sorted" | head -20
                fail "$1: $f differs from anvilctl's --json output"
        fi
        echo "ok: $1: results/$id.json equals the --json output"
        local mode
        mode=$(stat -c %a "$f")
        [ $((8#$mode & 8#007)) -eq 0 ] || fail "$1: $f is readable by other users (mode $mode)"
        echo "ok: $1: stored with mode $mode"
}

tool hello.py <<'PY'
print("hello, store")
with open("artifacts/a.txt", "w") as f:
    f.write("a\n")
PY
run_json "$T/hello.py"
expect_eq "first run's status" ok "$(j .status)"
check_stored "an ok run"
first_id=$(j .run_id)
cp "$T/result.json" "$T/first.json"

tool keyerror.py <<'PY'
print({}["missing"])
PY
run_json "$T/keyerror.py"
expect_eq "second run's status" error "$(j .status)"
check_stored "a failing run"
[ "$(j .run_id)" != "$first_id" ] || fail "the two runs have the same run_id"
[ -f "$RES/$first_id.json" ] || fail "the first run's stored result is gone after the second run"

dmode=$(stat -c %a "$RES")
[ $((8#$dmode & 8#007)) -eq 0 ] || fail "$RES is open to other users (mode $dmode)"
echo "ok: results/ has mode $dmode"
expect_eq "temporary files left in results/" "" "$(find "$RES" -name '*.tmp' | head -3)"

# Controls.
ANVIL_SOCKET="$ANVIL_SUP_SOCKET" run_json "$T/hello.py"
expect_eq "control: a run straight to the supervisor" ok "$(j .status)"
[ ! -e "$RES/$(j .run_id).json" ] || fail "control: a run that did not go through the broker is stored in $RES"
echo "ok: control: a run that did not go through the broker is not stored"
if cmp -s <(jq -S . "$RES/$first_id.json") <(jq -S . "$T/result.json"); then
        fail "control: the first run's stored result equals another run's output: the comparison proves nothing"
fi
echo "ok: control: the first run's stored result differs from another run's output"
