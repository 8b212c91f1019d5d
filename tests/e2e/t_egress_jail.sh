# One path out of the jail (issue 17 part 2, docs/egress.md): a run granted network reaches
# anvil-egress, and nothing else, through the relay on its own loopback (HTTP(S)_PROXY). The
# servers and the proxy are in a network namespace this test makes (as t_egress.sh does); the
# supervisor is the suite's (and the bare one, Python layers off), sent the egress fd by
# egress_run.py as the broker will send it. Each refusal is checked by its message, verbatim;
# each has its control (the same tool reaching an approved host, or the same tool without the
# grant refused as today).
. "$(dirname "$0")/lib.sh"
EGR=$T/egr
if [ -n "$ROOTLESS_USER" ]; then
        # A rootless supervisor grants no network (not built for it): it denies network,
        # with its reason, even with an egress fd (the proxy here as the same user, on the
        # host's network namespace: the run reaches nothing, being denied first).
        mkdir -p "$EGR" && chown "$ROOTLESS_USER:" "$EGR"
        as_supervisor "$ANVIL_BUILD/anvil-egress" --control "$EGR/control.sock" --run-dir "$EGR/runs" >"$T/egr.log" 2>&1
        for _ in $(seq 50); do grep -q 'listening on' "$T/egr.log" && break; sleep 0.1; done
        grep -q 'listening on' "$T/egr.log" || fail "anvil-egress did not start: $(cat "$T/egr.log")"
        echo 'import urllib.request' >"$T/t.py"
        timeout 60 "$PY" "$TOP/tests/e2e/egress_run.py" "$ANVIL_SUP_SOCKET" "$EGR/control.sock" '{"hosts": ["web.test"]}' \
                "$T/t.py" "$T/rl.ev" >"$T/rl.json" 2>"$T/rl.err" || fail "egress_run.py: $(cat "$T/rl.err")"
        expect_eq "rootless: the denial" "capability network denied: a rootless supervisor grants no network: its jails' way to the egress proxy is built and tested under a root supervisor only" \
                "$(jq -r '.events[] | select(.kind == "capability_denied") | .message' "$T/rl.json")"
        expect_eq "rootless: status" blocked "$(jq -r .status "$T/rl.json")"
        expect_eq "rootless: no egress in the facts" false "$(jq -r .blast_facts.egress "$T/rl.json")"
        exit 0
fi
command -v ip >/dev/null || fail "no ip (iproute2)"
"$PY" -c "import requests" 2>/dev/null || fail "no python3-requests (scripts/deps.sh)"

NS=anvil-egj-$$
cleanup_ns() {
        cleanup
        ip netns del "$NS" 2>/dev/null
        rm -rf "/etc/netns/$NS"
}
trap cleanup_ns EXIT

ip netns add "$NS" || fail "ip netns add failed"
ip -n "$NS" link set lo up
for a in 11.0.0.10/32 11.0.0.20/32; do ip -n "$NS" addr add "$a" dev lo; done
mkdir -p "/etc/netns/$NS"
echo "nameserver 127.0.0.1" >"/etc/netns/$NS/resolv.conf"
NSX=(ip netns exec "$NS")
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 -subj /CN=web.test \
        -addext subjectAltName=DNS:web.test 2>/dev/null || fail "openssl req failed"
cat >"$T/zone.json" <<'JSON'
{"names": {"web.test": ["11.0.0.10"], "evil.test": ["11.0.0.20"]},
 "http": ["11.0.0.10", "11.0.0.20"], "tls": ["11.0.0.10"], "slow": []}
JSON
"${NSX[@]}" "$PY" "$TOP/tests/e2e/egress_net.py" "$T/zone.json" "$T/cert.pem" "$T/key.pem" "$T/net.log" &
OWN_PIDS+=("$!")
for _ in $(seq 50); do grep -q '^ready' "$T/net.log" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$T/net.log" || fail "the servers did not start: $(cat "$T/net.log")"

start_egress() {
        mkdir -p "$EGR" && chown 65534:65534 "$EGR"
        "${NSX[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups -- "$ANVIL_BUILD/anvil-egress" \
                --control "$EGR/control.sock" --run-dir "$EGR/runs" >>"$T/egr.log" 2>&1 &
        EGR_PID=$!
        OWN_PIDS+=("$EGR_PID")
        for _ in $(seq 50); do [ -S "$EGR/control.sock" ] && grep -q 'listening on' "$T/egr.log" && break; sleep 0.1; done
        grep -q 'listening on' "$T/egr.log" || fail "anvil-egress did not start: $(cat "$T/egr.log")"
}
start_egress

