# The web UI's "try to break it" attempts (web/breakit/attempts.json): each of the four
# (network, process, write outside, read outside) in two variants, run for real through the
# suite's daemons with the default policy and the Python layers on:
#   python: refused by the pre-check or the audit hook;
#   kernel: the same attempt written so that the Python layers cannot see it: no refusal of
#           theirs is on the record, and the kernel layer the manifest names refused it.
# For every variant: the status, the refusal event's layer and message verbatim as in the
# manifest, and the exception the tool ended on. Landlock's refusals are explained from the
# kernel's audit records, which a rootless supervisor cannot read: there the test checks
# that the refusal still held (the tool's PermissionError), that no landlock event claims
# anything, and that the run says why it is not explained.
# The manifest itself: valid JSON, ids unique, every file there, every layer a name of
# proto/names.h, every message of a catalog form (policy/reasons.h), every status a
# RunResult's.
# Controls, so that every check could fail: the same code with a legitimate target (./inputs
# read, ./artifacts written, an XML file of ./inputs parsed, a Tcl command that starts
# nothing) runs ok with no refusal at all; and on the host, outside Anvil, the network and
# process attempts do what they try (fetch from the test's own listener on 127.0.0.1, run
# uname).
. "$(dirname "$0")/lib.sh"
B="$TOP/web/breakit"
M="$B/attempts.json"

LPID=
stop_listener() {
        if [ -n "$LPID" ]; then
                kill "$LPID" 2>/dev/null
                wait "$LPID" 2>/dev/null
                LPID=
        fi
}
trap 'stop_listener; cleanup' EXIT

# ---- the manifest ----
jq -e 'type == "array" and length > 0' "$M" >/dev/null || fail "$M is not a non-empty JSON array"
expect_eq "manifest: the attempts" "network process write_outside read_outside" "$(jq -r '[.[].id] | join(" ")' "$M")"
expect_eq "manifest: ids unique" "$(jq 'length' "$M")" "$(jq '[.[].id] | unique | length' "$M")"
n=$(jq '[.[] | select((.title | type) != "string" or .title == "" or (.what | type) != "string" or .what == "")] | length' "$M")
expect_eq "manifest: attempts without a title or a what" 0 "$n"
# The layers the wire knows (proto/names.h's PROTO_LAYERS): the Python layers' two, and the
# kernel's (every other but the runner's own and the supervisor's bookkeeping).
known=$(sed -n '/^#define PROTO_LAYERS(X)/,/^$/p' "$TOP/proto/names.h" | grep -oE 'X\([A-Z_]+, "[a-z_]+"\)' |
        sed -E 's/.*"([a-z_]+)".*/\1/' | paste -sd' ')
expect_match "manifest: the layers known to proto/names.h" '(^| )precheck .*audit .*seccomp .*landlock( |$)' "$known"
# catalog_form LAYER MESSAGE: empty if MESSAGE is of a form policy/reasons.h gives LAYER's
# refusals, with a reason of the catalog's; else what is wrong.
catalog_form() {
        local layer=$1 m=$2 prefix why
        case $layer in
        precheck) prefix='blocked: ' ;;
        audit) prefix='blocked at runtime: ' ;;
        seccomp | landlock) prefix='blocked at kernel: ' ;;
        *) echo "no refusal form for layer $layer"; return ;;
        esac
        [[ "$m" == "$prefix"* ]] || { echo "does not start with '$prefix'"; return; }
        if [ "$layer" = precheck ] && [[ "$m" =~ ^blocked:\ (read|write)\ path\ \'.*\'\ outside\ ALLOWED_(READ|WRITE)_PATHS\ \(.*\)$ ]]; then
                return
        fi
        # the reason: what the last parentheses hold (it may hold parentheses of its own)
        [[ "$m" =~ \ \(([^()]*(\([^()]*\))?)\)$ ]] || { echo "ends with no (reason)"; return; }
        why=${BASH_REMATCH[1]}
        [ "$layer" = landlock ] && why=${why%, landlock}
        grep -qF "\"$why\"" "$TOP/policy/reasons.h" || echo "its reason '$why' is not in policy/reasons.h"
}
for id in $(jq -r '.[].id' "$M"); do
        for v in python kernel; do
                a=$(jq -c --arg id "$id" --arg v "$v" '.[] | select(.id == $id) | .[$v]' "$M")
                if [ "$a" = null ]; then
                        [ "$v" = kernel ] || fail "manifest: $id has no python variant"
                        [ -n "$(jq -r --arg id "$id" '.[] | select(.id == $id) | .why // empty' "$M")" ] ||
                                fail "manifest: $id has no kernel variant and no why"
                        continue
                fi
                file=$(jq -r .file <<<"$a")
                layer=$(jq -r .layer <<<"$a")
                { [[ "$file" =~ ^[a-z_]+\.py$ ]] && [ -f "$B/$file" ]; } || fail "manifest: $id $v: no file web/breakit/$file"
                head -1 "$B/$file" | grep -q '^# Try to break it: ' || fail "manifest: $id $v: $file does not open with the comment saying what it tries"
                [[ " $known " == *" $layer "* ]] || fail "manifest: $id $v: layer '$layer' is not in proto/names.h"
                case $v in
                python) [[ "$layer" =~ ^(precheck|audit)$ ]] || fail "manifest: $id python: layer '$layer' is not a Python layer" ;;
                kernel) [[ "$layer" =~ ^(seccomp|landlock|cgroup|rlimit)$ ]] || fail "manifest: $id kernel: layer '$layer' is not a kernel layer" ;;
                esac
                [[ "$(jq -r .status <<<"$a")" =~ ^(ok|error|blocked|killed)$ ]] || fail "manifest: $id $v: status is no RunResult's"
                [ "$(jq -r '.needs_kernel_audit | type' <<<"$a")" = boolean ] || fail "manifest: $id $v: needs_kernel_audit is not true or false"
                [ "$(jq -r .needs_kernel_audit <<<"$a")" = "$([ "$layer" = landlock ] && echo true || echo false)" ] ||
                        fail "manifest: $id $v: needs_kernel_audit must be true exactly for landlock's refusals"
                bad=$(catalog_form "$layer" "$(jq -r .message <<<"$a")")
                [ -z "$bad" ] || fail "manifest: $id $v: message: $bad"
        done
