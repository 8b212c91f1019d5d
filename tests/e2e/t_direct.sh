# The landlock+seccomp rung (DESIGN §6): where no user namespace can be made (simulated with a
# test build's --test-no-userns), jails run on the host's paths, in the run's own directory,
# held by Landlock and seccomp alone, and say so: the probe's tier is landlock+seccomp with
# namespaces not available and why, every run's tier too. With the Python layers off a tool
# can read none of the host's files, list no process of the host, signal none, write nowhere
# but its own directories, open no socket and start no process; controls show the same reads
# work on the host, as the same uid, and that legitimate work (pandas, matplotlib, artifacts)
# still runs. In the rootless pass the supervisor is an ordinary user's (start_sup).
. "$(dirname "$0")/lib.sh"
start_sup direct 700000000 --test-no-userns --test-no-python-layers --spares 1 --max-runs 4
LOG="$T/direct.log"
expect_match "the start-up log says why" "no user namespace can be made here \(test mode \(--test-no-userns\)\)" "$(cat "$LOG")"
ANVIL_SOCKET="$T/direct.sock" "$CTL" probe --json >"$T/probe.json" || fail "probe failed"
p() { jq -r "$1" "$T/probe.json"; }
expect_eq "tier" "landlock+seccomp" "$(p .tier)"
expect_eq "namespaces: not available, and why" \
        "false false false no user namespace can be made here (test mode (--test-no-userns)): jails run on the host's paths" \
        "$(p '.mechanisms[] | select(.name == "namespaces") | "\(.available) \(.probed) \(.in_force) \(.evidence)"')"
for m in seccomp landlock "network isolation" "filesystem isolation"; do
        expect_eq "$m: in force" true "$(p ".mechanisms[] | select(.name == \"$m\") | .in_force")"
done

echo "anvil direct host file $RANDOM" >"$T/hostfile"
chmod 644 "$T/hostfile"
tool escape.py <<PY
import ctypes, errno, os, signal, socket
libc = ctypes.CDLL(None, use_errno=True)
def c_read(path):
    fd = libc.open(path.encode(), os.O_RDONLY)
    if fd < 0:
        return "errno " + errno.errorcode[ctypes.get_errno()]
    os.close(fd)
    return "opened"
def attempt(name, fn):
    try:
        r = fn()
        print(name, "ok", r if r is not None else "")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno))
print("read /etc/passwd", c_read("/etc/passwd"))
print("read hostfile", c_read("$T/hostfile"))
print("read tool.py", c_read("../tool.py"))
attempt("list /proc", lambda: len(os.listdir("/proc")))
attempt("list /", lambda: len(os.listdir("/")))
attempt("write /tmp", lambda: open("/tmp/anvil-direct-escape", "w").write("x"))
attempt("write next to the run", lambda: open("../escape.txt", "w").write("x"))
attempt("signal pid 1", lambda: os.kill(1, 0))
attempt("signal the supervisor", lambda: os.kill($SUP_PID, 0))
attempt("socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM) and None)
attempt("fork", lambda: os.fork() and None)
attempt("read inputs", lambda: len(open("inputs/data.csv").read()))
attempt("write artifacts", lambda: open("artifacts/out.txt", "w").write("ok\n"))
attempt("write tmp", lambda: open(os.environ["TMPDIR"] + "/x", "w").write("x"))
print("cwd ends", os.getcwd().endswith("/jail"), "uid", os.getuid())
PY
printf 'a,b\n1,2\n' >"$T/data.csv"
ANVIL_BARE_SOCKET="$T/direct.sock" bare_json "$T/escape.py" --input "$T/data.csv"
expect_eq "status" ok "$(j .status)"
expect_eq "the run's tier" "landlock+seccomp" "$(j .isolation.tier)"
out=$(j .stdout)
expect_eq "what the tool could do" "read /etc/passwd errno EACCES
read hostfile errno EACCES
read tool.py errno EACCES
list /proc EACCES
list / EACCES
write /tmp EACCES
write next to the run EACCES
signal pid 1 EPERM
signal the supervisor EPERM
socket EPERM
fork EPERM
read inputs ok 8
write artifacts ok 3
write tmp ok 1" "$(grep -v '^cwd' <<<"$out")"
expect_match "in its own directory" "^cwd ends True uid [0-9]+$" "$(grep '^cwd' <<<"$out")"
expect_eq "the artifact, collected" "out.txt" "$(j '[.artifacts[].path] | join(" ")')"
expect_eq "seccomp explained its refusals" \
        "blocked at kernel: socket(AF_INET, SOCK_STREAM) (network denied by seccomp)
blocked at kernel: clone(CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD) (process creation denied by seccomp)" \
        "$(j '.events[] | select(.layer == "seccomp") | .message')"
[ ! -e /tmp/anvil-direct-escape ] || fail "/tmp/anvil-direct-escape was written on the host"
expect_eq "nothing next to the run" "" "$(find "$T/direct/runs" -maxdepth 2 -name escape.txt)"
# Controls: as the run's own uid, outside the jail, the same reads work (and, rootless, where
# the supervisor is the same uid, the signal too: Landlock's scope is what refused it).
uid=$(grep '^cwd' <<<"$out" | awk '{print $NF}')
expect_eq "control: the run's uid reads the host file" "anvil direct host file" \
        "$(setpriv --reuid="$uid" --regid="$uid" --clear-groups cat "$T/hostfile" | cut -d' ' -f1-4)"
expect_match "control: and lists /proc" '^[0-9]+$' \
        "$(setpriv --reuid="$uid" --regid="$uid" --clear-groups $PY -I -c 'import os; print(len(os.listdir("/proc")))')"
if [ -n "$ROOTLESS_USER" ]; then
        expect_eq "control: the same uid signals the supervisor outside the jail" ok \
                "$(setpriv --reuid="$uid" --regid="$uid" --clear-groups $PY -I -c "import os; os.kill($SUP_PID, 0); print('ok')")"
fi

# Legitimate work still runs, and its tier says what held.
run_direct_example() {
        ANVIL_SOCKET="$T/direct.sock" "$CTL" run "$TOP/examples/revenue_by_region.py" --input "$TOP/data/sales.csv" --json \
                >"$T/result.json" || fail "the example failed"
}
run_direct_example
expect_eq "the example: status" ok "$(j .status)"
expect_eq "the example: artifacts" "revenue_by_region.csv revenue_by_region.png" \
        "$(j '[.artifacts[].path] | sort | join(" ")')"
expect_eq "the example: nothing on stderr" "" "$(j .stderr)"
expect_match "the example: blast radius says where" '/jail/artifacts \(each file at most [0-9]+ bytes; their total not bounded\)$' \
        "$(j '.blast_radius.write[0]')"
