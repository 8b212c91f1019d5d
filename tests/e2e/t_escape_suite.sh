# The escape attempts of tests/escapes/: each is run in the jail and must be refused by the
# layer its header names, with exactly the message its header states (the catalog's text,
# asserted verbatim), end with the status its header states, and leave the host untouched.
#
# Header: the leading lines of the file of the form `# key: value`, in any order:
#   expect-layer:   precheck | audit                                  (required)
#   expect-status:  blocked | ok | error                              (required)
#   expect-message: the exact message of one event of that layer, kind "blocked" (required)
#   attempt:        one line saying what it tries                     (required)
#   host-untouched: a host path that must not appear or change        (any number)
#                   {rundir}/x and {artifacts}/x name paths in the run's directory on the
#                   host (the parent of its artifacts/, and artifacts/ itself): they must not
#                   exist after the run. Any other path is the host's own: it must be as it
#                   was before the run (absent, or the same type, mode, owner, size, mtime,
#                   inode and sha256).
#   expect-stdout:  a line the tool's stdout must contain             (optional)
#   expect-exception: what a blocked tool ended on, when a library wrapped the refusal
#                   (urllib's URLError): the "exception" event's message  (optional)
# The header ends at the first line that is not of that form.
#
# What is checked for every attempt, besides the header's expectations:
#   - no line of stdout starts with "ESCAPED": every attempt prints one if its operation
#     got through (the control below shows the check sees it);
#   - precheck: none of the tool ran (no "started" event);
#     audit: the tool ran and the pre-check found nothing (the refusal is the audit hook's);
#   - audit with status blocked: the refusal ended the tool as anvil.SandboxBlocked with the
#     same message (the "exception" event), so blocking and explaining are one event;
#   - the run's directory on the host holds what a harmless run's holds, and no symlink;
# and, once for all of them, that no file named like an attempt's target (anvil-escape*,
# leak.*, outside.txt, stolen*) appeared at the top of the host's /, /etc, /etc/cron.d, /tmp
# or /work.
# Every attempt is run and every failure collected; the test then fails once, naming them.
# Arguments (optional): attempt names to run only those, e.g. `t_escape_suite.sh rt_fork_getattr`.
#
# Controls: a harmless tool's run has no matching refusal (the event check can fail), and one
# attempt run on the host without Anvil prints ESCAPED and writes outside.txt (the stdout and
# host checks can see an escape).
. "$(dirname "$0")/lib.sh"
E="$TOP/tests/escapes"

failed=()
bad() { # name what
        echo "  FAIL: $1: $2" >&2
        [[ " ${failed[*]} " == *" $1 "* ]] || failed+=("$1")
}

# state PATH: what a host path is now, to compare before and after a run.
state() {
        if [ ! -e "$1" ] && [ ! -L "$1" ]; then
                echo absent
                return
        fi
        local s
        s=$(stat -c '%F mode=%a owner=%u:%g size=%s mtime=%Y inode=%i' "$1")
        [ -f "$1" ] && s="$s sha256=$(sha256sum "$1" | cut -d' ' -f1)"
        echo "$s"
}

# result_of TOOL.py: runs it with lib.sh's run_json; anvilctl's exit code is not the verdict
# (a blocked tool is a result too), a missing or malformed RunResult is. 0 if $T/result.json
# holds a RunResult.
result_of() {
        (run_json "$1") 2>"$T/run.err"
        jq -e '.run_id and .status' "$T/result.json" >/dev/null 2>&1
}

# The baseline: what a harmless run leaves in its run directory.
tool harmless.py <<<'print("nothing to see")'
result_of "$T/harmless.py" || fail "a harmless run gave no RunResult: $(cat "$T/run.err")"
expect_eq "control: a harmless run's status" ok "$(j .status)"
baseline=$(ls -A "$(dirname "$(j .artifacts_dir)")" | LC_ALL=C sort | paste -sd' ')
[ -n "$baseline" ] || fail "control: the harmless run's directory is empty or missing"
echo "ok: control: a run's directory holds: $baseline"
# Control: the event check can fail: no refusal in a harmless run matches a message.
n=$(jq --arg m "blocked at runtime: os.fork (process creation denied by policy)" \
        '[.events[] | select(.layer == "audit" and .kind == "blocked" and .message == $m)] | length' "$T/result.json")
expect_eq "control: matching refusals in a harmless run" 0 "$n"

