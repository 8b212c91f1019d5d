# An agent's state between steps (DESIGN §8): variables in (the run request's JSON object,
# bound as globals before the tool's first line), variables out (what the tool left that JSON
# can hold, the rest named with its type and why), and final_answer(value). Each with the
# Python layers on (the suite's supervisor, through the broker) and off (bare_json): neither
# the pre-check nor the audit hook refuses them, and neither needs them. Malformed variables
# are refused before any tool code runs (no "started"), with an error frame bad_request that
# names the field; anvilctl's own checks of --variables come first. The helpers are no escape
# hatch: what final_answer and the collection run of the tool's is judged as the tool's.
. "$(dirname "$0")/lib.sh"
VR="$ANVIL_BUILD/tests/varsrun"
[ -x "$VR" ] || fail "$VR is missing: build it with 'make tests'"

# ---- variables in: every JSON type reaches the tool as Python's json makes it ----
cat >"$T/vars.json" <<'JSON'
{"n": 3, "big": 123456789012345678901234567890, "neg": -2.5, "s": "héllo ✓ 𝄞",
 "l": [1, 2.5, "x", null, true, false], "d": {"a": {"b": [1, {"c": "é"}]}}, "empty": {},
 "u": "\u00e9\n\t\"q\""}
JSON
want_in=$($PY -c 'import json; v = json.load(open("'"$T/vars.json"'")); print(repr(tuple(v.values())))')
tool in.py <<'PY'
print(repr((n, big, neg, s, l, d, empty, u)))
import pandas as pd
import json as _json  # private: never listed
total = n * 2
t = (1, 2)
names = ["é", "✓"]
nested = {"k": [1, {"z": None}], 1: "int keys become strings"}
df = pd.DataFrame({"a": [1, 2]})
def helper():
    return 1
class Thing:
    pass
st = {1, 2}
holder = {"inner": {1}}
nan = float("nan")
sum = 5
_private = 1
lam = lambda: 0
obj = Thing()
PY
# What the tool leaves, as Python's json on the host reads it.
want_out=$($PY -c '
import json
v = json.load(open("'"$T/vars.json"'"))
v.update(total=6, t=[1, 2], names=["é", "✓"], nested={"k": [1, {"z": None}], "1": "int keys become strings"})
print(json.dumps(v, ensure_ascii=False, sort_keys=False))')
want_dropped="pd (module) is a module, not a value (import it again)
df (DataFrame) is not JSON-serialisable
helper (function) is a function or class, not a value (define it again)
Thing (type) is a function or class, not a value (define it again)
st (set) is not JSON-serialisable
holder (dict) is not JSON-serialisable (holds a value of type set)
nan (float) is not JSON-serialisable (Out of range float values are not JSON compliant)
sum (int) shadows a builtin
lam (function) is a function or class, not a value (define it again)
obj (Thing) is not JSON-serialisable"

# same_json WHAT EXPECTED ACTUAL: equal as JSON, keys in the same order.
same_json() {
        local a b
        a=$($PY -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1]), ensure_ascii=False))' "$2")
        b=$($PY -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1]), ensure_ascii=False))' "$3") ||
                fail "$1: not JSON: $3"
        expect_eq "$1" "$a" "$b"
}

