# Every layer before the first untrusted byte (issue 9; runner/main.c, R6): the runner has
# Landlock seen enforced, its seccomp filter loaded and seen from outside by the supervisor
# (S6a), no_new_privs, the namespaces and only fds 0-3 before it decodes the request's
# variables (R6a) or parses its source for the pre-check (R6b). So:
#   - a tool the pre-check refuses has the full tier the probe reports, seccomp among its
#     mechanisms, and its events show the filter verified from outside before the runner's
#     first word and before anything of the pre-check's; nothing the decoding or parsing did
#     was a call the filter refuses (no seccomp event);
#   - malformed variables are still the request's fault, an error bad_request naming the field,
#     now refused under the filter;
#   - a legitimate tool with variables still runs, with the Python layers on and off.
# Before, the variables and the pre-check came before the filter was loaded: such a tool's
# tier was `namespaces`, and its run never got as far as the filter at all.
. "$(dirname "$0")/lib.sh"
VR="$ANVIL_BUILD/tests/varsrun"
[ -x "$VR" ] || fail "$VR is missing: build it with 'make tests'"

"$CTL" probe --json >"$T/probe.json" 2>"$T/ctl.err" || fail "anvilctl probe exited $?: $(cat "$T/ctl.err")"
TIER=$(jq -r .tier "$T/probe.json")
expect_match "the probe's tier has seccomp (or this test shows nothing)" "seccomp" "$TIER"
# What the runner says it saw, as the tier has it.
SAW="the seccomp filter \(seen by the supervisor\), no_new_privs, "
[[ "$TIER" = *namespaces* ]] && SAW+="user, pid, uts and network namespaces, "
SAW+="only fds 0-3"
[[ "$TIER" = *landlock* ]] && SAW="landlock ABI [0-9]+, $SAW"

# idx KIND [LAYER]: the index of the first event of that kind (and layer) in the last result, or
# -1.
idx() {
        j "[.events[] | [.layer, .kind]] | index([[\"${2:-runner}\", \"$1\"]]) // -1"
}
# before WHAT A B: index A is that of an event and comes before index B.
before() {
        [ "$2" -ge 0 ] && [ "$2" -lt "$3" ] || fail "$1: event $2 is not before event $3: $(j '[.events[] | "\(.layer)/\(.kind)"] | join(" ")')"
        echo "ok: $1 ($2 < $3)"
}
# filter_first LABEL: what every run of this test shows, the layers' events first.
filter_first() {
        local l=$1 v r
        v=$(idx seccomp_verified supervisor)
        r=$(idx in_force)
        before "$l: the filter verified from outside before the runner's first event" "$v" "$r"
        expect_eq "$l: the runner's first event is in_force" "in_force" \
                "$(j '[.events[] | select(.layer == "runner" or .layer == "precheck" or .layer == "audit")][0].kind')"
        expect_match "$l: what the supervisor saw" \
                "^seccomp filter seen in force from outside \(the runner's /proc status: Seccomp 2, Seccomp_filters [1-9][0-9]*, NoNewPrivs 1\); its listener watched$" \
                "$(j '.events[] | select(.kind == "seccomp_verified") | .message')"
        expect_match "$l: what the runner saw" \
                "^in force before the request's variables and source are read: $SAW$" \
                "$(j '.events[] | select(.kind == "in_force") | .message')"
        expect_eq "$l: the run's tier is the probe's" "$TIER" "$(j .isolation.tier)"
        expect_match "$l: its mechanisms name the filter, seen from outside" \
                "seccomp filter, refusals explained by the supervisor \(the runner's /proc status: Seccomp 2" \
                "$(j '.isolation.mechanisms | join("; ")')"
        expect_eq "$l: no call was refused by the filter" 0 "$(j '[.events[] | select(.layer == "seccomp")] | length')"
}

# ---- a tool the pre-check refuses, with variables: both read under the filter ----
tool refused.py <<'PY'
import socket
import subprocess
socket.socket(socket.AF_INET).connect((host, port))
subprocess.run(["id"])
PY
printf '{"host": "127.0.0.1", "port": 9}' >"$T/vars.json"
run_json "$T/refused.py" --variables "$T/vars.json"
expect_eq "refused: status" blocked "$(j .status)"
expect_eq "refused: the run's tier is the probe's" "$TIER" "$(j .isolation.tier)"
expect_eq "refused: the pre-check's findings" "import socket|import subprocess|socket.socket|subprocess.run" \
        "$(j '[.events[] | select(.layer == "precheck") | .op] | join("|")')"
