# The legitimate tools of tests/legit/: each must run in the jail unmodified, with status ok,
# exit code 0 and no refusal of the pre-check or the audit hook (a refusal of legitimate
# code is a bug as serious as a missed escape; nor any other event but the runner's: a kernel
# refusal, a kill or cut output is as wrong for these tools), and print the same RESULT
# lines and write the same artifacts as the same tool run without Anvil.
#
# Control: each tool is also run on the host by Debian's /usr/bin/python3 -I, in a layout
# like the jail's (cwd /work with inputs/ read-only and artifacts/ empty; a private mount
# namespace binds a scratch directory on /work, so absolute paths such as
# /work/artifacts/x.txt mean the same on both sides), with the jail's environment. That run
# must exit 0 and print at least one RESULT line: it is what shows the tool itself is right,
# and it is what the jail's run is compared with. As the runner does, the control compiles
# the tool as "<tool>" and runs it in __main__ (so a traceback a tool logs names the same
# file on both sides); its source is in linecache, as for any Python script, so
# inspect.getsource and tracebacks see it.
#
# Artifacts: the jail's list equals the host's; each file has the host's bytes (sha256),
# except PNGs, which must start with the PNG magic and be within 1% of the host's size, and
# the files a tool's header names as varying by design (`# varying artifacts: report.xlsx`,
# a workbook that records when it was written), which must be there, non-empty, and start
# with the same 4 bytes as the host's.
#
# A tool says which inputs it needs in its header, `# inputs: sales.csv regions.csv`:
# sales.csv is data/sales.csv, the others are in tests/legit/data/.
# Every tool is run and every failure is reported, then the test fails once, naming them.
# Arguments (optional): tool names to run only those, e.g. `t_legit.sh pandas_merge`.
. "$(dirname "$0")/lib.sh"
L="$TOP/tests/legit"

# The jail's environment (supervisor/run.c, sup_jail_env), for the host runs.
host_env() { # home
        env -i PATH=/usr/bin:/bin HOME="$1" LANG=C.UTF-8 TZ=UTC TMPDIR=/tmp MPLBACKEND=Agg \
                MPLCONFIGDIR="$T/mplconfig" OPENBLAS_NUM_THREADS=1 "${@:2}"
}

# The control needs /work to bind the scratch layout on; it is made (and removed after) if
# this host has none.
made_work=0
if [ ! -d /work ]; then
        mkdir /work || fail "cannot make /work for the host runs"
        made_work=1
fi
trap 'rm -rf "$T"; [ "$made_work" = 1 ] && rmdir /work' EXIT

# host_run NAME TOOL.py INPUT...: the tool on the host in $T/host/NAME (bound on /work);
# stdout in $T/host/NAME.out, stderr in $T/host/NAME.err, exit code in $T/host/NAME.rc.
host_run() {
        local name=$1 src=$2 d="$T/host/$1"
        shift 2
        mkdir -p "$d/work/inputs" "$d/work/artifacts" "$d/home"
        cp "$@" "$d/work/inputs/"
        chmod 444 "$d/work/inputs/"*
        chmod 555 "$d/work/inputs"
        cp "$src" "$d/$name.py"
        host_env "$d/home" unshare --mount --propagation private \
                sh -c 'mount --bind "$1" /work && cd /work && exec /usr/bin/python3 -I "$2" "$3"' \
                sh "$d/work" "$T/launch.py" "$d/$name.py" >"$d.out" 2>"$d.err"
        echo $? >"$d.rc"
}

