# Landlock holds on its own, below Python, and its refusals are explained from outside the jail
# by the kernel's audit records, with their exact messages. Against the supervisor with the
# Python layers off (bare_json, a test build's mode), so nothing but the kernel refuses; the
# suite's supervisors run with --enable-kernel-audit (tests/run.sh).
#   reads:  C-level reads of the jail's /etc/hostname (ctypes libc open, numpy.fromfile,
#           os.open) fail with EACCES and are explained; control: the same calls on /etc/hosts,
#           a file of the same directory, mode and owner, succeed, and /etc/hostname is there
#           and world-readable (so it is not the file's permissions that refuse)
#   writes: a C-level write to /dev/urandom (a world-writable device: only Landlock refuses
#           it) fails with EACCES and is explained; control: the same write to /dev/null
#           succeeds. A fifo in /tmp is refused and explained; control: a directory there is
#           made. Writes into /work/inputs and /usr fail too, refused by the files'
#           permissions and the read-only mounts before Landlock is asked: the kernel has
#           nothing of Landlock to explain there, and the trace says nothing (checked)
#   TCP:    a connect to a listener on the host's loopback fails with EACCES (Landlock's; a
#           network namespace alone gives ENETUNREACH: the control runs the same tool under
#           `unshare -n`, where a bind succeeds too), is explained, and the listener counts
#           nothing; control: from the host, it counts the connection
#   bounds: a tool refused 300 times leaves at most 32 landlock events and says how many more
#   runs:   12 runs at once, each refused a connect to a port of its own: each refusal is in
#           its own run's trace, and only there
#   quiet:  the runner's own check (it lists "/" before the tool's first line) is no event
. "$(dirname "$0")/lib.sh"

LPID=
stop_listener() {
        if [ -n "$LPID" ]; then
                kill "$LPID" 2>/dev/null
                wait "$LPID" 2>/dev/null
                LPID=
        fi
}
trap 'stop_listener; cleanup' EXIT

landlock_msgs() { # the landlock events' messages of the last result, one a line
        j '.events[] | select(.layer == "landlock" and .kind == "blocked") | .message'
}
expect_explained() { # what: the last run's kernel audit status says it was explained (or, in
        # the rootless pass, that it could not be, and why)
        expect_eq "$1: landlock in force" 1 "$(j '[.isolation.mechanisms[] | select(test("^landlock ABI [0-9]+: fs"))] | length')"
        if [ "$EXPLAINS" = 1 ]; then
                expect_eq "$1: explained" 1 "$(j '[.isolation.mechanisms[] | select(. == "kernel audit: on, landlock denials explained")] | length')"
        else
                expect_match "$1: not explained, and said so" '^kernel audit: off: landlock denials are refused but not explained \(' \
                        "$(j '.isolation.mechanisms[] | select(startswith("kernel audit"))')"
        fi
}

# ---- a run with nothing refused: the runner's own check is not the tool's event ----
tool quiet.py <<'PY'
print("quiet")
PY
bare_json "$T/quiet.py"
expect_eq "quiet: status" ok "$(j .status)"
expect_eq "quiet: landlock events" 0 "$(j '[.events[] | select(.layer == "landlock")] | length')"
expect_explained quiet

# ---- reads ----
tool read.py <<'PY'
import ctypes, errno, os, stat
import numpy as np
libc = ctypes.CDLL(None, use_errno=True)
def c_open(path):
    fd = libc.open(path.encode(), os.O_RDONLY)
    if fd < 0:
        return "errno " + errno.errorcode[ctypes.get_errno()]
    os.close(fd)
    return "opened"
def np_read(path):
    try:
        return "read %d bytes" % len(np.fromfile(path, dtype=np.uint8))
    except OSError as e:
        return "errno " + errno.errorcode[e.errno]
def os_open(path):
    try:
        os.close(os.open(path, os.O_RDONLY))
        return "opened"
    except OSError as e:
        return "errno " + errno.errorcode[e.errno]
for path in ("/etc/hostname", "/etc/hosts"):
    st = os.stat(path)
    print(path, "mode", oct(stat.S_IMODE(st.st_mode)), "ctypes", c_open(path), "| numpy", np_read(path),
          "| os.open", os_open(path))
PY
bare_json "$T/read.py"
expect_eq "read: status" ok "$(j .status)"
expect_eq "read: /etc/hostname, refused three ways" \
        "/etc/hostname mode 0o644 ctypes errno EACCES | numpy errno EACCES | os.open errno EACCES" \
        "$(j .stdout | grep '^/etc/hostname')"
expect_eq "read: control: /etc/hosts, same directory and mode, read three ways" \
        "/etc/hosts mode 0o644 ctypes opened | numpy read 40 bytes | os.open opened" "$(j .stdout | grep '^/etc/hosts')"