expect_eq "refused: none of it ran" "-1" "$(idx started)"
filter_first refused
before "refused: the filter verified before the variables were bound" "$(idx seccomp_verified supervisor)" "$(idx variables_bound)"
before "refused: the variables bound under it, before the pre-check" "$(idx variables_bound)" \
        "$(j '[.events[] | .layer] | index("precheck") // -1')"
before "refused: the filter verified before the pre-check's first finding" "$(idx seccomp_verified supervisor)" \
        "$(j '[.events[] | .layer] | index("precheck") // -1')"
verified_ms=$(j '.events[] | select(.kind == "seccomp_verified") | .t_ms')
first_ms=$(j '[.events[] | select(.layer == "precheck")][0].t_ms')
[ "$verified_ms" -le "$first_ms" ] || fail "refused: the filter verified at $verified_ms ms, after the first finding at $first_ms ms"
echo "ok: refused: verified at $verified_ms ms, the first finding at $first_ms ms"
expect_match "refused: the blast radius says the filter was verified" \
        "^none: seccomp refused every socket but AF_UNIX \(verified for this run\)" "$(j .blast_radius.network)"

# ---- malformed variables: still the request's fault, refused under the filter ----
tool marker.py <<<'print("the tool ran")'
printf '{"a": 1, "a": 2}' >"$T/dup.json"
printf '{"a": 1}' >"$T/ok.json"
refused_vars() { # SOCKET LABEL
        local l=$2 out
        out=$("$VR" "$1" "$T/marker.py" "$T/dup.json") || fail "$l: varsrun exited $?: $out"
        expect_eq "$l: bad_request naming the field" \
                "error code=bad_request field=run_request.variables message=variables refused: the key 'a' appears more than once" \
                "$(tail -1 <<<"$out")"
        local v r x
        v=$(grep -n '^event supervisor seccomp_verified ' <<<"$out" | cut -d: -f1)
        r=$(grep -n '^event runner in_force ' <<<"$out" | cut -d: -f1)
        x=$(grep -n '^event runner refused op=variables ' <<<"$out" | cut -d: -f1)
        [ -n "$v" ] && [ -n "$r" ] && [ -n "$x" ] && [ "$v" -lt "$r" ] && [ "$r" -lt "$x" ] ||
                fail "$l: not verified, in force, then refused: $out"
        echo "ok: $l: the filter verified (line $v), the layers in force ($r), then the variables refused ($x)"
        expect_eq "$l: no tool code ran" "" "$(grep -E 'started|the tool ran' <<<"$out")"
        # Control: well-formed variables, the same tool, the same way: it runs.
        out=$("$VR" "$1" "$T/marker.py" "$T/ok.json") || fail "$l: varsrun (control) exited $?: $out"
        expect_eq "$l: control: result" 'result status=ok variables={"a":1}' "$(tail -1 <<<"$out")"
}
refused_vars "$ANVIL_SOCKET" "layers on"
refused_vars "$ANVIL_BARE_SOCKET" "layers off"

# ---- a legitimate tool with variables: it runs, as it did, both ways ----
tool legit.py <<'PY'
import json, ast
rows = [{"region": r, "amount": a} for r, a in pairs]
total = sum(r["amount"] for r in rows)
print(json.dumps({"total": total, "n": len(rows)}), type(ast.parse("x = 1")).__name__)
PY
printf '{"pairs": [["north", 10], ["south", 32]]}' >"$T/pairs.json"
legit() { # RUN LABEL
        local l=$2
        $1 "$T/legit.py" --variables "$T/pairs.json"
        expect_eq "$l: status" ok "$(j .status)"
        expect_eq "$l: stdout" '{"total": 42, "n": 2} Module' "$(j .stdout)"
        filter_first "$l"
        before "$l: the variables bound under the filter" "$(idx in_force)" "$(idx variables_bound)"
        before "$l: before the tool started" "$(idx variables_bound)" "$(idx started)"
        expect_match "$l: its variables kept for the next step" '"total":42' "$(j .variables)"
}
legit run_json "layers on"
legit bare_json "layers off"
expect_eq "layers off: said right after in_force" "$(($(idx in_force) + 1))" "$(idx layers_disabled)"

expect_serving