# Names the attempts aim at, looked for at the top of the host's /, /etc, /tmp and /work
# before and after them all: none may appear.
aimed() {
        find / /etc /etc/cron.d /tmp /work -maxdepth 1 \( -name 'anvil-escape*' -o -name 'leak.*' \
                -o -name 'outside.txt' -o -name 'stolen*' \) 2>/dev/null | LC_ALL=C sort
}
aimed_before=$(aimed)

if [ $# -gt 0 ]; then
        attempts=()
        for a in "$@"; do attempts+=("$E/${a%.py}.py"); done
else
        attempts=("$E"/*.py)
fi

n_pre=0 n_audit=0
for f in "${attempts[@]}"; do
        name=$(basename "$f" .py)
        [ -f "$f" ] || { bad "$name" "no such attempt $f"; continue; }

        # The header.
        layer='' status='' message='' attempt='' stdout_line='' exc_line='' untouched=() herr=''
        while IFS= read -r line; do
                [[ "$line" =~ ^#\ ([a-z-]+):\ (.*)$ ]] || break
                key=${BASH_REMATCH[1]}
                val=${BASH_REMATCH[2]}
                val=${val%"${val##*[![:space:]]}"} # trailing blanks
                case "$key" in
                expect-layer) layer=$val ;;
                expect-status) status=$val ;;
                expect-message) message=$val ;;
                attempt) attempt=$val ;;
                host-untouched) untouched+=("$val") ;;
                expect-stdout) stdout_line=$val ;;
                expect-exception) exc_line=$val ;;
                *) herr="unknown header key '$key'" ;;
                esac
        done <"$f"
        [[ "$layer" =~ ^(precheck|audit)$ ]] || herr="${herr:+$herr; }expect-layer is '$layer', not precheck or audit"
        [[ "$status" =~ ^(blocked|ok|error)$ ]] || herr="${herr:+$herr; }expect-status is '$status', not blocked, ok or error"
        [ -n "$message" ] || herr="${herr:+$herr; }no expect-message"
        [ -n "$attempt" ] || herr="${herr:+$herr; }no attempt"
        if [ -n "$herr" ]; then
                bad "$name" "header: $herr"
                continue
        fi
        [ "$layer" = precheck ] && n_pre=$((n_pre + 1)) || n_audit=$((n_audit + 1))

        # The host's own paths, before.
        declare -A before=()
        for p in "${untouched[@]}"; do
                [[ "$p" == \{rundir\}/* || "$p" == \{artifacts\}/* ]] || before[$p]=$(state "$p")
        done

        if ! result_of "$f"; then
                bad "$name" "no RunResult: $(cat "$T/run.err")"
                unset before
                continue
        fi
        r="$T/result.json"
        errs=()

        got_status=$(j .status)
        [ "$got_status" = "$status" ] || errs+=("status is '$got_status', not '$status'")

        n=$(jq --arg l "$layer" --arg m "$message" \
                '[.events[] | select(.layer == $l and .kind == "blocked" and .message == $m)] | length' "$r")
        if [ "$n" -lt 1 ]; then
                errs+=("no $layer event with the message '$message'; the refusals were:")
                while IFS= read -r ev; do errs+=("    $ev"); done < <(jq -r '.events[]
                        | select(.layer == "precheck" or .layer == "audit" or .kind == "exception")
                        | "[\(.layer)/\(.kind)] \(.message)"' "$r")
        fi

        started=$(jq '[.events[] | select(.layer == "runner" and .kind == "started")] | length' "$r")
        n_precheck=$(jq '[.events[] | select(.layer == "precheck")] | length' "$r")
        if [ "$layer" = precheck ]; then
                [ "$started" = 0 ] || errs+=("refused by the pre-check, yet the tool started")
        else
                [ "$started" = 1 ] || errs+=("the tool did not start (a refusal at run time needs a run)")
                [ "$n_precheck" = 0 ] || errs+=("the pre-check found something: the audit hook's refusal is not what stopped it")
                if [ "$status" = blocked ] && [ -n "$exc_line" ]; then
                        n=$(jq --arg m "$exc_line" '[.events[] | select(.kind == "exception" and .message == $m)] | length' "$r")
                        [ "$n" -ge 1 ] || errs+=("the tool did not end on $exc_line")
                elif [ "$status" = blocked ]; then
                        n=$(jq --arg m "anvil.SandboxBlocked: $message" \
                                '[.events[] | select(.kind == "exception" and .op == "SandboxBlocked" and .message == $m)] | length' "$r")
                        [ "$n" -ge 1 ] || errs+=("the tool did not end on anvil.SandboxBlocked: $message")
                fi
        fi

        out=$(j .stdout)
        if grep -q '^ESCAPED' <<<"$out"; then
                errs+=("the operation got through: $(grep -m1 '^ESCAPED' <<<"$out")")
        fi
        if [ -n "$stdout_line" ] && ! grep -qxF -- "$stdout_line" <<<"$out"; then
                errs+=("stdout has no line '$stdout_line' (it was: $(head -c 300 <<<"$out"))")
        fi

        # The host.
        arts=$(j .artifacts_dir)
        rundir=$(dirname "$arts")
        if [ ! -d "$rundir" ] || [ ! -d "$arts" ]; then
                errs+=("the run's directory $rundir is not there to check")
        else
                entries=$(ls -A "$rundir" | LC_ALL=C sort | paste -sd' ')
                [ "$entries" = "$baseline" ] || errs+=("the run's directory holds [$entries], a harmless run's [$baseline]")
                links=$(find "$rundir" -type l | head -3 | paste -sd' ')
                [ -z "$links" ] || errs+=("symlinks in the run's directory on the host: $links")
        fi
        checked=()
        for p in "${untouched[@]}"; do
                case "$p" in
                \{rundir\}/*) hp="$rundir/${p#\{rundir\}/}" ;;
                \{artifacts\}/*) hp="$arts/${p#\{artifacts\}/}" ;;
                *) hp=$p ;;
                esac
                if [ "$hp" != "$p" ]; then
                        if [ -e "$hp" ] || [ -L "$hp" ]; then
                                errs+=("$p appeared on the host: $hp")
                        else
                                checked+=("$p absent")
                        fi
                else
                        now=$(state "$p")
                        if [ "$now" != "${before[$p]}" ]; then
                                errs+=("host path $p changed: before '${before[$p]}', after '$now'")
                        else
                                [ "${before[$p]}" = absent ] && checked+=("$p absent") || checked+=("$p unchanged")
                        fi
                fi
        done
        unset before

        if [ "${#errs[@]}" -gt 0 ]; then
                bad "$name" "${errs[0]}"
                for e in "${errs[@]:1}"; do echo "      $e" >&2; done
                jq -r '.stderr' "$r" | grep -v '^$' | tail -4 | sed 's/^/      stderr: /' >&2
        else
                host=''
                [ "${#checked[@]}" -gt 0 ] && host="; host: $(printf '%s, ' "${checked[@]}" | sed 's/, $//')"
                echo "ok: $name: $layer, $status: $message$host"
        fi
done

if [ $# -eq 0 ]; then
        total=$((n_pre + n_audit))
        [ "$total" -ge 40 ] || bad coverage "only $total escape attempts under tests/escapes/ (at least 40)"
        [ "$n_pre" -ge 15 ] || bad coverage "only $n_pre pre-check attempts (at least 15)"
        [ "$n_audit" -ge 20 ] || bad coverage "only $n_audit run-time attempts (at least 20)"
        echo "attempts: $n_pre refused by the pre-check, $n_audit at run time by the audit hook"
fi

aimed_after=$(aimed)
if [ "$aimed_after" != "$aimed_before" ]; then
        bad host "new files on the host named like an attempt's target: $(comm -13 <(echo "$aimed_before") <(echo "$aimed_after") | paste -sd' ')"
else
        echo "ok: host: no file named like an attempt's target appeared in /, /etc, /etc/cron.d, /tmp or /work"
fi

# Controls: without Anvil, an attempt does print ESCAPED and does write beside artifacts/, so
# the stdout and host checks above can see an escape. Only this attempt is run on the host:
# it writes ./outside.txt in a scratch directory and nothing else.
mkdir -p "$T/scratch/artifacts"
out=$(cd "$T/scratch" && $PY -I "$E/rt_write_traversal.py" 2>&1)
if grep -q '^ESCAPED' <<<"$out" && [ -f "$T/scratch/outside.txt" ]; then
        echo "ok: control: on the host rt_write_traversal.py prints ESCAPED and writes outside.txt"
else
        bad control "on the host rt_write_traversal.py did not escape (stdout: $out): the checks could not see an escape"
fi

echo "${#attempts[@]} escape attempts run, ${#failed[@]} failed"
[ "${#failed[@]}" -eq 0 ] || fail "${#failed[@]} escape attempts failed: ${failed[*]}"