in_and_out() { # RUN LABEL
        local run=$1 l=$2
        $run "$T/in.py" --variables "$T/vars.json"
        expect_eq "$l: status" ok "$(j .status)"
        expect_eq "$l: the tool saw every variable as json makes it" "$want_in" "$(j .stdout | head -1)"
        expect_eq "$l: bound before the tool's first line" "variables: 8 bound before the tool's first line" \
                "$(j '.events[] | select(.kind == "variables_bound") | .message')"
        expect_eq "$l: the bound event comes before started" "variables_bound started" \
                "$(j '[.events[] | select(.kind == "variables_bound" or .kind == "started") | .kind] | join(" ")')"
        same_json "$l: variables kept, in order" "$want_out" "$(j .variables)"
        expect_eq "$l: variables not kept, with type and why" "$want_dropped" \
                "$(j '.variables_dropped[] | "\(.name) (\(.type)) \(.reason)"')"
        expect_match "$l: the variables event" "^variables: 12 kept \([0-9]+ bytes of JSON\), 10 not kept$" \
                "$(j '.events[] | select(.kind == "variables") | .message')"
        expect_eq "$l: no final answer" null "$(j .final_answer)"
        # The agent's next step: what was kept goes back in as it came out.
        j .variables >"$T/next.json"
        tool next.py <<'PY'
print(total, t, names, nested["1"], type(big).__name__)
PY
        $run "$T/next.py" --variables "$T/next.json"
        expect_eq "$l: next step: status" ok "$(j .status)"
        expect_eq "$l: next step: the variables of the step before" "6 [1, 2] ['é', '✓'] int keys become strings int" \
                "$(j .stdout)"
        same_json "$l: next step: kept again, unchanged" "$want_out" "$(j .variables)"
        expect_eq "$l: next step: nothing dropped" 0 "$(j '.variables_dropped | length')"
}
in_and_out run_json "layers on"
in_and_out bare_json "layers off"

# A variable is data: the pre-check cannot see what it holds, the audit hook judges what the
# tool does with it.
echo '{"p": "/etc/passwd"}' >"$T/path.json"
tool path.py <<'PY'
print(open(p).read())
PY
run_json "$T/path.py" --variables "$T/path.json"
expect_eq "a path in a variable: status" blocked "$(j .status)"
expect_eq "a path in a variable: refused at the open" \
        "blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)" \
        "$(j '.events[] | select(.layer == "audit") | .message')"

# ---- a tool that raises still leaves its variables; a killed one leaves none ----
tool raises.py <<'PY'
a = 1
b = [a, "two"]
raise ValueError("after the variables")
c = 3
PY
tool killed.py <<'PY'
import os, struct, time
# A forged "variables" event and a forged final answer on fd 3 (the tool's word), then a
# kill: a killed tool's result carries neither.
def pk(o):
    if isinstance(o, dict):
        return bytes([0x80 | len(o)]) + b"".join(pk(k) + pk(v) for k, v in o.items())
    if isinstance(o, str):
        e = o.encode()
        return bytes([0xd9, len(e)]) + e
    return bytes([o])
for kind, field, value in (("variables", "variables", '{"forged":1}'), ("final_answer", "final_answer", '"forged"')):
    f = pk({"v": 1, "type": "runner_event", "event": {"t_ms": 0, "layer": "runner", "kind": kind}, field: value})
    os.write(3, struct.pack(">I", len(f)) + f)
x = 1
print("forged", flush=True)
time.sleep(30)
PY
ends() { # RUN LABEL
        local run=$1 l=$2
        $run "$T/raises.py"
        expect_eq "$l: a tool that raises: status" error "$(j .status)"
        expect_eq "$l: a tool that raises: its exception" "ValueError: after the variables" \
                "$(j '.events[] | select(.kind == "exception") | .message')"
        same_json "$l: a tool that raises: the variables it had" '{"a":1,"b":[1,"two"]}' "$(j .variables)"
        $run "$T/killed.py" --timeout 2
        expect_eq "$l: killed: status" "killed killed: timeout" "$(j '"\(.status) \(.killed)"')"
        expect_eq "$l: killed: it ran, and forged" "forged" "$(j .stdout)"
        expect_eq "$l: killed: the forged events are in the trace" "variables final_answer" \
                "$(j '[.events[] | select(.kind == "variables" or .kind == "final_answer") | .kind] | join(" ")')"
        expect_eq "$l: killed: no variables, no final answer" "null null 0" \
                "$(j '"\(.variables) \(.final_answer) \(.variables_dropped | length)"')"
}
ends run_json "layers on"
ends bare_json "layers off"

