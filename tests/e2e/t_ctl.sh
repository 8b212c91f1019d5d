# anvilctl's surface: usage and connection errors (exit 125 and 126, one line on stderr each);
# the --json RunResult's keys, exactly those of the schema (proto/messages.c run_result_f),
# and each event's keys; the human output's status line, trace, stdout and artifact paths.
. "$(dirname "$0")/lib.sh"

tool ok.py <<'PY'
print("hello from the tool")
with open("artifacts/out.txt", "w") as f:
    f.write("an artifact\n")
PY

# ctl_fails WHAT RC [VAR=VALUE] -- anvilctl args...: exit code RC, nothing on stdout; the
# number of stderr lines is left in $nerr, the text in $T/err.
ctl_fails() {
        local what=$1 want=$2
        shift 2
        local envs=()
        while [ "$1" != -- ]; do
                envs+=("$1")
                shift
        done
        shift
        env "${envs[@]}" "$CTL" "$@" >"$T/out" 2>"$T/err"
        local rc=$?
        expect_eq "$what: exit code" "$want" "$rc"
        expect_eq "$what: stdout" "" "$(cat "$T/out")"
        nerr=$(wc -l <"$T/err")
        [ "$nerr" -ge 1 ] || fail "$what: nothing on stderr"
        echo "    stderr: $(head -1 "$T/err")"
}
one_line() { # what
        expect_eq "$1: lines on stderr" 1 "$nerr"
}

ctl_fails "no arguments" 125 --
ctl_fails "run with no tool" 125 -- run
one_line "run with no tool"
ctl_fails "--timeout 0" 125 -- run "$T/ok.py" --timeout 0
one_line "--timeout 0"
ctl_fails "--timeout abc" 125 -- run "$T/ok.py" --timeout abc
one_line "--timeout abc"
ctl_fails "--memory 10" 125 -- run "$T/ok.py" --memory 10
one_line "--memory 10"
ctl_fails "unknown command" 125 -- frobnicate
ctl_fails "a tool that does not exist" 125 -- run "$T/nonexistent.py"
one_line "a tool that does not exist"
printf 'print("caf\xe9")\n' >"$T/latin1.py"
ctl_fails "a non-UTF-8 tool" 125 -- run "$T/latin1.py"
one_line "a non-UTF-8 tool"
expect_match "a non-UTF-8 tool: the message" "UTF-8" "$(cat "$T/err")"
ctl_fails "ANVIL_SOCKET=/nonexistent" 126 ANVIL_SOCKET=/nonexistent -- run "$T/ok.py"
one_line "ANVIL_SOCKET=/nonexistent"
expect_match "ANVIL_SOCKET=/nonexistent: the message names the path" "/nonexistent" "$(cat "$T/err")"
# Something that is not an Anvil socket at all: a plain file.
touch "$T/not-a-socket"
ctl_fails "ANVIL_SOCKET at a plain file" 126 ANVIL_SOCKET="$T/not-a-socket" -- run "$T/ok.py"
one_line "ANVIL_SOCKET at a plain file"
# Control: with the right socket and the same tool, the run is carried out.
"$CTL" run "$T/ok.py" >/dev/null 2>"$T/err" || fail "control: anvilctl run ok.py exited $?: $(cat "$T/err")"
echo "ok: control: the same run with a valid socket and options exits 0"

# --json: the keys of the schema, exactly.
run_json "$T/ok.py" --timeout 5 --memory 128
schema_keys="request_id run_id status exit_code signal killed isolation events stdout stdout_truncated
stdout_bytes stderr stderr_truncated stderr_bytes artifacts_dir artifacts peak_rss_mb cpu_ms wall_ms
capabilities blast_radius cgroup variables variables_dropped final_answer connections not_stored"
want=$(tr ' ' '\n' <<<"$schema_keys" | grep . | sort | paste -sd' ')
# The list above is the schema's: checked against proto/messages.c so the two cannot drift.
from_source=$(sed -n '/^static const struct proto_field run_result_f\[\] = {/,/^};/p' "$TOP/proto/messages.c" |
        grep -o 'F(struct proto_run_result, [a-z_]*, "[a-z_]*"' | sed 's/.*"\(.*\)"/\1/' | sort | paste -sd' ')
expect_eq "run_result_f's field names in proto/messages.c" "$want" "$from_source"
expect_eq "--json top-level keys" "$want" "$(j 'keys | sort | join(" ")')"
expect_eq "every event's keys, exactly" "col kind layer line message op reason t_ms traceback" \
        "$(j '[.events[] | keys | sort | join(" ")] | unique | join("|")')"
expect_eq "events present" true "$(j '.events | length > 0')"
expect_eq status ok "$(j .status)"
expect_eq "limits as asked, in the blast radius" "5 128" "$(j '"\(.blast_radius.limits.wall_s) \(.blast_radius.limits.memory_mb)"')"
expect_match run_id '^[0-9]{8}T[0-9]{12}-[0-9a-f]{16}$' "$(j .run_id)"
# The same for the events of a failing tool (an exception, with a traceback).
printf 'raise KeyError("x")\n' >"$T/raise.py"
run_json "$T/raise.py"
expect_eq "a failing tool's events' keys, exactly" "col kind layer line message op reason t_ms traceback" \
        "$(j '[.events[] | keys | sort | join(" ")] | unique | join("|")')"
expect_eq "a failing tool's top-level keys" "$want" "$(j 'keys | sort | join(" ")')"

# Human output: the trace and the tool's stdout as they came (t_ctl_live.sh), then a status
# line, the artifact's path on the host.
"$CTL" run "$T/ok.py" >"$T/human" 2>"$T/err" || fail "anvilctl run (human) exited $?: $(cat "$T/err")"
sed 's/^/    | /' "$T/human"
status_line=$(grep '^run ' "$T/human")
expect_match "status line" '^run [0-9]{8}T[0-9]{12}-[0-9a-f]{16}: ok' "$status_line"
run_id=$(sed -E 's/^run ([^:]+):.*/\1/' <<<"$status_line")
grep -qx 'trace:' "$T/human" || fail "no 'trace:' section"
grep -qE '^ +[0-9]+ ms +runner +started' "$T/human" || fail "the trace has no 'started' event"
grep -qx '  stdout| hello from the tool' "$T/human" || fail "the tool's stdout is not in the trace"
art=$(grep -oE '/[^ ]*/artifacts/out\.txt' "$T/human") || fail "no artifact path in the human output"
expect_match "artifact path names the run" "/$run_id/artifacts/out\.txt$" "$art"
expect_eq "the artifact at that path" "an artifact" "$(cat "$art")"
echo "ok: human output: trace:, the tool's stdout, status line, artifact path"
