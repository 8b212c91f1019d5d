# Network with its hosts, end to end (issue 17 part 3, docs/egress.md): anvilctl run --cap
# network=HOSTS through a broker of the test's own, which opens the run on a real anvil-egress
# (started here, as nobody, in a network namespace this test makes, with the servers of
# egress_net.py) and hands its socket to the suite's supervisor. Checked: the proxy's run opened
# with exactly the granted hosts; the tool reaching the approved host and refused another (the
# proxy's events in the trace verbatim); the result's connections and the blast radius's hosts;
# and network denied, each with its reason, when no host is approved, when the broker's
# configuration forbids it, when anvil-egress is down, and when it dies mid-run; a client's own
# run_request.egress refused. Each denial has its control: the same tool granted.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "the test makes a network namespace (ip netns), which needs root; a rootless supervisor denies network (docs/egress.md)"
command -v ip >/dev/null || fail "no ip (iproute2)"

NS=anvil-egb-$$
EGR=$T/egr
cleanup_ns() {
        cleanup
        ip netns del "$NS" 2>/dev/null
}
trap cleanup_ns EXIT

ip netns add "$NS" || fail "ip netns add failed"
ip -n "$NS" link set lo up
for a in 11.0.0.10/32 11.0.0.20/32; do ip -n "$NS" addr add "$a" dev lo; done
NSX=(ip netns exec "$NS")
# anvil-egress runs under `ip netns exec`, in a mount namespace of its own as its systemd unit
# gives it (ProtectSystem=, PrivateTmp=): the run's socket fd is of a mount the supervisor's
# namespace does not have, and the jail reaches it through the fd (jail/relay.c). No
# /etc/netns resolv.conf is made, so the proxy reads the host's: its first IPv4 nameserver is
# given to the namespace's loopback, and the test's DNS server answers there.
DNS=$(awk '$1 == "nameserver" && $2 ~ /^[0-9.]+$/ {print $2; exit}' /etc/resolv.conf)
[ -n "$DNS" ] || skip "no IPv4 nameserver in /etc/resolv.conf for the proxy to ask"
ip -n "$NS" addr add "$DNS/32" dev lo
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 -subj /CN=web.test \
        -addext subjectAltName=DNS:web.test 2>/dev/null || fail "openssl req failed"
cat >"$T/zone.json" <<'JSON'
{"names": {"web.test": ["11.0.0.10"], "evil.test": ["11.0.0.20"]},
 "http": ["11.0.0.10", "11.0.0.20"], "tls": ["11.0.0.10"], "slow": [], "dns": ["DNS"]}
JSON
sed -i "s/\"DNS\"/\"$DNS\"/" "$T/zone.json"
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
        for _ in $(seq 50); do [ -S "$EGR/control.sock" ] && [ "$(grep -c 'listening on' "$T/egr.log")" -ge "$1" ] && break; sleep 0.1; done
        [ "$(grep -c 'listening on' "$T/egr.log")" -ge "$1" ] || fail "anvil-egress did not start: $(cat "$T/egr.log")"
}
start_egress 1

# The broker of this test: its control socket is anvil-egress's (root may use it).
start_bro net --egress "$EGR/control.sock"
NET_SOCK=$T/net.sock

cat >"$T/fetch.py" <<'PY'
import ssl, sys, time, urllib.error, urllib.request
ctx = ssl.create_default_context(cafile="inputs/ca.pem")
for url in sys.argv[1:]:
    if url == "sleep":
        time.sleep(3)
        continue
    try:
        with urllib.request.urlopen(url, context=ctx if url.startswith("https") else None, timeout=20) as f:
            print(url, "->", f.read().decode().strip())
    except urllib.error.HTTPError as e:
        print(url, "->", e.code, e.read().decode().strip())
    except Exception as e:
        print(url, "-> refused:", type(e).__name__, str(e)[:200])
