# anvilctl's help and version, an unknown --cap, and the bash completion:
#   - `anvilctl -h`, `--help` and `help` print the same help on stdout and exit 0, naming each
#     command; `anvilctl help CMD`, `CMD --help` and `CMD -h` print that command's, for each;
#   - run's help lists every option of its option table (ctl/main.c), with the defaults and
#     ranges policy/limits.h holds (read from the header here, never copied), and the tool's
#     contract (cwd, ./inputs, ./artifacts, /tmp, what is refused);
#   - --version on anvilctl, anvil-supervisor and anvil-broker prints the Makefile's VERSION;
#   - `--cap gpu` is a usage error (125) with the message the broker gives task.json's
#     unknown capability, field aside; the control: `--cap network` runs (denied, as policy);
#   - ctl/anvilctl.bash, sourced in a real bash: `complete -p anvilctl` and what it completes.
. "$(dirname "$0")/lib.sh"

# help_of WHAT ARGS...: anvilctl ARGS prints help: exit 0, nothing on stderr; stdout in $T/help
help_of() {
        local what=$1
        shift
        "$CTL" "$@" >"$T/help" 2>"$T/help.err"
        expect_eq "$what: exit status" 0 "$?"
        expect_eq "$what: stderr" "" "$(cat "$T/help.err")"
        [ -s "$T/help" ] || fail "$what: no help on stdout"
}

help_of "anvilctl --help" --help
cp "$T/help" "$T/main.help"
for a in -h help; do
        help_of "anvilctl $a" "$a"
        cmp -s "$T/help" "$T/main.help" || fail "anvilctl $a differs from anvilctl --help: $(diff "$T/main.help" "$T/help")"
done
for c in run submit runs tasks show trace probe verify; do
        grep -qE "^  $c( |$)" "$T/main.help" || fail "anvilctl --help does not list the command $c"
done
grep -qx '  --version         print anvilctl'"'"'s version and exit' "$T/main.help" || fail "anvilctl --help does not name --version"
echo "ok: anvilctl -h, --help, help: the same help, each command listed"

for c in run submit trace probe verify; do
        help_of "anvilctl help $c" help "$c"
        cp "$T/help" "$T/$c.help"
        head -1 "$T/$c.help" | grep -q "^Usage: anvilctl $c" || fail "anvilctl help $c: not $c's: $(head -1 "$T/$c.help")"
        for a in --help -h; do
                help_of "anvilctl $c $a" "$c" "$a"
                cmp -s "$T/help" "$T/$c.help" || fail "anvilctl $c $a differs from anvilctl help $c"
        done
        # Every long option of the command's table is in its help.
        case $c in
        run) fn=cmd_run ;;
        submit) fn=cmd_submit ;;
        probe) fn=cmd_probe ;;
        *) fn="" ;;
        esac
        if [ -n "$fn" ]; then
                opts=$(sed -n "/^static int $fn(/,/{ 0 }/p" "$TOP/ctl/main.c" | grep -o '{ "[a-z-]*", [a-z_]*_argument' |
                        sed 's/{ "\([a-z-]*\)".*/\1/')
                [ -n "$opts" ] || fail "no option table found for $c in ctl/main.c"
                for o in $opts; do
                        grep -qE -- "^  (-[a-z], )?--$o( |$)" "$T/$c.help" || fail "anvilctl $c --help does not list --$o"
                done
                echo "ok: anvilctl $c --help lists each of its options: $(echo $opts)"
        fi
done
"$CTL" help nope >"$T/out" 2>"$T/err"
expect_eq "anvilctl help nope: exit status" 125 "$?"
expect_eq "anvilctl help nope: stdout" "" "$(cat "$T/out")"

# Run's defaults and ranges, as policy/limits.h has them.
lim() { sed -nE "s/^#define POL_$1 \(?([0-9]+)( \* ([0-9]+))?\)?.*/\1 \3/p" "$TOP/policy/limits.h" |
        awk '{ print ($2 == "" ? $1 : $1 * $2) }'; }
for spec in "timeout WALL_S" "cpu CPU_S" "memory MEMORY_MB"; do
        read -r o p <<<"$spec"
        want="$(lim "${p}_MIN")..$(lim "${p}_MAX") (default $(lim "${p}_DEFAULT"))"
        grep -E -- "^  --$o [A-Z]+ " "$T/run.help" | grep -qF -- "$want" || fail "run --help: --$o does not say '$want': $(grep -- "--$o" "$T/run.help")"
        echo "ok: run --help: --$o $want"
done
expect_eq "limits.h read: the memory maximum" 65536 "$(lim MEMORY_MB_MAX)"
for w in '^  cwd ' '^  \./inputs +the --input files, read-only$' '^  \./artifacts +read and write: what is kept' \
        '^  /tmp +private to the run' '^  refused +reading or writing any other path; the network' 'new processes \(fork, exec, subprocess\)' \
        '^"-" reads it from stdin'; do
        grep -qE -- "$w" "$T/run.help" || fail "run --help: no line matches /$w/"