SPEC='{"hosts": ["web.test"], "limits": {"head_s": 2, "idle_s": 5}}'
# grun NAME TOOL [egress_run options]: the result JSON in $T/NAME.json, the proxy's events in
# $T/NAME.ev; SOCK overrides the supervisor (the bare one)
grun() {
        local name=$1 tool=$2
        shift 2
        timeout 120 "$PY" "$TOP/tests/e2e/egress_run.py" "${SOCK:-$ANVIL_SUP_SOCKET}" "$EGR/control.sock" "$SPEC" \
                "$tool" "$T/$name.ev" --input ca.pem="$T/cert.pem" "$@" >"$T/$name.json" 2>"$T/$name.err" ||
                fail "egress_run.py $name: $(cat "$T/$name.err")"
}
r() { jq -r "$2" "$T/$1.json"; }
out() { r "$1" .stdout; }
proxy_events() { jq -r 'select(.type == "event") | .event.message' "$T/$1.ev"; }

cat >"$T/urllib.py" <<'PY'
import ssl, sys, urllib.error, urllib.request
ctx = ssl.create_default_context(cafile="inputs/ca.pem")
for url in sys.argv[1:] or ["http://web.test/", "https://web.test/", "http://evil.test/", "http://11.0.0.10/"]:
    try:
        with urllib.request.urlopen(url, context=ctx if url.startswith("https") else None, timeout=20) as f:
            print(url, "->", f.read().decode().strip())
    except urllib.error.HTTPError as e:
        print(url, "->", e.code, e.read().decode().strip())
    except Exception as e:
        print(url, "-> refused:", type(e).__name__)
PY

echo "-- urllib: HTTP and HTTPS (CONNECT) to the approved host; another host, an IP literal refused at the proxy"
grun urllib "$T/urllib.py"
expect_eq "status" ok "$(r urllib .status)"
expect_eq "urllib's output" "http://web.test/ -> hello from web.test (11.0.0.10)
https://web.test/ -> hello from web.test (11.0.0.10)
http://evil.test/ -> 403 blocked at proxy: GET evil.test:80 (host not approved)
http://11.0.0.10/ -> 403 blocked at proxy: GET 11.0.0.10:80 (IP literal)" "$(out urllib)"
expect_eq "capabilities granted" '["network"]' "$(r urllib '.capabilities.granted | tojson')"
expect_eq "the grant's event" "capability network granted" \
        "$(r urllib '.events[] | select(.kind == "capability_granted") | .message')"
expect_eq "blast facts: egress" true "$(r urllib .blast_facts.egress)"
proxy_events urllib | grep -qxF "blocked at proxy: GET evil.test:80 (host not approved)" ||
        fail "no proxy event for evil.test: $(proxy_events urllib)"
proxy_events urllib | grep -q "^allowed at proxy: CONNECT web.test:443 (11.0.0.10): " ||
        fail "no allowed CONNECT: $(proxy_events urllib)"
echo "ok: the proxy's events: $(proxy_events urllib | wc -l) decisions"
grep -q "^GET / HTTP/1.1 evil" "$T/net.log" && fail "evil.test's server was reached"
echo "observed: the granted urllib run (4 requests, one TLS) took $(r urllib .wall_ms) ms"

echo "-- requests: HTTP and HTTPS through the proxy, verified against the run's CA"
cat >"$T/requests.py" <<'PY'
import requests
for url in ["http://web.test/", "https://web.test/", "http://evil.test/"]:
    try:
        r = requests.get(url, verify="inputs/ca.pem", timeout=20)
        print(url, "->", r.status_code, r.text.strip())
    except Exception as e:
        print(url, "-> refused:", type(e).__name__)
PY
grun requests "$T/requests.py"
expect_eq "requests' output" "http://web.test/ -> 200 hello from web.test (11.0.0.10)
https://web.test/ -> 200 hello from web.test (11.0.0.10)
http://evil.test/ -> 403 blocked at proxy: GET evil.test:80 (host not approved)" "$(out requests)"

echo "-- the tool's own way out: resolution and other addresses refused (audit hook), the proxy's allowed"
cat >"$T/direct.py" <<'PY'
import socket
def t(what, f):
    try:
        f()
        print(what, "ok")
    except Exception as e:
        print(what, "->", e)