PY
# nrun NAME SOCKET [anvilctl run options]: the result in $T/NAME.json
nrun() {
        local name=$1 sock=$2
        shift 2
        ANVIL_SOCKET=$sock timeout 120 "$CTL" run "$T/fetch.py" --input ca.pem="$T/cert.pem" --json "$@" \
                >"$T/$name.json" 2>"$T/$name.err"
        [ -s "$T/$name.json" ] || fail "anvilctl run ($name) gave no result: $(cat "$T/$name.err")"
}
r() { jq -r "$2" "$T/$1.json"; }
ev() { r "$1" '.events[] | select(.kind == "capability_granted" or .kind == "capability_denied") | .message'; }

echo "-- granted: the approved hosts, and only those, through the proxy"
nrun granted "$NET_SOCK" --cap 'network=web.test,WEB.test.,*.other.test:8443' -- http://web.test/ https://web.test/ \
        http://evil.test/
expect_eq "status" ok "$(r granted .status)"
expect_eq "what the tool reached" "http://web.test/ -> hello from web.test (11.0.0.10)
https://web.test/ -> hello from web.test (11.0.0.10)
http://evil.test/ -> 403 blocked at proxy: GET evil.test:80 (host not approved)" "$(r granted .stdout)"
expect_eq "granted" '["network"]' "$(r granted '.capabilities.granted | tojson')"
expect_eq "the grant's event, with its hosts" "capability network granted for web.test, *.other.test:8443" \
        "$(ev granted)"
expect_eq "the blast radius's hosts" '["web.test","*.other.test:8443"]' "$(r granted '.blast_radius.hosts | tojson')"
# the proxy's run was opened with exactly those (its own log, one line a decision, names the
# run; the broker's log names what it sent)
grep -q 'egress run broker-[0-9]*-[0-9]*: opened' "$T/net.log" || fail "the broker's log: $(grep egress "$T/net.log")"
echo "ok: the broker opened the proxy's run"
expect_eq "the proxy's refusal, in the trace verbatim" "blocked at proxy: GET evil.test:80 (host not approved)" \
        "$(r granted '.events[] | select(.layer == "proxy" and .kind == "blocked") | .message')"
expect_match "the proxy's allowed connections, in the trace" \
        '^allowed at proxy: GET web\.test:80 \(11\.0\.0\.10\): [1-9][0-9]* bytes out, [1-9][0-9]* bytes in$' \
        "$(r granted '.events[] | select(.layer == "proxy" and .kind == "allowed") | .message' | head -1)"
expect_eq "the result's connections" '[{"host":"web.test","port":80,"address":"11.0.0.10"},{"host":"web.test","port":443,"address":"11.0.0.10"}]' \
        "$(r granted '[.connections[] | {host, port, address}] | tojson')"
expect_eq "each with its bytes both ways" true "$(r granted '[.connections[] | .bytes_in > 0 and .bytes_out > 0] | all')"
grep -q '^http 11.0.0.20 ' "$T/net.log" && fail "evil.test's server was reached"
grep -q '^dns evil.test ' "$T/net.log" && fail "evil.test was resolved"
echo "ok: evil.test was neither resolved nor reached"
# the proxy's view: each decision logged with its run, and the run gone once the result is in
expect_match "the proxy logged the refusal" "run broker-[0-9]+-[0-9]+: blocked at proxy: GET evil.test:80 \(host not approved\)" \
        "$(cat "$T/egr.log")"
expect_eq "no run left open at the proxy" "" "$(ls "$EGR/runs" 2>/dev/null)"

echo "-- ports: a rule with a port allows that port alone"
nrun ports "$NET_SOCK" --cap network=web.test:80 --cap network=evil.test:8080 -- http://web.test/ https://web.test/ \
        http://evil.test/
expect_eq "granted for both rules" "capability network granted for web.test:80, evil.test:8080" "$(ev ports)"
expect_eq "port 80 of web.test, and no other port of either" "http://web.test/ -> hello from web.test (11.0.0.10)
https://web.test/ -> refused: URLError <urlopen error Tunnel connection failed: 403 Forbidden>
http://evil.test/ -> 403 blocked at proxy: GET evil.test:80 (port not approved)" "$(r ports .stdout)"
expect_eq "the tunnel's refusal, in the trace" "blocked at proxy: CONNECT web.test:443 (port not approved)" \
        "$(r ports '.events[] | select(.layer == "proxy" and .op == "CONNECT web.test:443") | .message')"

