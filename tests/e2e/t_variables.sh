. "$(dirname "$0")/lib.sh"
cat >"$T/vars.json" <<'JSON'
{"n": 3, "s": "héllo ✓ 𝄞", "l": [1, 2.5, "x", null, true], "d": {"a": {"b": [1, {"c": "é"}]}}}
JSON
tool in.py <<'PY'
import pandas as pd
print(n, s, l, d)
df = pd.DataFrame({"a": [1]})
def f(): pass
st = {1, 2}
total = n * 2
PY
run_json "$T/in.py" --variables "$T/vars.json"
cat "$T/result.json" | jq '{status, stdout, stderr, variables, variables_dropped, final_answer, events: [.events[] | {layer, kind, message}]}'