# ---- final_answer ----
tool fa.py <<'PY'
x = 41
def main():
    final_answer({"answer": x + 1, "unit": "€"})
    print("not reached")
main()
print("not reached either")
PY
tool fa_twice.py <<'PY'
try:
    final_answer(1)
except BaseException as e:  # a tool that catches the exit: the last answer is kept
    print(type(e).__name__, isinstance(e, SystemExit), e.code)
from anvil import final_answer as fa
fa("second")
PY
tool fa_thread.py <<'PY'
import threading
def worker():
    final_answer("from a thread")
    print("not reached in the thread")
t = threading.Thread(target=worker)
t.start()
t.join()
print("the main thread goes on")
PY
tool fa_set.py <<'PY'
final_answer({1, 2})
PY
tool fa_nested.py <<'PY'
answer = {"a": [{1}]}
final_answer(answer)
PY
tool fa_inf.py <<'PY'
final_answer([float("inf")])
PY
tool fa_large.py <<'PY'
final_answer("x" * 300000)
PY
tool fa_kw.py <<'PY'
final_answer(answer={"by": "keyword"})
PY
tool fa_value_kw.py <<'PY'
final_answer(value=[1, 2])
PY
tool fa_two.py <<'PY'
final_answer(1, 2)
PY
tool fa_none.py <<'PY'
final_answer()
PY
tool fa_other_kw.py <<'PY'
final_answer(result=3)
PY
final() { # RUN LABEL
        local run=$1 l=$2
        $run "$T/fa.py"
        expect_eq "$l: final_answer: status and exit code" "ok 0" "$(j '"\(.status) \(.exit_code)"')"
        expect_eq "$l: final_answer: the value" '{"answer":42,"unit":"€"}' "$(j .final_answer)"
        expect_eq "$l: final_answer: the tool ended there" "" "$(j .stdout)"
        expect_eq "$l: final_answer: the event" "final answer recorded ($(printf '%s' '{"answer":42,"unit":"€"}' | wc -c) bytes of JSON)" \
                "$(j '.events[] | select(.kind == "final_answer") | .message')"
        expect_eq "$l: final_answer: no exception" 0 "$(j '[.events[] | select(.kind == "exception")] | length')"
        same_json "$l: final_answer: the variables too" '{"x":41}' "$(j .variables)"
        $run "$T/fa_twice.py"
        expect_eq "$l: final_answer twice: status" ok "$(j .status)"
        expect_eq "$l: final_answer twice: the exit it raised" "FinalAnswer True 0" "$(j .stdout)"
        expect_eq "$l: final_answer twice: the last is kept" '"second"' "$(j .final_answer)"
        $run "$T/fa_thread.py"
        expect_eq "$l: final_answer in a thread: it ends that thread only" "ok the main thread goes on" \
                "$(j '"\(.status) \(.stdout)"')"
        expect_eq "$l: final_answer in a thread: recorded" '"from a thread"' "$(j .final_answer)"
        $run "$T/fa_kw.py"
        expect_eq "$l: final_answer(answer=...): status and value" 'ok {"by":"keyword"}' "$(j '"\(.status) \(.final_answer)"')"
        $run "$T/fa_value_kw.py"
        expect_eq "$l: final_answer(value=...): status and value" 'ok [1,2]' "$(j '"\(.status) \(.final_answer)"')"
        for name in fa_two fa_none fa_other_kw; do
                $run "$T/$name.py"
                expect_eq "$l: $name: a clear error, no answer" \
                        "error TypeError: final_answer takes one value: final_answer(value) or final_answer(answer=value) null" \
                        "$(j '"\(.status) \(.events[] | select(.kind == "exception") | .message) \(.final_answer)"')"
        done
        local c msg
        for c in "fa_set|TypeError: final_answer: the value (set) is not JSON-serialisable" \
                "fa_nested|TypeError: final_answer: the value (dict) is not JSON-serialisable (holds a value of type set)" \
                "fa_inf|TypeError: final_answer: the value (list) is not JSON-serialisable (Out of range float values are not JSON compliant)" \
                "fa_large|ValueError: final_answer: the value's JSON is 300002 bytes, over the limit of 262144"; do
                IFS='|' read -r name msg <<<"$c"
                $run "$T/$name.py"
                expect_eq "$l: $name: status" error "$(j .status)"
                expect_eq "$l: $name: a clear error, at the tool's line" "$msg (line $(grep -c '' "$T/$name.py"))" \
                        "$(j '.events[] | select(.kind == "exception") | "\(.message) (line \(.line))"')"
                expect_eq "$l: $name: no final answer" null "$(j .final_answer)"
        done
}
final run_json "layers on"
final bare_json "layers off"