echo "-- denied: \"network\" with no host approves none"
nrun nohosts "$NET_SOCK" --cap network -- http://web.test/
expect_eq "the reason" "capability network denied: no host was approved for it" "$(ev nohosts)"
expect_eq "denied" '["network"]' "$(r nohosts '.capabilities.denied | tojson')"
expect_eq "the tool refused in the jail, as without network" blocked "$(r nohosts .status)"
expect_eq "no hosts in the blast radius" '[]' "$(r nohosts '.blast_radius.hosts | tojson')"

echo "-- denied: the broker's configuration forbids network (--network off)"
start_bro off --egress "$EGR/control.sock" --network off
nrun forbidden "$T/off.sock" --cap network=web.test -- http://web.test/
expect_eq "the reason" "capability network denied: the server's configuration forbids network" "$(ev forbidden)"
expect_eq "the tool refused in the jail, as without network" blocked "$(r forbidden .status)"

echo "-- denied: a broker with no egress proxy configured, and one whose proxy is not there"
start_bro noegr
nrun noegr "$T/noegr.sock" --cap network=web.test -- http://web.test/
expect_eq "no --egress" "capability network denied: the server has no egress proxy configured" "$(ev noegr)"
start_bro down --egress "$T/nothing-here.sock"
nrun down "$T/down.sock" --cap network=web.test -- http://web.test/
expect_eq "the proxy down" "capability network denied: the egress proxy cannot be reached" "$(ev down)"
expect_eq "the tool refused in the jail, as without network" blocked "$(r down .status)"
grep -q "egress run broker-[0-9]*-[0-9]*: cannot connect to anvil-egress at $T/nothing-here.sock" "$T/down.log" ||
        fail "the broker's log does not say why: $(grep egress "$T/down.log")"
echo "ok: the broker's log says why"

echo "-- a malformed host is refused before anything runs; a client's own egress fd too"
rc=0
ANVIL_SOCKET=$NET_SOCK "$CTL" run "$T/fetch.py" --cap 'network=http://web.test' >"$T/bad.out" 2>&1 || rc=$?
expect_eq "anvilctl's exit (usage)" 125 "$rc"
expect_match "its message" "--cap: 'http://web.test' is not a host \(a name, \*\.domain, an IPv4 address or \[IPv6\], each with :PORT or not\) nor an address range \(ADDRESS/PREFIX\)" \
        "$(cat "$T/bad.out")"
out=$(PYTHONPATH="$TOP/clients/python" "$PY" - "$NET_SOCK" "$EGR/control.sock" <<'PY'
import socket, sys
from anvil_client.client import _Call
# any socket will do: the broker refuses the key before it looks at the fd
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c = _Call(sys.argv[1], 20, "run", None)
c.send("run_request", {"source": "print(1)", "egress": 0, "capabilities_requested": ["network=web.test"],
                       "capabilities_approved": ["network=web.test"]}, [s.fileno()])
try:
    print(c.next("run_result"))
except Exception as e:
    print(type(e).__name__, e)
PY
)
expect_match "a client's run_request.egress" "run_request.egress: only the broker gives a run its egress socket; send network in capabilities_requested and capabilities_approved" "$out"

echo "-- the proxy killed mid-run: the run sees the end, never an open network"
nrun_bg() { ANVIL_SOCKET=$NET_SOCK timeout 120 "$CTL" run "$T/fetch.py" --input ca.pem="$T/cert.pem" --json "$@" >"$T/killed.json" 2>"$T/killed.err"; }
n0=$(grep -c 'allowed at proxy: GET web.test:80' "$T/egr.log")
nrun_bg --cap network=web.test -- http://web.test/ sleep http://web.test/ &
BG=$!
for _ in $(seq 200); do [ "$(grep -c 'allowed at proxy: GET web.test:80' "$T/egr.log")" -gt "$n0" ] && break; sleep 0.1; done
n_before=$(grep -c 'allowed at proxy' "$T/egr.log")
kill "$EGR_PID"
wait "$BG" || true
expect_eq "the first fetch" "http://web.test/ -> hello from web.test (11.0.0.10)" "$(r killed .stdout | head -1)"
expect_match "the second, after the proxy died" "^http://web.test/ -> refused: " "$(r killed .stdout | sed -n 2p)"
expect_eq "the proxy's end, on the record" \
        "cut at proxy: the egress proxy ended during the run (its connections were cut; nothing more was reachable)" \
        "$(r killed '.events[] | select(.reason == "proxy_gone") | .message')"