expect_eq "read: the three refusals, explained" \
        "$(explained "blocked at kernel: read '/etc/hostname' (outside the jail's read roots, landlock)
blocked at kernel: read '/etc/hostname' (outside the jail's read roots, landlock)
blocked at kernel: read '/etc/hostname' (outside the jail's read roots, landlock)")" "$(landlock_msgs)"
expect_eq "read: the kernel's blockers" "$(explained "fs.read_file")" \
        "$(j '[.events[] | select(.layer == "landlock") | .reason] | unique | join(" ")')"
expect_explained read

# ---- writes ----
echo "region,amount" >"$T/sales.csv"
tool write.py <<'PY'
import ctypes, errno, os, stat
libc = ctypes.CDLL(None, use_errno=True)
def c_write(path):
    fd = libc.open(path.encode(), os.O_WRONLY)
    if fd < 0:
        return "errno " + errno.errorcode[ctypes.get_errno()]
    n = libc.write(fd, b"x", 1)
    os.close(fd)
    return "wrote %d" % n
for path in ("/dev/urandom", "/dev/null", "/work/inputs/sales.csv", "/usr/lib/os-release"):
    print(path, "mode", oct(stat.S_IMODE(os.stat(path).st_mode)), "write", c_write(path))
for name, f in (("mkfifo /tmp/fifo", lambda: os.mkfifo("/tmp/fifo")), ("mkdir /tmp/dir", lambda: os.mkdir("/tmp/dir"))):
    try:
        f()
        print(name, "made")
    except OSError as e:
        print(name, "errno", errno.errorcode[e.errno])
PY
bare_json "$T/write.py" --input "$T/sales.csv"
expect_eq "write: status" ok "$(j .status)"
expect_eq "write: /dev/urandom, world-writable, refused" "/dev/urandom mode 0o666 write errno EACCES" \
        "$(j .stdout | grep '^/dev/urandom')"
expect_eq "write: control: /dev/null written" "/dev/null mode 0o666 write wrote 1" "$(j .stdout | grep '^/dev/null')"
# (by the file's permissions: it is root's; rootless, it is the jail's own uid's, and the
# read-only mount refuses it)
expect_match "write: ./inputs refused (by the file's permissions, or the read-only mount)" \
        '^/work/inputs/sales.csv mode 0o644 write errno (EACCES|EROFS)$' "$(j .stdout | grep '^/work/inputs')"
expect_eq "write: /usr refused (by the file's permissions)" "/usr/lib/os-release mode 0o644 write errno EACCES" \
        "$(j .stdout | grep '^/usr/')"
expect_eq "write: a fifo in /tmp refused" "mkfifo /tmp/fifo errno EACCES" "$(j .stdout | grep '^mkfifo')"
expect_eq "write: control: a directory in /tmp made" "mkdir /tmp/dir made" "$(j .stdout | grep '^mkdir')"
expect_eq "write: the refusals Landlock made, explained (and only those)" \
        "$(explained "blocked at kernel: write '/dev/urandom' (outside the jail's write roots, landlock)
blocked at kernel: create a fifo in '/tmp' (device nodes, fifos and socket files denied, landlock)")" "$(landlock_msgs)"
expect_explained write
expect_eq "write: the input on the host (passed as an fd), unchanged" "region,amount" "$(cat "$T/sales.csv")"

# ---- TCP to the host's loopback ----
# seccomp refuses a TCP socket before Landlock would see its connect (t_seccomp.sh): to show
# Landlock holding alone, a supervisor of the test build whose runners load no filter.
NOSC="$T/noseccomp.sock"
as_supervisor "$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$NOSC" --state-dir "$T/noseccomp" --test-no-python-layers \
        --test-skip-seccomp --spares 0 --max-runs 16 --uid-base $((ANVIL_E2E_UID_BASE + 330000000)) $(explained --enable-kernel-audit) \
        >"$T/noseccomp.log" 2>&1
for _ in $(seq 100); do [ -S "$NOSC" ] && break; sleep 0.1; done
[ -S "$NOSC" ] || fail "the supervisor without seccomp did not start: $(cat "$T/noseccomp.log")"
cat >"$T/listen.py" <<'PY'
import os, socket, sys
out = sys.argv[1]
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.bind(("127.0.0.1", 0))
tcp.listen(16)
def save(name, text):
    with open(name + ".tmp", "w") as f:
        f.write(text)
    os.rename(name + ".tmp", name)
save(out, "0\n")
save(out + ".port", f"{tcp.getsockname()[1]}\n")
n = 0
while True:
    conn, _ = tcp.accept()
    conn.close()
    n += 1
    save(out, f"{n}\n")
PY
$PY "$T/listen.py" "$T/count" &
LPID=$!
for _ in $(seq 100); do [ -s "$T/count.port" ] && break; sleep 0.1; done
[ -s "$T/count.port" ] || fail "the listener did not start"
PORT=$(cat "$T/count.port")
echo "ok: a listener (pid $LPID) on the host's 127.0.0.1:$PORT"
cat >"$T/connect.py" <<PY
import errno, socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(3)
try:
    s.connect(("127.0.0.1", $PORT))
    print("connect: connected")
except OSError as e:
    print("connect: errno", errno.errorcode.get(e.errno))
b = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
try:
    b.bind(("127.0.0.1", 0))
    print("bind: bound")
except OSError as e:
    print("bind: errno", errno.errorcode.get(e.errno))
PY
ANVIL_BARE_SOCKET="$NOSC" bare_json "$T/connect.py"
expect_eq "tcp: no seccomp filter in this run" "" "$(j '.isolation.mechanisms[] | select(startswith("seccomp"))')"
expect_eq "tcp: status" ok "$(j .status)"
expect_eq "tcp: the jail's connect and bind, refused by Landlock" "connect: errno EACCES
bind: errno EACCES" "$(j .stdout)"
expect_eq "tcp: explained" "$(explained "blocked at kernel: connect to 127.0.0.1 port $PORT (network denied, landlock)
blocked at kernel: bind a TCP socket to 127.0.0.1 (network denied, landlock)")" "$(landlock_msgs)"
expect_explained tcp
sleep 0.5
expect_eq "tcp: connections the listener saw from the jail" 0 "$(cat "$T/count")"
# Control 1: a network namespace alone (no Landlock) refuses the connect otherwise.
expect_eq "tcp: control: the same tool in a network namespace of its own, without Landlock" \
        "connect: errno ENETUNREACH
bind: bound" "$(unshare -n $PY -I "$T/connect.py")"
# Control 2: from the host it gets through.
expect_eq "tcp: control: the same tool on the host" "connect: connected
bind: bound" "$($PY -I "$T/connect.py")"
for _ in $(seq 50); do [ "$(cat "$T/count")" = 1 ] && break; sleep 0.1; done
expect_eq "tcp: control: the listener counted the host's connection" 1 "$(cat "$T/count")"
stop_listener

# ---- bounds: a tool refused again and again ----
tool flood.py <<'PY'
import os
refused = 0
for i in range(300):
    try:
        os.close(os.open("/etc/hostname", os.O_RDONLY))
    except PermissionError:
        refused += 1
print("refused", refused)
PY
bare_json "$T/flood.py"
expect_eq "flood: status" ok "$(j .status)"
expect_eq "flood: every read refused" "refused 300" "$(j .stdout)"
if [ "$EXPLAINS" = 1 ]; then
        expect_eq "flood: landlock events kept" 32 "$(j '[.events[] | select(.layer == "landlock" and .kind == "blocked")] | length')"
        expect_match "flood: the rest counted" \
                '^[0-9]+ more refusals at kernel \(landlock\) were not recorded \(limit of 32\)$' \
                "$(j '.events[] | select(.layer == "landlock" and .kind == "dropped") | .message')"
        # The kernel's backlog may have dropped some of the 300 records: then the result says so.
        expect_match "flood: the explanation's status" \
                '^kernel audit: on, (landlock denials explained|but landlock denials may be missing here \(the kernel lost [0-9]+ audit records during the run\))$' \
                "$(j '.isolation.mechanisms[] | select(startswith("kernel audit"))')"
else
        expect_eq "flood: no landlock events where none can be explained" 0 "$(j '[.events[] | select(.layer == "landlock")] | length')"
fi

# ---- runs at once: each denial in its own run's trace ----
pids=()
for i in $(seq 1 12); do
        printf 'import socket\ntry:\n    socket.socket().connect(("127.0.0.1", %d))\nexcept OSError as e:\n    print(e.errno)\n' \
                $((40000 + i)) >"$T/c$i.py"
        ANVIL_SOCKET="$NOSC" "$CTL" run "$T/c$i.py" --json >"$T/c$i.json" 2>"$T/c$i.err" &
        pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a concurrent run failed: $(cat "$T"/c*.err)"; done
for i in $(seq 1 12); do
        got=$(jq -r '"\(.stdout | rtrimstr("\n")) \([.events[] | select(.layer == "landlock") | .op] | join(","))"' "$T/c$i.json")
        [ "$got" = "13 $(explained "connect to 127.0.0.1 port $((40000 + i))")" ] || fail "run $i of 12: '$got'"
done
echo "ok: 12 runs at once: each one's refused connect explained in its own trace, and only there"

ANVIL_SOCKET="$ANVIL_BARE_SOCKET" expect_serving