t("resolve", lambda: socket.getaddrinfo("web.test", 80))
t("gethostbyname", lambda: socket.gethostbyname("web.test"))
t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
t("inet6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
t("connect", lambda: socket.create_connection(("11.0.0.10", 80), timeout=5))
t("loopback", lambda: socket.create_connection(("127.0.0.1", 80), timeout=5))
t("proxy", lambda: socket.create_connection(("127.0.0.1", 3128), timeout=5).close())
PY
grun direct "$T/direct.py"
W="network only through the run's egress proxy (HTTP_PROXY, 127.0.0.1:3128)"
expect_eq "the tool's own attempts" "resolve -> blocked at runtime: socket.getaddrinfo('web.test', 80) ($W)
gethostbyname -> blocked at runtime: socket.gethostbyname ($W)
udp -> blocked at runtime: socket.socket(AF_INET, SOCK_DGRAM) ($W)
inet6 -> blocked at runtime: socket.socket(AF_INET6, SOCK_STREAM) ($W)
connect -> blocked at runtime: socket.getaddrinfo('11.0.0.10', 80) ($W)
loopback -> blocked at runtime: socket.getaddrinfo('127.0.0.1', 80) ($W)
proxy ok" "$(out direct)"

echo "-- the same with the Python layers off: seccomp, Landlock and the namespace hold alone"
cat >"$T/raw.py" <<'PY'
import errno, socket
def t(what, f):
    try:
        f()
        print(what, "ok")
    except OSError as e:
        print(what, "->", errno.errorcode.get(e.errno, e.errno))
t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
t("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
t("inet6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
t("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
def connect(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(addr)
t("connect 11.0.0.10:80", lambda: connect(("11.0.0.10", 80)))
t("connect 127.0.0.1:80", lambda: connect(("127.0.0.1", 80)))
t("connect the proxy", lambda: connect(("127.0.0.1", 3128)))
def bind():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 8080))
t("bind", bind)
t("resolve", lambda: socket.getaddrinfo("web.test", 80))
PY
SOCK=$ANVIL_BARE_SOCKET grun raw "$T/raw.py"
expect_eq "layers off" true "$(r raw '[.events[] | select(.kind == "layers_disabled")] | length == 1')"
expect_eq "the kernel layers alone" "udp -> EPERM
raw -> EPERM
inet6 -> EPERM
netlink -> EPERM
connect 11.0.0.10:80 -> EPERM
connect 127.0.0.1:80 -> EPERM
connect the proxy ok
bind -> EPERM
resolve -> -2" "$(out raw)"
expect_eq "seccomp's record" "socket(AF_INET, SOCK_DGRAM)
socket(AF_INET, SOCK_RAW)
socket(AF_INET6, SOCK_STREAM)
socket(AF_NETLINK, SOCK_RAW)
connect(11.0.0.10:80)
connect(127.0.0.1:80)
bind(127.0.0.1:8080)" "$(r raw '.events[] | select(.layer == "seccomp") | .op')"

echo "-- Landlock and the namespace alone (a test build's runner that loads no filter, layers off)"
start_sup noseccomp 60000000 --test-no-python-layers --test-skip-seccomp --spares 0 --max-runs 2
cat >"$T/ll.py" <<'PY'
import errno, socket
def connect(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(addr)
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def bind():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 8080))
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print("11.0.0.10:80", connect(("11.0.0.10", 80)))
print("11.0.0.10:3128", connect(("11.0.0.10", 3128)))
print("127.0.0.1:80", connect(("127.0.0.1", 80)))
print("127.0.0.1:3128", connect(("127.0.0.1", 3128)))
print("bind", bind())
PY
SOCK=$T/noseccomp.sock grun ll "$T/ll.py"
# Landlock refuses every port but 3128 (EACCES); 3128 anywhere but the jail's loopback has no
# route (the namespace has lo alone); only the relay answers.
expect_eq "Landlock and the namespace, no seccomp" "11.0.0.10:80 EACCES
11.0.0.10:3128 ENETUNREACH
127.0.0.1:80 EACCES
127.0.0.1:3128 ok
bind EACCES" "$(out ll)"

echo "-- network not granted: the same tools refused as today (controls)"
grun denied "$T/urllib.py" --no-approve --no-egress
expect_eq "not approved, no egress: status" blocked "$(r denied .status)"
echo "observed: the same tool not granted took $(r denied .wall_ms) ms (refused by the pre-check)"
expect_eq "the denial" "capability network denied: not approved" \
        "$(r denied '.events[] | select(.kind == "capability_denied") | .message')"
expect_eq "no egress in the facts" false "$(r denied .blast_facts.egress)"
grun noegress "$T/urllib.py" --no-egress
expect_eq "approved without an egress fd" "capability network denied: the server grants no network until egress through the broker exists" \
        "$(r noegress '.events[] | select(.kind == "capability_denied") | .message')"
expect_eq "approved without an egress fd: status" blocked "$(r noegress .status)"
grun stray "$T/urllib.py" --no-approve
expect_eq "an egress fd without approval" "bad_request: run_request.egress: an egress socket came with a run that is not approved for network; send it only with network requested and approved" \
        "$(r stray '.code + ": " + .message')"
# The broker gives the egress socket: a client's is refused, never passed on to the supervisor
# (it would bind a socket of the client's choosing into the jail).
SOCK=$ANVIL_SOCKET grun via_broker "$T/urllib.py"
expect_eq "an egress fd from a broker's client" "bad_request: run_request.egress: only the broker gives a run its egress socket; send network in capabilities_requested and capabilities_approved" \
        "$(r via_broker '.code + ": " + .message')"
SOCK=$ANVIL_BARE_SOCKET grun bare_denied "$T/raw.py" --no-approve --no-egress
expect_eq "not granted, layers off" "udp -> EPERM
raw -> EPERM
inet6 -> EPERM
netlink -> EPERM
connect 11.0.0.10:80 -> EPERM
connect 127.0.0.1:80 -> EPERM
connect the proxy -> EPERM
bind -> EPERM
resolve -> -2" "$(out bare_denied)"

echo "-- a slowloris client in the jail: cut by the proxy, the relay serving on"
cat >"$T/slow.py" <<'PY'
import socket, time, urllib.request
t0 = time.monotonic()
held = []
for i in range(20):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=15)
    s.sendall(b"GET http://web.test/ HTTP/1.1\r\n")
    held.append(s)
ended = 0
for s in held:
    try:
        ended += s.recv(4096) is not None
    except OSError:
        ended += 1
print("ended", ended, "of", len(held), "within 15 s:", time.monotonic() - t0 < 15)
for s in held:
    s.close()
with urllib.request.urlopen("http://web.test/", timeout=20) as f:
    print("then:", f.read().decode().strip())
PY
grun slow "$T/slow.py"
echo "observed: the slowloris run took $(r slow .wall_ms) ms"
expect_eq "slowloris" "ended 20 of 20 within 15 s: True
then: hello from web.test (11.0.0.10)" "$(out slow)"

echo "-- the proxy killed mid-run: a refusal, never an open network"
cat >"$T/killed.py" <<'PY'
import time, urllib.request
with urllib.request.urlopen("http://web.test/", timeout=20) as f:
    print("before:", f.read().decode().strip())
time.sleep(4)
for url in ["http://web.test/", "http://11.0.0.10/"]:
    try:
        with urllib.request.urlopen(url, timeout=10) as f:
            print("after:", f.read().decode().strip())
    except OSError as e:  # URLError, RemoteDisconnected, ConnectionResetError: the end, never a reply
        print("after: refused, the connection ended")
PY
timeout 120 "$PY" "$TOP/tests/e2e/egress_run.py" "$ANVIL_SUP_SOCKET" "$EGR/control.sock" "$SPEC" "$T/killed.py" \
        "$T/killed.ev" >"$T/killed.json" 2>"$T/killed.err" &
RUN_PID=$!
OWN_PIDS+=("$RUN_PID")
sleep 2.5
kill -9 "$EGR_PID"
wait "$RUN_PID" || fail "egress_run.py killed: $(cat "$T/killed.err")"
expect_eq "proxy killed" "before: hello from web.test (11.0.0.10)
after: refused, the connection ended
after: refused, the connection ended" "$(out killed)"
start_egress

echo "-- direct mode (no namespaces): network denied, with its reason"
start_sup direct 50000000 --test-no-userns --spares 1 --max-runs 2
SOCK=$T/direct.sock grun direct_mode "$T/urllib.py"
expect_eq "direct: the denial" "capability network denied: a direct-mode jail has no network namespace of its own to bind an egress socket into" \
        "$(r direct_mode '.events[] | select(.kind == "capability_denied") | .message')"
expect_eq "direct: status" blocked "$(r direct_mode .status)"
expect_eq "direct: no egress in the facts" false "$(r direct_mode .blast_facts.egress)"

echo "-- the grant is never a warm jail's"
expect_eq "a granted run is cold" 0 "$(r urllib '[.events[] | select(.kind == "warm")] | length')"