expect_eq "the proxy made no connection after" "$n_before" "$(grep -c 'allowed at proxy' "$T/egr.log")"
# control: a proxy started again serves the next run
start_egress 2
nrun again "$NET_SOCK" --cap network=web.test -- http://web.test/
expect_eq "a new proxy, a new run" "http://web.test/ -> hello from web.test (11.0.0.10)" "$(r again .stdout)"

echo "-- the agent: the prompt names the hosts; the model declares hosts; it gets those approved"
. "$TOP/tests/e2e/agent_lib.sh"
TOOL='import urllib.request, urllib.error
for u in ["http://web.test/", "http://evil.test/"]:
    try:
        print(u, "->", urllib.request.urlopen(u, timeout=20).read().decode().strip())
    except urllib.error.HTTPError as e:
        print(u, "->", e.code, e.read().decode().strip())
open("artifacts/out.txt", "w").write("done")
final_answer("artifacts/out.txt")
'
model_script net <<PY
[reply('{"capabilitiesRequested": [{"network": ["web.test", "evil.test"]}]}\nThought: fetch.\n\`\`\`py\n' + $(jq -Rs . <<<"$TOOL") + '\`\`\`\n')]
PY
model_script nonet <<'PY'
[reply('Thought: nothing to do.\n```py\nopen("artifacts/out.txt", "w").write("x")\nfinal_answer("artifacts/out.txt")\n```\n')]
PY
start_model net
start_model nonet
for m in net nonet; do
        printf '{"task": "fetch the page", "capabilities_approved": [{"network": ["web.test"]}], "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' \
                "$(cat "$T/logs/$m.port")" >"$T/$m.task.json"
done
rc=0
ANVIL_SOCKET=$NET_SOCK timeout 120 "$CTL" submit "$T/net.task.json" --json >"$T/net.task.out" 2>"$T/net.task.err" || rc=$?
[ -s "$T/net.task.out" ] || fail "anvilctl submit exited $rc: $(cat "$T/net.task.err")"
expect_eq "the task's status" ok "$(jq -r .status "$T/net.task.out")"
sysp=$(jq -r 'select(.n == 1) | .json.messages[0].content' "$T/logs/net.jsonl")
expect_eq "the prompt's network paragraph, verbatim" "Network: if you declare network, your code may reach these hosts and no other: web.test. Use urllib or requests as usual (the sandbox's proxy, in HTTP_PROXY and HTTPS_PROXY, takes each request there); any other host is refused at the proxy, and that refusal is final like any other." \
        "$(grep '^Network: ' <<<"$sysp")"
expect_match "the approved names, without their hosts" "Approved by the user for this task: network\. " "$sysp"
step=$(jq -c '.steps[0].run' "$T/net.task.out")
expect_eq "granted: the hosts asked that were approved" "capability network granted for web.test" \
        "$(jq -r '.events[] | select(.kind == "capability_granted") | .message' <<<"$step")"
expect_eq "the tool's fetches" "http://web.test/ -> hello from web.test (11.0.0.10)
http://evil.test/ -> 403 blocked at proxy: GET evil.test:80 (host not approved)" "$(jq -r .stdout <<<"$step")"
expect_eq "the proxy's refusal in the task's run" "blocked at proxy: GET evil.test:80 (host not approved)" \
        "$(jq -r '.events[] | select(.layer == "proxy" and .kind == "blocked") | .message' <<<"$step")"
# control: the same approval on the broker that forbids network: the prompt says none
ANVIL_SOCKET=$T/off.sock timeout 120 "$CTL" submit "$T/nonet.task.json" --json >"$T/nonet.task.out" 2>"$T/nonet.task.err" || true
expect_eq "network forbidden: the prompt says so" "Network: no host is approved for this task: your code can reach none, whatever it declares." \
        "$(jq -r 'select(.n == 1) | .json.messages[0].content' "$T/logs/nonet.jsonl" | grep '^Network: ')"
