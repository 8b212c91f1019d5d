# The four canned escape attempts of examples/escapes/, and what the jail does about each
# TODAY (namespaces, rlimits, cgroup; the Python and seccomp layers come later), asserted as
# it is: the network is unreachable, fork succeeds but only inside the jail's own pid
# namespace, the write outside artifacts/ hits a read-only file system, and /etc/passwd is
# the jail's synthetic one. Every run's status is ok (each script catches its own error).
# Controls: on the host, the same scripts do write, do show the host's pids and passwd.
. "$(dirname "$0")/lib.sh"
E="$TOP/examples/escapes"

run_json "$E/net_connect.py"
expect_eq "net_connect: status" ok "$(j .status)"
expect_eq "net_connect: what the tool saw" "connect 127.0.0.1:8080: OSError: [Errno 101] Network is unreachable" "$(j .stdout)"

run_json "$E/fork.py"
expect_eq "fork: status" ok "$(j .status)"
out=$(j .stdout)
expect_match "fork: succeeds, in the jail's pid namespace" '^fork succeeded: child pid [0-9]+ \(parent pid [0-9]+\), exit status 0$' "$out"
parent=$(sed -E 's/.*parent pid ([0-9]+).*/\1/' <<<"$out")
child=$(sed -E 's/.*child pid ([0-9]+) .*/\1/' <<<"$out")
# pid 1 is the jail's init, the runner is 2: small numbers only a pid namespace of its own gives.
expect_eq "fork: the runner's pid in its namespace" 2 "$parent"
[ "$child" -gt 2 ] && [ "$child" -lt 100 ] || fail "fork: child pid $child is not a small pid of the jail's namespace"
echo "ok: fork: child pid $child in the jail's pid namespace"
expect_eq "jail processes left on the host" 0 "$(jail_procs_left)"
# Control: on the host the same script reports host pids.
host_out=$($PY "$E/fork.py")
host_parent=$(sed -E 's/.*parent pid ([0-9]+).*/\1/' <<<"$host_out")
[ "$host_parent" -gt 2 ] || fail "control: on the host, fork.py's parent pid is $host_parent"
echo "ok: control: on the host the same script reports parent pid $host_parent"

run_json "$E/write_outside.py"
expect_eq "write_outside: status" ok "$(j .status)"
expect_eq "write_outside: what the tool saw" "write failed: OSError: [Errno 30] Read-only file system: './artifacts/../outside.txt'" "$(j .stdout)"
rundir=$(dirname "$(j .artifacts_dir)")
[ -d "$rundir" ] || fail "run directory $rundir is not there"
[ ! -e "$rundir/outside.txt" ] || fail "write_outside: $rundir/outside.txt exists on the host"
expect_eq "write_outside: artifacts listed" 0 "$(j '.artifacts | length')"
echo "ok: write_outside: nothing was written next to the run's artifacts on the host"
# Control: on the host, in a scratch directory with an artifacts/, the write succeeds.
mkdir -p "$T/scratch/artifacts"
expect_eq "control: write_outside on the host" "write succeeded: outside.txt now exists next to artifacts/" \
        "$(cd "$T/scratch" && $PY "$E/write_outside.py")"
[ -f "$T/scratch/outside.txt" ] || fail "control: $T/scratch/outside.txt was not written"

run_json "$E/read_passwd.py"
expect_eq "read_passwd: status" ok "$(j .status)"
out=$(j .stdout)
sed 's/^/    /' <<<"$out"
expect_eq "read_passwd: the lines it got" "read /etc/passwd: first 3 lines" "$(head -1 <<<"$out")"
expect_eq "read_passwd: the synthetic passwd's users" "root tool nobody" \
        "$(tail -n +2 <<<"$out" | sed -E 's/^ +//' | cut -d: -f1 | paste -sd' ')"
host_only=$(cut -d: -f1 /etc/passwd | grep -vxE 'root|tool|nobody')
[ -n "$host_only" ] || fail "control: the host's /etc/passwd has no user beyond root, tool and nobody"
pattern="^ +($(paste -sd'|' <<<"$host_only" | sed 's/[.]/\\./g')):"
expect_eq "read_passwd: host-only users in the tool's output" 0 "$(grep -cE "$pattern" <<<"$out")"
# Control: on the host the same script prints host-only users, which the check above catches.
n=$($PY "$E/read_passwd.py" | grep -cE "$pattern")
[ "$n" -gt 0 ] || fail "control: read_passwd.py on the host shows no host-only user: the check cannot see a leak"
echo "ok: control: on the host the same script shows $n host-only users"
