# A listener on the host's 127.0.0.1 (TCP and UDP, ephemeral ports) counts what reaches it.
# A jailed tool's connect and sendto to it fail, and the counts stay 0. Control: the same
# connect and sendto made on the host, outside the jail, are counted (1 each).
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"

LPID=
stop_listener() {
        if [ -n "$LPID" ]; then
                kill "$LPID" 2>/dev/null
                wait "$LPID" 2>/dev/null
                LPID=
        fi
}
trap 'stop_listener; rm -rf "$T"' EXIT

cat >"$T/listen.py" <<'PY'
import os, select, socket, sys
out = sys.argv[1]
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.bind(("127.0.0.1", 0))
tcp.listen(16)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
counts = {"tcp": 0, "udp": 0}
def save(name, text):
    with open(name + ".tmp", "w") as f:
        f.write(text)
    os.rename(name + ".tmp", name)
save(out, "tcp=0 udp=0\n")
save(out + ".ports", f"{tcp.getsockname()[1]} {udp.getsockname()[1]}\n")
while True:
    ready, _, _ = select.select([tcp, udp], [], [])
    if tcp in ready:
        conn, _ = tcp.accept()
        conn.close()
        counts["tcp"] += 1
    if udp in ready:
        udp.recvfrom(65536)
        counts["udp"] += 1
    save(out, f"tcp={counts['tcp']} udp={counts['udp']}\n")
PY
$PY "$T/listen.py" "$T/count" &
LPID=$!
for _ in $(seq 100); do [ -s "$T/count.ports" ] && break; sleep 0.1; done
[ -s "$T/count.ports" ] || fail "the listener did not start"
read -r TPORT UPORT <"$T/count.ports"
echo "ok: listener (pid $LPID) on 127.0.0.1: tcp $TPORT, udp $UPORT"

# The same tool runs in the jail and, as the control, on the host.
cat >"$T/connect.py" <<PY
import socket
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(("127.0.0.1", $TPORT))
    print("TCP connected")
    s.close()
except OSError as e:
    print(f"TCP failed: {type(e).__name__}: {e}")
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"hello", ("127.0.0.1", $UPORT))
    print("UDP sent")
    u.close()
except OSError as e:
    print(f"UDP failed: {type(e).__name__}: {e}")
PY
bare_json "$T/connect.py"
expect_eq status ok "$(j .status)"
tcp=$(j .stdout | grep '^TCP')
udp=$(j .stdout | grep '^UDP')
echo "in the jail: $tcp; $udp"
expect_match "the jailed connect" '^TCP failed: [A-Za-z]+Error: ' "$tcp"
sleep 1 # anything that did get through has been counted by now
expect_eq "connections and datagrams the listener saw from the jail" "tcp=0 udp=0" "$(cat "$T/count")"

# Control: from the host, both are counted.
out=$($PY "$T/connect.py" 2>&1)
expect_eq "control: connect from the host" "TCP connected
UDP sent" "$out"
for _ in $(seq 50); do [ "$(cat "$T/count")" = "tcp=1 udp=1" ] && break; sleep 0.1; done
expect_eq "control: the listener counted the host's connection and datagram" "tcp=1 udp=1" "$(cat "$T/count")"
kill -0 "$LPID" 2>/dev/null || fail "the listener died"
stop_listener
echo "ok: listener stopped"
