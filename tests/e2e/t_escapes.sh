# The four canned escape attempts of examples/escapes/, each refused by the Python layers
# with its exact reason: three by the pre-check (the tool never runs, status blocked), the
# read of /etc/passwd through a path built at run time by the audit hook (the tool catches
# the PermissionError and says so; the refusal is on the record all the same). The host is
# untouched. Controls: on the host, the same scripts do connect-or-fail, fork, write and read.
. "$(dirname "$0")/lib.sh"
E="$TOP/examples/escapes"

# The first refusal event of the last run, as "layer: message".
refusal() {
        j '[.events[] | select((.layer == "precheck" or .layer == "audit") and .kind == "blocked")][0] | "\(.layer): \(.message)"'
}

run_json "$E/net_connect.py"
expect_eq "net_connect: status" blocked "$(j .status)"
expect_eq "net_connect: refusal" "precheck: blocked: import socket (network denied by policy)" "$(refusal)"
expect_eq "net_connect: nothing ran" "" "$(j .stdout)"

run_json "$E/fork.py"
expect_eq "fork: status" blocked "$(j .status)"
expect_eq "fork: refusal" "precheck: blocked: os.fork (process creation denied by policy)" "$(refusal)"
expect_eq "fork: line of the finding" 14 "$(j '[.events[] | select(.layer == "precheck")][0].line')"
expect_eq "jail processes left on the host" 0 "$(jail_procs_left)"
# Control: on the host the same script forks.
expect_match "control: fork.py on the host" '^fork succeeded' "$($PY "$E/fork.py")"

run_json "$E/write_outside.py"
expect_eq "write_outside: status" blocked "$(j .status)"
expect_eq "write_outside: refusal" \
        "precheck: blocked: write path './artifacts/../outside.txt' outside ALLOWED_WRITE_PATHS (./artifacts)" "$(refusal)"
rundir=$(dirname "$(j .artifacts_dir)")
[ ! -e "$rundir/outside.txt" ] || fail "write_outside: $rundir/outside.txt exists on the host"
echo "ok: write_outside: nothing was written next to the run's artifacts on the host"
mkdir -p "$T/scratch/artifacts"
expect_eq "control: write_outside on the host" "write succeeded: outside.txt now exists next to artifacts/" \
        "$(cd "$T/scratch" && $PY "$E/write_outside.py")"

run_json "$E/read_passwd.py"
expect_eq "read_passwd: status (the tool caught the refusal)" ok "$(j .status)"
expect_eq "read_passwd: refusal" \
        "audit: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)" "$(refusal)"
expect_eq "read_passwd: what the tool saw" \
        "read /etc/passwd failed: SandboxBlocked: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)" \
        "$(j .stdout)"
# Control: on the host the same script reads the file.
expect_match "control: read_passwd.py on the host" '^read /etc/passwd: first [0-9]+ lines' "$($PY "$E/read_passwd.py")"