# The human output shows the final answer and the variables.
"$CTL" run "$T/fa.py" >"$T/human" 2>"$T/err" || fail "anvilctl run fa.py exited $?: $(cat "$T/err")"
grep -qxF 'final answer: {"answer":42,"unit":"€"}' "$T/human" || fail "no final answer line: $(cat "$T/human")"
grep -qxE 'variables kept \([0-9]+ bytes of JSON\): x' "$T/human" || fail "no variables line: $(cat "$T/human")"
echo "ok: human output: final answer and variables"

# ---- no escape hatch: what runs of the tool's inside final_answer and the collection is
# judged as the tool's, with the tool's line (the path comes in a variable, which the
# pre-check cannot see, so that the audit hook is the layer that answers) ----
tool fa_evil.py <<'PY'
class L(list):
    def __iter__(self):
        open(p).read()
        return iter([1])
final_answer(L([1]))
PY
run_json "$T/fa_evil.py" --variables "$T/path.json"
expect_eq "final_answer of a list whose __iter__ reads /etc/passwd: status" blocked "$(j .status)"
expect_eq "final_answer of a list whose __iter__ reads /etc/passwd: refused as the tool's, at its line" \
        "blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS) (line 3)" \
        "$(j '.events[] | select(.layer == "audit") | "\(.message) (line \(.line))"')"
expect_eq "final_answer of a list whose __iter__ reads /etc/passwd: no answer" null "$(j .final_answer)"
tool vars_evil.py <<'PY'
class D(dict):
    def items(self):
        open(p).read()
        return super().items()
d = D(a=1)
print("done")
PY
run_json "$T/vars_evil.py" --variables "$T/path.json"
expect_eq "a variable whose items() reads /etc/passwd: refused while collected, as the tool's" \
        "blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS) (line 3)" \
        "$(j '.events[] | select(.layer == "audit") | "\(.message) (line \(.line))"')"
expect_eq "a variable whose items() reads /etc/passwd: not kept, and why" \
        "D (type) is a function or class, not a value (define it again)
d (D) is not JSON-serialisable (blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS))" \
        "$(j '.variables_dropped[] | "\(.name) (\(.type)) \(.reason)"')"
expect_eq "a variable whose items() reads /etc/passwd: the tool had ended well" "ok done" "$(j '"\(.status) \(.stdout)"')"
tool fa_attrs.py <<'PY'
print(type(final_answer).__name__, final_answer.__self__ is None or type(final_answer.__self__).__name__)
print(hasattr(final_answer, "__globals__"), hasattr(final_answer, "__code__"))
PY
bare_json "$T/fa_attrs.py"
expect_eq "final_answer is C: nothing of the runner's behind it" "builtin_function_or_method True
False False" "$(j .stdout)"

# ---- bounds out ----
{
        for i in $(seq 0 1004); do echo "v$i = $i"; done
        for i in $(seq 0 149); do echo "f$i = lambda: 0"; done
} >"$T/many.py"
run_json "$T/many.py"
expect_eq "1005 variables: 1000 kept" 1000 "$(j '.variables | fromjson | length')"
expect_eq "the 1001st is over the limit" "v1000 (int) is over the limit of 1000 variables" \
        "$(j '.variables_dropped[0] | "\(.name) (\(.type)) \(.reason)"')"
