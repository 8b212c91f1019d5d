# Socket activation (broker/sdlisten.c): the broker takes the clients' socket systemd passes
# (LISTEN_PID/LISTEN_FDS, as anvil-broker.socket does; here systemd-socket-activate, which
# speaks the same protocol), serves a run on it, and leaves its path to systemd at exit.
# What is passed is checked: two sockets, a datagram socket, or one bound to another path
# than --listen each stop start-up with a message; variables meant for another process
# (LISTEN_PID not the broker's) are ignored and the broker binds --listen itself.
. "$(dirname "$0")/lib.sh"
command -v systemd-socket-activate >/dev/null || fail "no systemd-socket-activate: apt-get install systemd"
BRO=("$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/bro.sock" --state-dir "$T/bro")
cat >"$T/tool.py" <<'PY'
print("activated", 6 * 7)
PY

# activate NAME ACTIVATE-OPTIONS...: the broker behind systemd-socket-activate, its log in
# $T/NAME.log; it starts at the first connection (anvilctl's, below)
activate() {
        local name=$1
        shift
        systemd-socket-activate "$@" "${BRO[@]}" >"$T/$name.log" 2>&1 &
        ACT_PID=$!
        OWN_PIDS+=("$ACT_PID")
        for _ in $(seq 100); do [ -S "${SOCK:-$T/bro.sock}" ] && break; sleep 0.1; done
}

activate good -l "$T/bro.sock"
ANVIL_SOCKET=$T/bro.sock run_json "$T/tool.py"
expect_eq "the run's status" ok "$(j .status)"
expect_eq "the run's stdout" "activated 42" "$(j .stdout)"
grep -q "the socket passed by systemd (LISTEN_FDS)" "$T/good.log" || fail "the broker does not say it took the passed socket: $(cat "$T/good.log")"
kill "$ACT_PID"
wait "$ACT_PID"
[ -S "$T/bro.sock" ] || fail "the broker removed the socket systemd passed (it is systemd's to remove)"
echo "ok: a run through the passed socket; the socket left to systemd at exit"
rm -f "$T/bro.sock"

# refused NAME MESSAGE ACTIVATE-OPTIONS...: the broker started by a connection exits 1 saying MESSAGE
refused() {
        local name=$1 msg=$2
        shift 2
        activate "$name" "$@"
        ANVIL_SOCKET=${SOCK:-$T/bro.sock} "$CTL" probe >/dev/null 2>&1
        wait "$ACT_PID"
        local rc=$?
        [ "$rc" = 1 ] || fail "$name: the broker exited $rc: $(cat "$T/$name.log")"
        grep -qF "$msg" "$T/$name.log" || fail "$name: expected '$msg' in: $(cat "$T/$name.log")"
        echo "ok: $name: refused: $(grep -o 'socket activation:.*' "$T/$name.log")"
        rm -f "$T/bro.sock" "$T/other.sock"
}
refused two "2 sockets passed (LISTEN_FDS), expected exactly one" -l "$T/bro.sock" -l "$T/other.sock"
# passed KIND NAME MESSAGE: the broker exec'd with fd 3 a socket of KIND (made here, as
# systemd would pass it) and LISTEN_PID its own; it must exit 1 saying MESSAGE
passed() {
        local kind=$1 name=$2 msg=$3
        "$PY" - "$kind" "$T/bro.sock" "${BRO[@]}" >"$T/$name.log" 2>&1 <<'PY'
import os, socket, sys
kind, path, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM)
s.bind(path)
if kind == "listening":
    s.listen(8)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="1")
os.execv(argv[0], argv)
PY
        local rc=$?
        [ "$rc" = 1 ] || fail "$name: the broker exited $rc: $(cat "$T/$name.log")"
        grep -qF "$msg" "$T/$name.log" || fail "$name: expected '$msg' in: $(cat "$T/$name.log")"
        echo "ok: $name: refused: $(grep -o 'socket activation:.*' "$T/$name.log")"
        rm -f "$T/bro.sock"
}
passed dgram datagram "is not a listening Unix stream socket"
passed bound "bound, not listening" "is not a listening Unix stream socket"
SOCK=$T/other.sock refused elsewhere "the socket passed is bound to '$T/other.sock', not to $T/bro.sock" -l "$T/other.sock"

# Variables for another process: ignored, and the broker binds --listen itself.
LISTEN_PID=1 LISTEN_FDS=1 "${BRO[@]}" >"$T/other.log" 2>&1 &
B=$!
OWN_PIDS+=("$B")
for _ in $(seq 100); do [ -S "$T/bro.sock" ] && break; sleep 0.1; done
ANVIL_SOCKET=$T/bro.sock run_json "$T/tool.py"
expect_eq "LISTEN_PID=1: the run's status" ok "$(j .status)"
grep -q "passed by systemd" "$T/other.log" && fail "LISTEN_PID=1: the broker took fd 3 as passed to it"
kill "$B"
wait "$B"
[ ! -e "$T/bro.sock" ] || fail "the broker that bound its socket did not remove it at exit"
echo "ok: LISTEN_PID of another process: ignored; the broker bound and removed --listen itself"