inputs_of() { # TOOL.py: the input files its header names
        local f
        for f in $(sed -n 's/^# inputs: *//p' "$1" | head -1); do
                if [ "$f" = sales.csv ]; then
                        echo "$TOP/data/sales.csv"
                else
                        echo "$L/data/$f"
                fi
        done
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

unshare --mount --propagation private true 2>/dev/null ||
        fail "the control needs a private mount namespace (unshare --mount): run as root"
mkdir -p "$T/host" "$T/mplconfig"
# The control's launcher: the tool compiled as "<tool>" and run in __main__, like the runner
# (runner/main.c), with its source where linecache finds it, like any script's.
cat >"$T/launch.py" <<'PY'
def _launch():
    import linecache
    import sys

    import __main__

    with open(sys.argv[1], encoding="utf-8") as f:
        source = f.read()
    linecache.cache["<tool>"] = (len(source), None, source.splitlines(True), "<tool>")
    sys.argv[:] = ["<tool>"]
    for name in ("_launch", "__file__", "__cached__"):  # nothing of the launcher is left
        __main__.__dict__.pop(name, None)
    return compile(source, "<tool>", "exec"), __main__.__dict__


exec(*_launch())
PY
# matplotlib's font cache for the host runs, built once (the jail has its own, pre-warmed).
host_env "$T/host" /usr/bin/python3 -I -c 'import matplotlib.pyplot' 2>/dev/null

if [ $# -gt 0 ]; then
        tools=()
        for n in "$@"; do tools+=("$L/${n%.py}.py"); done
else
        tools=("$L"/*.py)
fi
[ "${#tools[@]}" -ge 25 ] || [ $# -gt 0 ] || fail "only ${#tools[@]} legitimate tools under tests/legit/ (at least 25)"

failed=()    # names of the tools that failed, in order
declare -A cause # tool -> what made it fail first: a refusal, else its exception, else the first check
bad() { # name what
        echo "  FAIL: $1: $2" >&2
        [[ " ${failed[*]} " == *" $1 "* ]] || failed+=("$1")
        [ -n "${cause[$1]:-}" ] || cause[$1]=$2
}

for tool_py in "${tools[@]}"; do
        [ -f "$tool_py" ] || fail "no tool $tool_py"
        name=$(basename "$tool_py" .py)
        mapfile -t ins < <(inputs_of "$tool_py")
        [ "${#ins[@]}" -gt 0 ] || { bad "$name" "its header names no '# inputs:'"; continue; }
        echo "== $name (inputs: $(for i in "${ins[@]}"; do basename "$i"; done | paste -sd' '))"

        # The control, on the host.
        host_run "$name" "$tool_py" "${ins[@]}"
        h="$T/host/$name"
        if [ "$(cat "$h.rc")" != 0 ]; then
                bad "$name" "control: on the host the tool exited $(cat "$h.rc"): $(tail -5 "$h.err")"
                continue
        fi
        grep '^RESULT: ' "$h.out" >"$h.expected"
        if [ ! -s "$h.expected" ]; then
                bad "$name" "control: on the host the tool printed no RESULT line"
                continue
        fi

        # The run, in the jail.
        in_args=()
        for i in "${ins[@]}"; do in_args+=(--input "$i"); done
        if ! "$CTL" run "$tool_py" "${in_args[@]}" --json >"$T/$name.json" 2>"$T/$name.ctl.err"; then
                # anvilctl exits non-zero when the tool does; the JSON is still there.
                [ -s "$T/$name.json" ] || { bad "$name" "anvilctl run failed: $(cat "$T/$name.ctl.err")"; continue; }
        fi
        r="$T/$name.json"
        # precheck and audit events are refusals; any other layer's (kernel, cgroup,
        # supervisor) is a refusal, a kill or cut output: none is right for these tools. The
        # exceptions: the supervisor saying it saw the filter in force (every run's, S6a), or
        # that Landlock's refusals would not be explained (rootless: it cannot read the audit),
        # and, on a kernel without Landlock, saying Landlock is not.
        refusals=$(jq -r '.events[] | select(.layer != "runner" and .kind != "landlock_absent" and
                        (.layer != "supervisor" or (.kind != "seccomp_verified" and .kind != "not_explained")))
                | "[\(.layer)] line \(.line // "?"): \(.message)"' "$r")
        if [ -n "$refusals" ]; then
                bad "$name" "refused (a false positive), or stopped:"
                sed 's/^/      /' <<<"$refusals" >&2
                n=$(wc -l <<<"$refusals")
                cause[$name]="refused: $(head -1 <<<"$refusals")$([ "$n" -gt 1 ] && echo " (and $((n - 1)) more)")"
        fi
        status=$(jq -r .status "$r")
        code=$(jq -r .exit_code "$r")
        [ "$status" = ok ] || bad "$name" "status is '$status', not ok"
        [ "$code" = 0 ] || bad "$name" "exit code is '$code', not 0"
        if [ "$status" != ok ] || [ "$code" != 0 ]; then
                exc=$(jq -r '.events[] | select(.kind == "exception") | "exception at line \(.line // "?"): \(.message)"' "$r")
                [ -n "$exc" ] && sed 's/^/      /' <<<"$exc" >&2
                [ -z "$refusals" ] && [ -n "$exc" ] && cause[$name]=$exc
                jq -r '.stderr' "$r" | tail -8 | sed 's/^/      stderr: /' >&2
        fi
        jq -r .stdout "$r" | grep '^RESULT: ' >"$T/$name.got"
        if ! diff -u --label "host (expected)" --label "jail" "$h.expected" "$T/$name.got" >"$T/$name.diff"; then
                bad "$name" "RESULT lines differ from the host's:"
                sed 's/^/      /' "$T/$name.diff" | head -30 >&2
        else
                echo "ok: $name: $(wc -l <"$h.expected") RESULT lines equal the host's"
        fi

        # Artifacts.
        host_list=$(cd "$h/work/artifacts" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
        jail_list=$(jq -r '.artifacts[].path' "$r" | LC_ALL=C sort)
        if [ "$host_list" != "$jail_list" ]; then
                bad "$name" "artifacts: host wrote [$(paste -sd' ' <<<"$host_list")], jail listed [$(paste -sd' ' <<<"$jail_list")]"
        fi
        [ -n "$host_list" ] || continue
        dir=$(jq -r .artifacts_dir "$r")
        varying=" $(sed -n 's/^# varying artifacts: *//p' "$tool_py" | head -1) "
        n_ok=0
        while read -r a; do
                hp="$h/work/artifacts/$a" jp="$dir/$a"
                if [ ! -f "$jp" ]; then
                        bad "$name" "artifact $a is not in the run's artifacts directory"
                        continue
                fi
                if [[ "$varying" == *" $a "* ]]; then
                        if [ ! -s "$jp" ] || [ "$(head -c4 "$jp" | od -An -tx1)" != "$(head -c4 "$hp" | od -An -tx1)" ]; then
                                bad "$name" "artifact $a is empty or not of the host's kind"
                        else
                                n_ok=$((n_ok + 1))
                        fi
                elif [[ "$a" == *.png ]]; then
                        magic=$(head -c4 "$jp" | od -An -tx1 | tr -d ' \n')
                        hs=$(stat -c %s "$hp") js=$(stat -c %s "$jp")
                        if [ "$magic" != 89504e47 ]; then
                                bad "$name" "artifact $a is not a PNG (magic $magic)"
                        elif [ $((100 * (js > hs ? js - hs : hs - js))) -gt "$hs" ]; then
                                bad "$name" "artifact $a is $js bytes, the host's $hs (more than 1% apart)"
                        else
                                n_ok=$((n_ok + 1))
                        fi
                elif [ "$(sha "$jp")" != "$(sha "$hp")" ]; then
                        bad "$name" "artifact $a differs from the host's ($(stat -c %s "$jp") vs $(stat -c %s "$hp") bytes)"
                        diff <(head -c 2000 "$hp") <(head -c 2000 "$jp") 2>/dev/null | head -6 | sed 's/^/      /' >&2
                else
                        n_ok=$((n_ok + 1))
                fi
        done <<<"$host_list"
        [ "$n_ok" -eq "$(wc -l <<<"$host_list")" ] && echo "ok: $name: all $n_ok artifacts as on the host"
done

echo "${#tools[@]} legitimate tools run, ${#failed[@]} failed"
for name in "${failed[@]}"; do
        echo "  $name: ${cause[$name]}" >&2
done
[ "${#failed[@]}" -eq 0 ] || fail "${#failed[@]} of ${#tools[@]} legitimate tools failed: ${failed[*]}"
