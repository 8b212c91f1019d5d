# The README's commands, as a newcomer types them: every shell block marked
# <!-- tested: host --> is run as it is written, in a copy of the checkout's examples/ and
# data/, with `anvilctl` the build's and ANVIL_SOCKET the suite's broker (the one thing the
# README leaves to its default, /run/anvil.sock), and what each printed is checked. The
# `ci` block's `make demo` is run as the script it runs once built (scripts/demo.sh, over this
# build); `make check` is this suite. No shell block may be unmarked (tests/readme_blocks.sh
# --check), and a host block this test has no check for fails it: a command added to the
# README is a command tested.
. "$(dirname "$0")/lib.sh"

"$TOP/tests/readme_blocks.sh" --check "$TOP/README.md" >"$T/check.out" ||
        fail "README blocks not marked as tested: $(cat "$T/check.out")"
echo "ok: every shell block of the README is marked"

# The checkout as the README's commands see it: their paths are relative to its top.
W="$T/anvil"
mkdir -p "$W/tests" "$T/bin"
cp -r "$TOP/examples" "$TOP/data" "$TOP/clients" "$W/"
cp "$TOP/tests/model_server.py" "$W/tests/"
ln -s "$CTL" "$T/bin/anvilctl"
ln -s "$PY" "$T/bin/python3" # Debian's, as a newcomer's python3 is
# A block that fails halfway leaves what it started in the background (the scripted model):
# whatever runs in the copy of the checkout is this test's, and is stopped when it ends.
stop_left() {
        local p
        for p in $(pgrep -f 'model_server\.py'); do
                [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$W" ] && kill "$p" 2>/dev/null
        done
        cleanup
}
trap stop_left EXIT

# expect BLOCK_OUT REGEX...: each extended regex must match a line of the block's output.
expect_lines() {
        local out=$1 re
        shift
        for re in "$@"; do
                grep -Eq -- "$re" "$out" || fail "block at $where: no line of its output matches /$re/: $(tail -20 "$out")"
                echo "ok: $where printed /$re/"
        done
}

# The checks, by the block's first line. Each must be used: a block removed from the README
# leaves its check here unused, which fails too (the README and this test go together).
declare -A used=()
check_block() {
        local first=$1 out=$2
        case "$first" in
        "anvilctl probe")
                used[probe]=1
                expect_lines "$out" '^isolation tier: namespaces\+seccomp\+landlock$' \
                        '^  seccomp +yes +yes +yes +blocked at kernel: socket\(AF_INET, SOCK_STREAM\) \(network denied by seccomp\)' \
                        '^  landlock +yes +yes +yes '
                ;;
        "anvilctl run examples/revenue_by_region.py --input data/sales.csv")
                used[run]=1
                expect_lines "$out" '^run [0-9T]+-[0-9a-f]+: ok \(exit code 0\) in [0-9]+ ms, cpu [0-9]+ ms, peak [0-9.]+ MB; isolation: namespaces\+seccomp\+landlock$' \
                        '^  stdout\| grand total: 168947\.33$' '/artifacts/revenue_by_region\.csv  \([0-9]+ bytes, sha256 [0-9a-f]{64}\)$' \
                        '/artifacts/revenue_by_region\.png  \(' '^blast radius \(namespaces\+seccomp\+landlock\):$'
                ;;
        "anvilctl run examples/escapes/read_passwd.py")
                used[escapes]=1
                expect_eq "block at $where: net_connect.py exits 120 (blocked), read_passwd.py 0" 1 \
                        "$(grep -cx 'exit status 120' "$out")"
                expect_lines "$out" \
                        "audit +blocked +blocked at runtime: open\('/etc/passwd', 'r'\) \(read outside ALLOWED_READ_PATHS\) \(line 16\)$" \
                        '^blocked$' '^blocked: import socket \(network denied by policy\)$' \
                        '^blocked: socket\.socket \(network denied by policy\)$' \
                        '^the pre-check refused the tool \(2 findings\); none of it ran$'
                ;;
        "anvilctl run examples/revenue_by_region.py --input data/sales.csv -o out >/dev/null")
                used[daily]=1
                expect_lines "$out" '^anvilctl: copied 2 of 2 artifacts \([0-9]+ bytes\) to out$' \
                        '^revenue_by_region\.csv$' '^revenue_by_region\.png$' \
                        '^RUN +STATUS +TIME +UID +TOOL$' '^[0-9T]+-[0-9a-f]+  ok +[0-9TZ:-]+  [0-9]+ +revenue_by_region\.py$' \
                        "^  stdout\| arguments: \['--month', '2024-05'\]$" '^exit status 120$'
                [ -s "$W/out/revenue_by_region.csv" ] || fail "block at $where: out/revenue_by_region.csv was not copied out"
                ;;
        "python3 tests/model_server.py --script examples/agent/scripted_model.json --port 18080 \\")
                used[agent]=1
                expect_lines "$out" '^task task-[0-9T]+-[0-9a-f]+$' 'capabilities: the model asks for: network' \
                        'precheck +blocked +blocked: import urllib\.request \(network denied by policy\)' \
                        '^task task-[0-9T]+-[0-9a-f]+: ok$' '^  action 2: run [0-9T]+-[0-9a-f]+: blocked$' \
                        '^deliverable: the action of run ' '/artifacts/revenue_by_region\.csv  \(90 bytes, sha256 '
                # The task reached the scripted model, once per step, and ended it: its server
                # was stopped by the block's own `kill $!`.
                expect_eq "requests the scripted model received" 3 "$(wc -l <"$W/model-requests.jsonl")"
                ;;
        "PYTHONPATH=clients/python python3 - <<'PY'")
                used[python]=1
                expect_lines "$out" '^ok namespaces\+seccomp\+landlock$' '^saved from-python/revenue_by_region\.csv$' \
                        '^saved from-python/revenue_by_region\.png$' \
                        '^blocked precheck blocked: import socket \(network denied by policy\)$'
                # The CSV saved is the tool's: its five regions add up to data/sales.csv's total.
                expect_eq "block at $where: the CSV saved" "region,revenue 5 168947.33" \
                        "$(head -1 "$W/from-python/revenue_by_region.csv") $(awk -F, 'NR > 1 { n++; s += $2 } END { printf "%d %.2f", n, s }' "$W/from-python/revenue_by_region.csv")"
                [ "$(head -c 8 "$W/from-python/revenue_by_region.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] ||
                        fail "block at $where: the PNG saved is no PNG"
                echo "ok: $where saved the CSV and a PNG"
                ;;
        *)
                fail "block at $where: t_readme.sh has no check for a block beginning '$first'"
                ;;
        esac
}