done
echo "ok: run --help says the tool's contract"
grep -qE '^  max_steps +1\.\.100 \(default 6\)$' "$T/submit.help" || fail "submit --help: max_steps: $(grep max_steps "$T/submit.help")"
grep -qE '^  124 +killed: timeout$' "$T/run.help" || fail "run --help: the exit status 124 is not said"

# --version: the Makefile's VERSION, on each program.
version=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
[ -n "$version" ] || fail "no VERSION in the Makefile"
for p in anvilctl anvil-supervisor anvil-broker; do
        out=$("$ANVIL_BUILD/$p" --version 2>&1)
        expect_eq "$p --version: exit status" 0 "$?"
        expect_eq "$p --version" "$p $version" "$out"
done
grep -qF -- "--version           print the version ($version) and exit" <("$ANVIL_BUILD/anvil-broker" --help) ||
        fail "anvil-broker --help does not name --version"
grep -qF -- "--version           print the version ($version) and exit" <("$ANVIL_BUILD/anvil-supervisor" --help) ||
        fail "anvil-supervisor --help does not name --version"
echo "ok: --version: the three programs say $version"

# An unknown capability: a usage error, nothing sent, the broker's own message for task.json's.
tool ok.py <<<'print("ran")'
"$CTL" run "$T/ok.py" --cap gpu >"$T/out" 2>"$T/err"
expect_eq "--cap gpu: exit status" 125 "$?"
expect_eq "--cap gpu: stdout" "" "$(cat "$T/out")"
expect_eq "--cap gpu: the message" "anvilctl: --cap: 'gpu' is not a capability (there are: network, process)" "$(cat "$T/err")"
printf '{"task": "x", "capabilities_approved": ["gpu"], "model": {"url": "http://127.0.0.1:1/v1"}}\n' >"$T/gpu.task.json"
"$CTL" submit "$T/gpu.task.json" >"$T/out" 2>"$T/task.err"
expect_eq "task.json's gpu, the broker's message, field aside" "$(sed 's/^anvilctl: --cap: //' "$T/err")" \
        "$(sed 's/^anvilctl: bad_request: task_submit.capabilities_approved: //' "$T/task.err")"
run_json "$T/ok.py" --cap network
expect_eq "control: --cap network runs, the capability denied by policy" "ok network" \
        "$(j '"\(.status) \(.capabilities.denied | join(","))"')"
echo "ok: --cap gpu refused as task.json's gpu is; --cap network runs"

# The completion, in a real bash, with anvilctl on its PATH as installed.
mkdir -p "$T/bin" "$T/cwd"
ln -s "$CTL" "$T/bin/anvilctl"
touch "$T/cwd/tool.py" "$T/cwd/task.json" "$T/cwd/notes.txt"
cat >"$T/complete.sh" <<'SH'
. "$1"
complete -p anvilctl
c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _anvilctl; echo "$*|${COMPREPLY[*]}"; }
c anvilctl ""
c anvilctl --
c anvilctl run --ti
c anvilctl run --
c anvilctl run --cap ""
c anvilctl run ""
c anvilctl submit ""
c anvilctl help su
c anvilctl probe --
SH
(cd "$T/cwd" && PATH="$T/bin:/usr/bin:/bin" bash --norc --noprofile "$T/complete.sh" "$TOP/ctl/anvilctl.bash") >"$T/complete.out" 2>&1 ||
        fail "the completion script failed in bash: $(cat "$T/complete.out")"
expect_eq "complete -p anvilctl" "complete -o filenames -F _anvilctl anvilctl" "$(head -1 "$T/complete.out")"
want="anvilctl |run submit runs tasks show trace probe verify ui help
anvilctl --|--help --version
anvilctl run --ti|--timeout
anvilctl run --|--input --timeout --cpu --memory --cap --variables --json --events --python-layers-off --output --help
anvilctl run --cap |network process
anvilctl run |tool.py
anvilctl submit |task.json
anvilctl help su|submit
anvilctl probe --|--json --help"
expect_eq "what the completion offers" "$want" "$(tail -n +2 "$T/complete.out")"
# The control: an anvilctl whose help lists nothing gets no options offered (they come from
# its help, not from the completion script).
mkdir -p "$T/bin2"
printf '#!/bin/sh\nexit 0\n' >"$T/bin2/anvilctl"
chmod 755 "$T/bin2/anvilctl"
(cd "$T/cwd" && PATH="$T/bin2:/usr/bin:/bin" bash --norc --noprofile "$T/complete.sh" "$TOP/ctl/anvilctl.bash") >"$T/complete.none" 2>&1
expect_eq "control: an anvilctl of no help: no options" "anvilctl run --|" "$(grep '^anvilctl run --|' "$T/complete.none")"
echo "ok: the completion offers anvilctl's own commands, options and capabilities"