expect_eq "at most 100 listed" 100 "$(j '.variables_dropped | length')"
expect_match "all counted" "^variables: 1000 kept \([0-9]+ bytes of JSON\), 155 not kept$" \
        "$(j '.events[] | select(.kind == "variables") | .message')"
tool large.py <<'PY'
huge = list(range(2000000))
a = "a" * 600000
b = "b" * 600000
small = 1
deep = []
for _ in range(150):
    deep = [deep]
PY
run_json "$T/large.py"
expect_eq "large: kept" "a small" "$(j '.variables | fromjson | keys_unsorted | join(" ")')"
expect_eq "large: not kept" "huge (list) does not fit in the limit of 1048576 bytes for all variables
b (str) does not fit in the limit of 1048576 bytes for all variables
deep (list) is not JSON-serialisable (maximum recursion depth exceeded while encoding a JSON object)" \
        "$(j '.variables_dropped[] | "\(.name) (\(.type)) \(.reason)"')"
bytes=$(j .variables | tr -d '\n' | wc -c)
[ "$bytes" -le 1048576 ] || fail "the variables are $bytes bytes, over 1 MiB"
echo "ok: the variables are $bytes bytes, within 1 MiB"

# ---- malformed variables: refused before any tool code runs ----
tool marker.py <<'PY'
print("the tool ran")
PY
{
        printf '{'
        for i in $(seq 0 1000); do printf '"v%d":%d,' "$i" "$i"; done
        printf '"last":0}'
} >"$T/m-too-many.json"
printf '{"a":%s0%s}' "$(printf '[%.0s' $(seq 3000))" "$(printf ']%.0s' $(seq 3000))" >"$T/m-deep.json"
printf '{"a":%s}' "$(printf '1%.0s' $(seq 5000))" >"$T/m-bigint.json"
printf '[1, 2]' >"$T/m-array.json"
printf '"text"' >"$T/m-string.json"
printf '{"a": 1,}' >"$T/m-syntax.json"
printf '' >"$T/m-empty.json"
printf '{"1x": 1}' >"$T/m-ident.json"
printf '{"print": 1}' >"$T/m-builtin.json"
printf '{"final_answer": 1}' >"$T/m-helper.json"
printf '{"_x": 1}' >"$T/m-private.json"
printf '{"__builtins__": {}}' >"$T/m-dunder.json"
printf '{"class": 1}' >"$T/m-keyword.json"
printf '{"a": 1, "a": 2}' >"$T/m-dup.json"
printf '{"a": {"b": 1, "b": 2}}' >"$T/m-dup-nested.json"
printf '{"a": NaN}' >"$T/m-nan.json"
printf '{"a": -Infinity}' >"$T/m-inf.json"
printf '{"bad\\u0027 name": 1}' >"$T/m-quote.json"
# case|message (exact, or ~regex)
CASES=(
        "m-array|variables refused: expected a JSON object, got an array"
        "m-string|variables refused: expected a JSON object, got a string"
        "m-syntax|variables refused: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 9 (char 8))"
        "m-empty|variables refused: not valid JSON (Expecting value: line 1 column 1 (char 0))"
        "m-ident|variables refused: '1x' is not a Python identifier"
        "m-builtin|variables refused: 'print' shadows a builtin"
        "m-helper|variables refused: 'final_answer' shadows a builtin"
        "m-private|variables refused: '_x' starts with '_' (private and dunder names are not variables)"
        "m-dunder|variables refused: '__builtins__' starts with '_' (private and dunder names are not variables)"
        "m-keyword|variables refused: 'class' is a Python keyword"
        "m-dup|variables refused: the key 'a' appears more than once"
        "m-dup-nested|variables refused: the key 'b' appears more than once"
        "m-nan|variables refused: not valid JSON (NaN is not JSON)"
        "m-inf|variables refused: not valid JSON (-Infinity is not JSON)"
        "m-quote|variables refused: 'bad\\x27 name' is not a Python identifier"
        "m-too-many|variables refused: 1002 variables, over the limit of 1000"
        "m-deep|~^variables refused: not valid JSON \\(maximum recursion depth exceeded while decoding a JSON array"
        "m-bigint|~^variables refused: not valid JSON \\(Exceeds the limit \\(4300 digits\\) for integer string conversion"
)
refusals() { # SOCKET LABEL
        local sock=$1 l=$2 c name want out
        # Control: well-formed variables, the same tool: it runs.
        printf '{"a": 1}' >"$T/ok.json"
        out=$("$VR" "$sock" "$T/marker.py" "$T/ok.json") || fail "$l: varsrun (control) exited $?: $out"
        grep -qx "event runner started op=- message=tool started" <<<"$out" || fail "$l: control: no started: $out"
        expect_eq "$l: control: result" 'result status=ok variables={"a":1}' "$(tail -1 <<<"$out")"
        for c in "${CASES[@]}"; do
                IFS='|' read -r name want <<<"$c"
                out=$("$VR" "$sock" "$T/marker.py" "$T/$name.json") || fail "$l: $name: varsrun exited $?: $out"
                local err msg
                err=$(tail -1 <<<"$out")
                msg=${err#error code=bad_request field=run_request.variables message=}
                [ "$msg" != "$err" ] || fail "$l: $name: not a bad_request on run_request.variables: $err"
                if [ "${want:0:1}" = "~" ]; then
                        expect_match "$l: $name" "${want:1}" "$msg"
                else
                        expect_eq "$l: $name" "$want" "$msg"
                fi
                expect_eq "$l: $name: the runner's refusal is in the trace" "event runner refused op=variables message=$msg" \
                        "$(grep '^event runner refused' <<<"$out")"
                expect_eq "$l: $name: no tool code ran (no started)" "" "$(grep -E 'started|the tool ran' <<<"$out")"
        done
        # Over 1 MiB: refused by the strict decoder itself, before any run.
        $PY -c 'print("{\"a\": \"" + "x" * (1024 * 1024) + "\"}")' >"$T/m-large.json"
        out=$("$VR" "$sock" "$T/marker.py" "$T/m-large.json") || fail "$l: m-large: varsrun exited $?: $out"
        expect_match "$l: m-large: refused by the decoder, naming the field" \
                '^error code=bad_message field=run_request.variables message=run_request.variables: string of 1048586 bytes is over the limit of 1048576$' \
                "$out"
}
refusals "$ANVIL_SOCKET" "layers on"
refusals "$ANVIL_BARE_SOCKET" "layers off"

# anvilctl checks --variables first: a usage error (exit 125), one line, nothing sent.
ctl_refuses() { # WHAT FILE REGEX
        "$CTL" run "$T/marker.py" --variables "$2" >"$T/out" 2>"$T/err"
        expect_eq "anvilctl --variables $1: exit code (usage)" 125 "$?"
        expect_eq "anvilctl --variables $1: stdout" "" "$(cat "$T/out")"
        expect_match "anvilctl --variables $1: the message" "$3" "$(cat "$T/err")"
}
ctl_refuses "not an object" "$T/m-array.json" "^anvilctl: --variables .*: expected a JSON object$"
ctl_refuses "invalid JSON" "$T/m-syntax.json" "^anvilctl: --variables .*: not valid JSON \(line 1, column [0-9]+: "
ctl_refuses "a duplicate key" "$T/m-dup.json" "^anvilctl: --variables .*: not valid JSON \(.*duplicate object key"
ctl_refuses "over 1 MiB" "$T/m-large.json" "^anvilctl: --variables: .* is larger than 1048576 bytes \(the limit for variables\)$"
printf '{"a": "caf\xe9"}' >"$T/m-latin1.json"
ctl_refuses "not UTF-8" "$T/m-latin1.json" "^anvilctl: --variables .*: not UTF-8 text$"
ctl_refuses "missing" "$T/nonexistent.json" "^anvilctl: --variables: "
expect_serving