done
echo "ok: manifest: every file there, every layer known, every message of a catalog form"
listed=$(jq -r '[.[] | .python.file, (.kernel // {} | .file // empty)] | sort | join(" ")' "$M")
present=$(find "$B" -maxdepth 1 -name '*.py' -printf '%f\n' | LC_ALL=C sort | paste -sd' ')
expect_eq "manifest: the .py files of web/breakit are the manifest's" "$listed" "$present"
# Control: the form check refuses what is not the catalog's.
[ -n "$(catalog_form seccomp "blocked at kernel: socket(AF_INET) (network not allowed)")" ] ||
        fail "control: a reason not in the catalog passed the form check"
[ -n "$(catalog_form audit "blocked at kernel: socket(AF_INET, SOCK_STREAM) (network denied by seccomp)")" ] ||
        fail "control: a kernel message passed as the audit hook's"
echo "ok: control: the form check refuses a reason not in the catalog and a message of another layer"

# ---- the attempts ----
# check_variant ID VARIANT FILE [anvilctl run options...]: runs FILE, checks it against the
# manifest's ID.VARIANT.
check_variant() {
        local id=$1 v=$2 file=$3 a layer msg status exc what="$1 $2"
        shift 3
        a=$(jq -c --arg id "$id" --arg v "$v" '.[] | select(.id == $id) | .[$v]' "$M")
        layer=$(jq -r .layer <<<"$a")
        msg=$(jq -r .message <<<"$a")
        status=$(jq -r .status <<<"$a")
        exc=$(jq -r '.exception // ""' <<<"$a")
        run_json "$file" "$@"
        expect_eq "$what: status" "$status" "$(j .status)"
        local refusals first
        refusals=$(j '[.events[] | select(.kind == "blocked" and (.layer == "precheck" or .layer == "audit"))] | length')
        first=$(j '[.events[] | select(.kind == "blocked" and (.layer == "precheck" or .layer == "audit"))][0] | "\(.layer): \(.message)"')
        if [ "$v" = python ]; then
                expect_eq "$what: the first refusal" "$layer: $msg" "$first"
        else
                expect_eq "$what: refusals of the Python layers (it got past them)" 0 "$refusals"
                expect_eq "$what: the tool ran (the pre-check found nothing)" 1 \
                        "$(j '[.events[] | select(.layer == "runner" and .kind == "started")] | length')"
        fi
        if [ "$layer" = landlock ] && [ "$EXPLAINS" = 0 ]; then
                expect_eq "$what: no landlock event where the records cannot be read" 0 \
                        "$(j '[.events[] | select(.layer == "landlock")] | length')"
                expect_match "$what: the run says why its refusal is not explained" '^landlock refusals are not explained \(' \
                        "$(j '[.events[] | select(.layer == "supervisor" and .kind == "not_explained")][0].message')"
        else
                n=$(jq --arg l "$layer" --arg m "$msg" \
                        '[.events[] | select(.layer == $l and .kind == "blocked" and .message == $m)] | length' "$T/result.json")
                [ "$n" -ge 1 ] || fail "$what: no $layer refusal '$msg'; the refusals were: $(jq -c '[.events[] | select(.kind == "blocked") | "\(.layer): \(.message)"]' "$T/result.json")"
                echo "ok: $what: $layer refused it, verbatim: $msg"
                expect_eq "$what: every refusal is the manifest's layer's" "$layer" \
                        "$(j '[.events[] | select(.kind == "blocked" and .layer != "runner") | .layer] | unique | join(" ")')"
        fi
        expect_eq "$what: what the tool ended on" "$exc" "$(j '[.events[] | select(.kind == "exception")][0].message // ""')"
        case $layer in
        precheck) expect_eq "$what: none of it ran" "" "$(j .stdout)" ;;
        esac
}

# the control's inputs: a file for the reads, an XML feed for the fetch
printf 'jail-host\n' >"$T/hostname"
printf '<feed><item>north,120</item></feed>\n' >"$T/feed.xml"