n=0
while IFS= read -r -d '' blk; do
        where=$(head -1 <<<"$blk" | sed 's/^# //')
        first=$(sed -n 2p <<<"$blk")
        n=$((n + 1))
        printf '%s\n' "$blk" >"$T/block$n.sh"
        # As a user types it: a shell in the checkout, each command's failure the block's.
        (cd "$W" && PATH="$T/bin:$PATH" timeout 180 bash -euo pipefail "$T/block$n.sh") >"$T/block$n.out" 2>&1 ||
                fail "block at $where exited $?: $(tail -20 "$T/block$n.out")"
        echo "ok: block at $where ran"
        check_block "$first" "$T/block$n.out"
done < <("$TOP/tests/readme_blocks.sh" host "$TOP/README.md" | awk '
        /^# README\.md:[0-9]+$/ { if (b != "") printf "%s%c", b, 0; b = $0 "\n"; next }
        { b = b $0 "\n" }
        END { if (b != "") printf "%s%c", b, 0 }')
for k in probe run escapes daily agent python; do
        [ -n "${used[$k]:-}" ] || fail "the README has no host block for the check '$k' any more: change this test with it"
done
expect_eq "host blocks run" 6 "$n"

# The developers' block: `make demo`, `make check`, nothing else.
expect_eq "the ci block" "make demo make check" "$("$TOP/tests/readme_blocks.sh" ci "$TOP/README.md" | grep -v '^#' | xargs)"
grep -qx 'make check' "$TOP/.ci/run" || fail ".ci/run does not run make check"
echo "ok: .ci/run runs make check"
# `make demo` is `make deps`, `make`, then this script over the build: run it over this one, its
# supervisor on uids of this suite's, its state below $T.
TMPDIR="$T" ANVIL_DEMO_UID_BASE=$((ANVIL_E2E_UID_BASE + 950000000)) timeout 240 "$TOP/scripts/demo.sh" "$ANVIL_BUILD" \
        >"$T/demo.out" 2>&1 || fail "the demo exited $?: $(tail -20 "$T/demo.out")"
where="make demo"
expect_lines "$T/demo.out" '^isolation tier: namespaces\+seccomp\+landlock$' '^  stdout\| grand total: 168947\.33$' \
        '^  net_connect +STOPPED by the pre-check: blocked: import socket \(network denied by policy\)$' \
        '^  fork +STOPPED by the pre-check: blocked: os\.fork \(process creation denied by policy\)$' \
        "^  write_outside +STOPPED by the pre-check: blocked: write path './artifacts/\.\./outside\.txt' outside ALLOWED_WRITE_PATHS \(\./artifacts\)$" \
        "^  read_passwd +STOPPED by the audit hook: blocked at runtime: open\('/etc/passwd', 'r'\) \(read outside ALLOWED_READ_PATHS\)$" \
        '^task task-[0-9T]+-[0-9a-f]+: ok$'
grep -q 'not built' "$T/demo.out" && fail "the demo still says something is not built: $(grep 'not built' "$T/demo.out")"
echo "ok: the demo claims nothing is missing"