check_variant network python "$B/network_python.py"
check_variant network kernel "$B/network_kernel.py"
check_variant process python "$B/process_python.py"
check_variant process kernel "$B/process_kernel.py"
check_variant write_outside python "$B/write_outside_python.py"
rundir=$(dirname "$(j .artifacts_dir)")
[ ! -e "$rundir/outside.csv" ] || fail "write_outside python: $rundir/outside.csv exists on the host"
echo "ok: write_outside python: nothing was written next to the run's artifacts on the host"
check_variant write_outside kernel "$B/write_outside_kernel.py"
check_variant read_outside python "$B/read_outside_python.py"
check_variant read_outside kernel "$B/read_outside_kernel.py"

# ---- controls: the same code, a legitimate target ----
# control NAME FROM TO FILE [options...]: FILE with FROM replaced by TO (it must be there
# once) as $T/NAME, run; it must end ok with no refusal of any layer.
control() {
        local name=$1 from=$2 to=$3 file=$4
        shift 4
        [ "$(grep -cF -- "$from" "$file")" = 1 ] || fail "control $name: '$from' is not once in $file"
        FROM=$from TO=$to "$PY" -c 'import os, sys; s = open(sys.argv[1]).read(); sys.stdout.write(s.replace(os.environ["FROM"], os.environ["TO"]))' \
                "$file" >"$T/$name"
        run_json "$T/$name" "$@"
        expect_eq "control $name: status" ok "$(j .status)"
        expect_eq "control $name: refusals" 0 "$(j '[.events[] | select(.kind == "blocked" and .layer != "runner")] | length')"
}
control network_kernel.py '"http://127.0.0.1:8080/feed.xml"' '"inputs/feed.xml"' "$B/network_kernel.py" --input "$T/feed.xml"
expect_eq "control network_kernel.py: the feed, parsed" "<feed>
  <item>north,120</item>
</feed>" "$(j .stdout)"
# a Tcl command that starts nothing, through the same interpreter: Tcl itself works in the jail
control process_kernel.py '"exec uname -a"' '"string cat ran"' "$B/process_kernel.py"
expect_eq "control process_kernel.py: what Tcl said" "ran" "$(j .stdout)"
control write_outside_python.py '"artifacts", "..", "outside.csv"' '"artifacts", "outside.csv"' "$B/write_outside_python.py"
expect_eq "control write_outside_python.py: the artifact" "outside.csv" "$(j '[.artifacts[].path] | join(" ")')"
control write_outside_kernel.py '"/dev/urandom"' '"artifacts/report.xml"' "$B/write_outside_kernel.py"
expect_eq "control write_outside_kernel.py: the artifact" "report.xml" "$(j '[.artifacts[].path] | join(" ")')"
control read_outside_python.py '"", "etc", "hostname"' '"inputs", "hostname"' "$B/read_outside_python.py" --input "$T/hostname"
expect_eq "control read_outside_python.py: what it read" "jail-host" "$(j .stdout)"
control read_outside_kernel.py '"", "etc", "hostname"' '"inputs", "hostname"' "$B/read_outside_kernel.py" --input "$T/hostname"
expect_match "control read_outside_kernel.py: what pandas read" 'jail-host' "$(j .stdout)"

# ---- controls: on the host, the attempts do what they try ----
# The pre-check refuses network_python.py and process_python.py by their imports, whatever
# their target; outside Anvil they fetch and start a process. So do the kernel variants: the
# refusals above are the jail's, not a fault of the code.
mkdir "$T/srv"
printf 'region,amount\nnorth,120\n' >"$T/srv/sales.csv"
printf '<feed><item>from the host</item></feed>\n' >"$T/srv/feed.xml"
(cd "$T/srv" && exec "$PY" -u -m http.server --bind 127.0.0.1 0) >"$T/srv.log" 2>&1 &
LPID=$!
port=
for _ in $(seq 100); do
        port=$(sed -nE 's/.* port ([0-9]+).*/\1/p' "$T/srv.log" | head -1)
        [ -n "$port" ] && break
        sleep 0.1
done
[ -n "$port" ] || fail "the test's HTTP listener did not start: $(cat "$T/srv.log")"
sed "s/127.0.0.1:8080/127.0.0.1:$port/" "$B/network_python.py" >"$T/host_network_python.py"
expect_eq "host: network_python.py fetches" "region,amount
north,120" "$(cd "$T" && "$PY" "$T/host_network_python.py")"
sed "s/127.0.0.1:8080/127.0.0.1:$port/" "$B/network_kernel.py" >"$T/host_network_kernel.py"
expect_match "host: network_kernel.py fetches through libxml2" '<item>from the host</item>' \
        "$(cd "$T" && "$PY" "$T/host_network_kernel.py")"
stop_listener
expect_match "host: process_python.py starts uname" "^$(uname -s) " "$(cd "$T" && "$PY" "$B/process_python.py")"
expect_eq "host: process_kernel.py starts uname through Tcl" "$(uname -a)" "$(cd "$T" && "$PY" "$B/process_kernel.py")"
