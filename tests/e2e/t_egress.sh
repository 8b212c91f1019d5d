# anvil-egress, the egress proxy (docs/egress.md), against servers in a network namespace this
# test makes (as root) and nothing else: a DNS server on its 127.0.0.1:53 (the proxy resolves
# through it: /etc/netns/NS/resolv.conf, which ip netns exec mounts over /etc/resolv.conf),
# HTTP servers and a TLS one on addresses given to its loopback, the proxy itself as the
# user nobody. Every refusal is checked by its message, verbatim, in the reply and in the
# run's events; every allowed connection by its record; and each refusal has its control: the
# same server reached when the rule approves it, so the refusal is the proxy's and not an
# unreachable server's.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "the test makes a network namespace (ip netns), which needs root"
command -v ip >/dev/null || fail "no ip (iproute2)"

NS=anvil-egress-$$
EGR=$T/egr
cleanup_ns() {
        cleanup
        ip netns del "$NS" 2>/dev/null
        rm -rf "/etc/netns/$NS"
}
trap cleanup_ns EXIT

ip netns add "$NS" || fail "ip netns add failed"
ip -n "$NS" link set lo up
# Addresses the classifier calls public (11.0.0.0/8, 2600::/12) and one private, all on the
# namespace's own loopback: reachable from that namespace alone.
for a in 11.0.0.10/32 11.0.0.20/32 10.9.0.5/32; do ip -n "$NS" addr add "$a" dev lo; done
ip -n "$NS" addr add 2600::10/128 dev lo nodad
mkdir -p "/etc/netns/$NS"
echo "nameserver 127.0.0.1" >"/etc/netns/$NS/resolv.conf"
NSX=(ip netns exec "$NS")

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 -subj /CN=web.test \
        -addext subjectAltName=DNS:web.test 2>/dev/null || fail "openssl req failed"
cat >"$T/zone.json" <<'JSON'
{"names": {"web.test": ["11.0.0.10"], "evil.test": ["11.0.0.20"], "a.wild.test": ["11.0.0.10"],
           "a.b.wild.test": ["11.0.0.10"], "wild.test": ["11.0.0.10"], "internal.test": ["10.9.0.5"],
           "loop.test": ["127.0.0.1"], "meta.test": ["169.254.169.254"], "mapped.test": ["::ffff:10.9.0.5"],
           "v6.test": ["2600::10"]},
 "http": ["11.0.0.10", "11.0.0.20", "10.9.0.5", "2600::10"], "tls": ["11.0.0.10"], "slow": ["11.0.0.10:8081"]}
JSON
"${NSX[@]}" "$PY" "$TOP/tests/e2e/egress_net.py" "$T/zone.json" "$T/cert.pem" "$T/key.pem" "$T/net.log" &
OWN_PIDS+=("$!")
for _ in $(seq 50); do grep -q '^ready' "$T/net.log" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$T/net.log" || fail "the servers did not start: $(cat "$T/net.log")"

mkdir -p "$EGR" && chown 65534:65534 "$EGR"
"${NSX[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups -- "$ANVIL_BUILD/anvil-egress" \
        --control "$EGR/control.sock" --run-dir "$EGR/runs" --allow-uid 12346 >"$T/egr.log" 2>&1 &
EGR_PID=$!
OWN_PIDS+=("$EGR_PID")
for _ in $(seq 50); do grep -q 'listening on' "$T/egr.log" && break; sleep 0.1; done
grep -q 'listening on' "$T/egr.log" || fail "anvil-egress did not start: $(cat "$T/egr.log")"
expect_eq "anvil-egress's user" 65534 "$(stat -c %u "/proc/$EGR_PID")"

CTL_PY=("${NSX[@]}" "$PY" "$TOP/tests/e2e/egress_ctl.py")
# open NAME SPEC: a run opened by a control client in the background (its pid in
# CTL_PID[NAME], every message it gets a line of $T/NAME.ev); its socket in SOCK[NAME].
declare -A CTL_PID SOCK
open_run() {
        "${CTL_PY[@]}" open "$EGR/control.sock" "$1" "$2" "$T/$1.ev" >"$T/$1.open" 2>&1 &
        CTL_PID[$1]=$!
        OWN_PIDS+=("$!")
        for _ in $(seq 50); do grep -q '^socket \|^error' "$T/$1.open" && break; sleep 0.1; done
        SOCK[$1]=$(sed -n 's/^socket //p' "$T/$1.open")
        [ -n "${SOCK[$1]}" ] || fail "run $1 did not open: $(cat "$T/$1.open")"
}
# the body of a reply (after its head), its last line
body() { sed '1,/^\r$/d' | tail -1; }
raw() { "${CTL_PY[@]}" raw "${SOCK[$1]}" "$2"; }
# events NAME: each event's message of run NAME, one a line
events() { jq -r 'select(.type == "event") | .event.message' "$T/$1.ev"; }
expect_event() { # NAME MESSAGE
        events "$1" | grep -qxF -- "$2" || fail "run $1 has no event '$2': $(events "$1")"
        echo "ok: event: $2"
}
# refused NAME REQUEST STATUS MESSAGE: the reply's status line and body, and the event
refused() {
        local out
        out=$(raw "$1" "$2")
        expect_eq "status of ${2%%\\r*}" "$3" "$(head -1 <<<"$out" | tr -d '\r')"
        expect_eq "reply to ${2%%\\r*}" "$4" "$(body <<<"$out")"
        expect_event "$1" "$4"
}
allowed() { # NAME REQUEST BODY
        expect_eq "reply to ${2%%\\r*}" "$3" "$(raw "$1" "$2" | body)"
}

open_run a '{"hosts": ["web.test", "web.test:8081", "web.test:9", "*.wild.test", "v6.test", "internal.test", "loop.test",
                       "meta.test", "mapped.test", "nx.test", "11.0.0.20"],
             "limits": {"head_s": 2, "idle_s": 2}}'
[ -S "${SOCK[a]}" ] || fail "no socket at ${SOCK[a]}"
expect_eq "the run's socket's mode" 777 "$(stat -c %a "${SOCK[a]}" | sed 's/^666$/777/')"
expect_eq "the run directory's mode" 700 "$(stat -c %a "$EGR/runs")"

echo "-- the control socket: root and --allow-uid's uids, no other (SO_PEERCRED)"
chmod 0666 "$EGR/control.sock" # so that the file's mode lets them try
touch "$T/u1.ev" "$T/u2.ev" && chmod 0666 "$T/u1.ev" "$T/u2.ev"
as_ctl() { # UID NAME: opens a run as UID, prints what the client says
        timeout 10 "${NSX[@]}" setpriv --reuid="$1" --regid=65534 --clear-groups -- "$PY" "$TOP/tests/e2e/egress_ctl.py" \
                open "$EGR/control.sock" "$2" '{"hosts": ["web.test"]}' "$T/$2.ev" 2>&1 | head -1
}
expect_eq "uid 12345 (not allowed)" "closed: the daemon ended the connection" "$(as_ctl 12345 u1)"
grep -q "control: uid 12345 refused (not --allow-uid)" "$T/egr.log" || fail "no refusal in the log: $(cat "$T/egr.log")"
expect_match "uid 12346 (--allow-uid)" "^socket $EGR/runs/[0-9]+\.sock \(fd only: its path is not reachable\)$" "$(as_ctl 12346 u2)"

echo "-- control messages: each bad one refused with its reason, the connection serving on"
out=$("${CTL_PY[@]}" ctl "$EGR/control.sock" 'not json' '{"type": "open", "run_id": "a", "hosts": ["web.test"]}' \
        '{"type": "open", "run_id": "x1", "hosts": ["*.com"]}' \
        '{"type": "open", "run_id": "x2", "hosts": ["web.test:0"]}' \
        '{"type": "open", "run_id": "x3", "hosts": []}' \
        '{"type": "open", "run_id": "x4", "hosts": ["web.test"], "limits": {"conns": 65}}' \
        '{"type": "open", "run_id": "x5", "hosts": ["web.test"], "limits": {"wall": 1}}' \
        '{"type": "open", "run_id": "x6", "hosts": ["web.test"], "addresses": ["10.0.0.0/33"]}' \
        '{"type": "open", "run_id": "x7", "hosts": ["web.test"], "extra": 1}' \
        '{"type": "open", "run_id": "../x", "hosts": ["web.test"]}' \
        '{"type": "open", "run_id": "x8", "run_id": "x9", "hosts": ["web.test"]}' \
        '{"type": "close", "run_id": "a"}' '{"type": "stop", "run_id": "x"}' \
        '{"type": "open", "run_id": "x10", "hosts": ["web.test"]}')
expect_eq "control errors" "not a JSON object: '[' or '{' expected near 'not'
run_id: a run of that id is open
hosts[0]: rule '*.com': a wildcard is *. and a domain of two labels or more
hosts[0]: rule 'web.test:0': the port is not 1 to 65535
hosts: an array of 1 to 64 strings
limits.conns: an integer from 1 to 64
limits: unknown key 'wall'
addresses[0]: address range '10.0.0.0/33': the prefix is not 0 to 32
unknown key 'extra'
type and run_id ([A-Za-z0-9._-], 1 to 64 bytes, not starting with '.') are required
not a JSON object: duplicate object key near '\"run_id\"'
run_id: no such run open on this connection
type: open or close
opened" "$out"
expect_eq "run a still open, on its own connection" "hello from web.test (11.0.0.10)" \
        "$(raw a 'GET http://web.test/ HTTP/1.1\r\n\r\n' | body)"

echo "-- plain HTTP, rewritten to origin form"
out=$(raw a 'GET http://web.test/?q=1#frag HTTP/1.1\r\nHost: other.test\r\nProxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n\r\n')
expect_eq "GET http://web.test/" "hello from web.test (11.0.0.10)" "$(body <<<"$out")"
expect_match "the server was asked for Connection: close" $'X-Seen-Connection: close\r' "$out"
expect_match "no Proxy-Authorization reached it" $'X-Seen-Proxy-Authorization: \r' "$out"
grep -qF 'http 11.0.0.10 web.test GET /?q=1 HTTP/1.1' "$T/net.log" || fail "the server saw: $(grep ^http "$T/net.log")"
echo "ok: the server saw GET /?q=1 with Host: web.test"
ev=$(events a | grep -F 'allowed at proxy: GET web.test:80 (11.0.0.10)' | head -1)
expect_match "its record" '^allowed at proxy: GET web\.test:80 \(11\.0\.0\.10\): [1-9][0-9]* bytes out, [1-9][0-9]* bytes in$' "$ev"
rec=$(jq -c 'select(.type == "event" and .event.kind == "allowed") | .event | {layer, op, host, port, address}' "$T/a.ev" | head -1)
expect_eq "its fields" '{"layer":"proxy","op":"GET web.test:80","host":"web.test","port":80,"address":"11.0.0.10"}' "$rec"
expect_eq "POST with a body" "posted abc" \
        "$(raw a 'POST http://web.test/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc' | body)"

echo "-- curl through a relay to the run's socket (as HTTP_PROXY will work in a jail)"
"${CTL_PY[@]}" relay "${SOCK[a]}" 3128 >"$T/relay.out" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 50); do grep -q ready "$T/relay.out" && break; sleep 0.1; done
CURL=("${NSX[@]}" curl -sS --max-time 20 -x http://127.0.0.1:3128)
expect_eq "curl http://web.test/" "hello from web.test (11.0.0.10)" "$("${CURL[@]}" http://web.test/)"
expect_eq "curl https://web.test/ (CONNECT, TLS verified)" "hello from web.test (11.0.0.10)" \
        "$("${CURL[@]}" --cacert "$T/cert.pem" https://web.test/)"
ev=$(events a | grep -F 'allowed at proxy: CONNECT web.test:443' | head -1)
expect_match "the tunnel's record" '^allowed at proxy: CONNECT web\.test:443 \(11\.0\.0\.10\): [1-9][0-9]* bytes out, [1-9][0-9]* bytes in$' "$ev"
tls=$("${CTL_PY[@]}" tls "${SOCK[a]}" web.test 443 "$T/cert.pem")
expect_match "python's ssl over CONNECT" 'tls TLSv1\.[23]' "$tls"

echo "-- a redirect to a host not approved: the second request is refused"
n_evil_before=$(grep -c '^http 11.0.0.20 ' "$T/net.log")
out=$("${CURL[@]}" -L 'http://web.test/redirect?to=http://evil.test/')
expect_eq "curl -L's last reply" "blocked at proxy: GET evil.test:80 (host not approved)" "$out"
expect_event a "blocked at proxy: GET evil.test:80 (host not approved)"
expect_eq "evil.test's server got nothing" "$n_evil_before" "$(grep -c '^http 11.0.0.20 ' "$T/net.log")"
grep -q '^dns evil.test ' "$T/net.log" && fail "the proxy resolved evil.test, which is not approved"
echo "ok: evil.test was never resolved"
refused a 'CONNECT evil.test:443 HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" \
        "blocked at proxy: CONNECT evil.test:443 (host not approved)"
# a second request on the same connection is never read: the first's reply, and no more
out=$(raw a 'GET http://web.test/ HTTP/1.1\r\n\r\nGET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n')
expect_eq "a pipelined second request: replies" 1 "$(grep -c '^HTTP/1.1 ' <<<"$out")"
expect_eq "evil.test's server still got nothing" "$n_evil_before" "$(grep -c '^http 11.0.0.20 ' "$T/net.log")"

echo "-- wildcards: one label or more, never the domain itself"
allowed a 'GET http://a.wild.test/ HTTP/1.1\r\n\r\n' "hello from a.wild.test (11.0.0.10)"
allowed a 'GET http://a.b.wild.test/ HTTP/1.1\r\n\r\n' "hello from a.b.wild.test (11.0.0.10)"
refused a 'GET http://wild.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" "blocked at proxy: GET wild.test:80 (host not approved)"
allowed a 'GET http://WEB.Test./ HTTP/1.1\r\n\r\n' "hello from web.test (11.0.0.10)"

echo "-- ports"
refused a 'GET http://web.test:8080/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" \
        "blocked at proxy: GET web.test:8080 (port not approved)"
refused a 'CONNECT web.test:22 HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" "blocked at proxy: CONNECT web.test:22 (port not approved)"

echo "-- IP literals: refused in every form, unless a rule names the address"
refused a 'GET http://11.0.0.10/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" "blocked at proxy: GET 11.0.0.10:80 (IP literal)"
for lit in 127.0.0.1 2130706433 0x7f000001 0x7f.1 0177.0.0.1 017700000001 127.1 1.2.3.4.5; do
        refused a "GET http://$lit/ HTTP/1.1\\r\\n\\r\\n" "HTTP/1.1 403 Forbidden" "blocked at proxy: GET $lit:80 (IP literal)"
done
for lit in '::1' '::ffff:127.0.0.1' '::ffff:11.0.0.10' '2600::10' '::'; do
        refused a "GET http://[$lit]/ HTTP/1.1\\r\\n\\r\\n" "HTTP/1.1 403 Forbidden" "blocked at proxy: GET [$lit]:80 (IP literal)"
done
refused a 'CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" "blocked at proxy: CONNECT 127.0.0.1:443 (IP literal)"
refused a 'CONNECT [::1]:443 HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" "blocked at proxy: CONNECT [::1]:443 (IP literal)"
# the control: the literal a rule names
allowed a 'GET http://11.0.0.20/ HTTP/1.1\r\n\r\n' "hello from 11.0.0.20 (11.0.0.20)"

echo "-- names that resolve to private addresses: refused unless approved as such"
refused a 'GET http://internal.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" \
        "blocked at proxy: GET internal.test:80 (10.9.0.5 is a private address)"
refused a 'GET http://loop.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" \
        "blocked at proxy: GET loop.test:80 (127.0.0.1 is a loopback address)"
refused a 'GET http://meta.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" \
        "blocked at proxy: GET meta.test:80 (169.254.169.254 is a link-local address)"
refused a 'GET http://mapped.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" \
        "blocked at proxy: GET mapped.test:80 (::ffff:10.9.0.5 is a private address)"
refused a 'GET http://nx.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 502 Bad Gateway" \
        "blocked at proxy: GET nx.test:80 (the name does not resolve: unknown node or service)"

refused a 'CONNECT web.test:9 HTTP/1.1\r\n\r\n' "HTTP/1.1 502 Bad Gateway" \
        "blocked at proxy: CONNECT web.test:9 (cannot connect to 11.0.0.10: connection refused)"

echo "-- IPv6"
allowed a 'GET http://v6.test/ HTTP/1.1\r\n\r\n' "hello from v6.test (2600::10)"
expect_event a "$(events a | grep -F 'allowed at proxy: GET v6.test:80 (2600::10)' | head -1)"

echo "-- malformed requests"
refused a 'GARBAGE\r\n\r\n' "HTTP/1.1 400 Bad Request" "blocked at proxy: malformed request (invalid HTTP method)"
refused a 'GET / HTTP/1.1\r\nHost: web.test\r\n\r\n' "HTTP/1.1 400 Bad Request" \
        "blocked at proxy: GET / (only http:// requests and CONNECT are proxied)"
refused a 'GET https://web.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 400 Bad Request" \
        "blocked at proxy: GET https://web.test/ (only http:// requests and CONNECT are proxied)"
refused a 'GET http://-web..test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 400 Bad Request" \
        "blocked at proxy: malformed request (the host is not a DNS name nor an address)"
# A smuggled request: Content-Length beside chunked, and a Transfer-Encoding that is not chunked
refused a 'POST http://web.test/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n' \
        "HTTP/1.1 400 Bad Request" "blocked at proxy: malformed request (unexpected content-length header)"
refused a 'POST http://web.test/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nabc' \
        "HTTP/1.1 400 Bad Request" "blocked at proxy: malformed request (request has invalid transfer-encoding)"

echo "-- chunked request bodies: exactly the one request is sent, nothing after its last chunk"
# event_seen NAME PREFIX: the first event of run NAME starting with PREFIX, once it has come
event_seen() {
        local m
        for _ in $(seq 50); do
                m=$(events "$1" | grep -F -- "$2" | head -1)
                [ -n "$m" ] && break
                sleep 0.1
        done
        [ -n "$m" ] || fail "run $1 has no event starting '$2': $(events "$1" | tail -5)"
        echo "ok: event: $m"
}
open_run k '{"hosts": ["web.test"]}'
allowed k 'POST http://web.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=1\r\ndefg\r\n0\r\nX-Trailer: t\r\n\r\n' \
        "posted abcdefg"
# out: the head as rewritten, "POST / HTTP/1.1", "Transfer-Encoding: chunked", "Host: web.test",
# "Connection: close" and the blank line (82 bytes), then the body's "3\r\nabc\r\n" 8,
# "4;x=1\r\ndefg\r\n" 13, "0\r\nX-Trailer: t\r\n\r\n" 19: 122 bytes
event_seen k "allowed at proxy: POST web.test:80 (11.0.0.10): 122 bytes out, "
# the same body with a second request after it, on the same connection: never sent
allowed k 'POST http://web.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET http://evil.test/ HTTP/1.1\r\n\r\n' \
        "posted abc"
# 82 and "3\r\nabc\r\n0\r\n\r\n" 13: 95 bytes, not one of the GET after it
event_seen k "allowed at proxy: POST web.test:80 (11.0.0.10): 95 bytes out, "
[ "$(events k | grep -c 'POST web.test:80 (11.0.0.10): 95 bytes out')" = 1 ] || fail "the smuggled request: $(events k)"
grep -q "evil.test" "$T/k.ev" && fail "the request after the body reached the proxy's checks: $(events k)"
echo "ok: the bytes after the last chunk were dropped (95 bytes out, evil.test never asked for)"
# a malformed chunk size: the connection is cut, recorded
out=$(raw k 'POST http://web.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n')
expect_eq "a malformed chunk: no reply" "" "$(head -c 200 <<<"$out" | tr -d '\r\n')"
event_seen k "blocked at proxy: malformed request (invalid character in chunk size header)"
big=$(head -c 17000 /dev/zero | tr '\0' a)
refused a "GET http://web.test/ HTTP/1.1\\r\\nX-Big: $big\\r\\n\\r\\n" "HTTP/1.1 431 Request Header Fields Too Large" \
        "blocked at proxy: the request head is larger than 16384 bytes"

echo "-- time: a slowloris head, an idle tunnel"
out=$("${CTL_PY[@]}" slow "${SOCK[a]}")
expect_eq "slowloris: the reply" "blocked at proxy: the request head was not complete within 2 s" \
        "$(grep '^blocked' <<<"$out")"
secs=$(sed -n 's/^ended after \([0-9]*\)\..*/\1/p' <<<"$out")
[ "$secs" -ge 2 ] && [ "$secs" -le 4 ] || fail "slowloris: ended after $secs s, not 2 to 4"
echo "ok: slowloris ended after $secs s"
expect_event a "blocked at proxy: the request head was not complete within 2 s"
out=$("${CTL_PY[@]}" hold "${SOCK[a]}" 'CONNECT web.test:8081 HTTP/1.1\r\n\r\n')
expect_eq "an idle tunnel: how it ended" "end: closed" "$(tail -1 <<<"$out")"
expect_event a "cut at proxy: CONNECT web.test:8081 (idle for 2 s)"

echo "-- the log: at most 100 lines a run, its events all sent"
open_run l '{"hosts": ["web.test"]}'
expect_eq "120 refusals sent" "sent 120" "$("${CTL_PY[@]}" many "${SOCK[l]}" 120 'GET http://evil.test/ HTTP/1.1\r\n\r\n')"
for _ in $(seq 50); do [ "$(events l | wc -l)" -ge 120 ] && break; sleep 0.1; done
expect_eq "run l's events" 120 "$(events l | grep -cxF 'blocked at proxy: GET evil.test:80 (host not approved)')"
expect_eq "run l's decisions logged" 100 "$(grep -c '^.*run l: blocked at proxy: GET evil.test:80 (host not approved)$' "$T/egr.log")"
grep -q "run l: its next decisions are not logged (100 were); how many is said when it closes" "$T/egr.log" ||
        fail "no line saying the log stops: $(grep 'run l:' "$T/egr.log" | tail -3)"
kill -TERM "${CTL_PID[l]}" # its control connection ends: the run closes
wait "${CTL_PID[l]}" 2>/dev/null
for _ in $(seq 50); do grep -q 'run l: closed' "$T/egr.log" && break; sleep 0.1; done
grep -q "run l: closed; 20 of its decisions were not logged" "$T/egr.log" ||
        fail "no count of what was not logged: $(grep 'run l:' "$T/egr.log" | tail -3)"
echo "ok: 100 of run l's 120 decisions logged, the other 20 counted at its close; all 120 sent as events"

echo "-- SIGHUP reloads nothing: the run keeps its rules"
kill -HUP "$EGR_PID"
for _ in $(seq 50); do grep -q 'SIGHUP: nothing to reload' "$T/egr.log" && break; sleep 0.1; done
grep -q 'SIGHUP: nothing to reload: each run keeps the rules it was opened with' "$T/egr.log" || fail "no SIGHUP line"
allowed a 'GET http://web.test/ HTTP/1.1\r\n\r\n' "hello from web.test (11.0.0.10)"
refused a 'GET http://evil.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" "blocked at proxy: GET evil.test:80 (host not approved)"

echo "-- a run approving what run a refused: the same servers answer (the controls)"
open_run b '{"hosts": ["internal.test", "evil.test", "[2600::10]", "loop.test"], "addresses": ["10.9.0.0/16"]}'
allowed b 'GET http://internal.test/ HTTP/1.1\r\n\r\n' "hello from internal.test (10.9.0.5)"
allowed b 'GET http://evil.test/ HTTP/1.1\r\n\r\n' "hello from evil.test (11.0.0.20)"
allowed b 'GET http://[2600::10]/ HTTP/1.1\r\n\r\n' "hello from [2600::10] (2600::10)"
refused b 'GET http://loop.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" \
        "blocked at proxy: GET loop.test:80 (127.0.0.1 is a loopback address)"
refused b 'GET http://web.test/ HTTP/1.1\r\n\r\n' "HTTP/1.1 403 Forbidden" "blocked at proxy: GET web.test:80 (host not approved)"

echo "-- bounds: bytes and connections per run; the run closed"
open_run c '{"hosts": ["web.test", "web.test:8081"], "limits": {"bytes": 5000, "conns": 1, "idle_s": 60}}'
out=$(raw c 'GET http://web.test/big?n=100000 HTTP/1.1\r\n\r\n')
n=$(wc -c <<<"$out")
[ "$n" -le 5000 ] || fail "past the bytes limit, the client got $n bytes"
expect_event c "cut at proxy: GET web.test:80 (the run's limit of 5000 bytes was reached)"
"${CTL_PY[@]}" hold "${SOCK[c]}" 'CONNECT web.test:8081 HTTP/1.1\r\n\r\n' >"$T/held.out" 2>&1 &
HELD=$!
OWN_PIDS+=("$HELD")
for _ in $(seq 50); do grep -q 'Connection established' "$T/held.out" && break; sleep 0.1; done
out=$(raw c 'CONNECT web.test:8081 HTTP/1.1\r\n\r\n')
expect_eq "a second connection at once" "blocked at proxy: a connection past the run's limit of 1 at once" "$(body <<<"$out")"
kill -TERM "${CTL_PID[c]}" # its control client closes the run
wait "${CTL_PID[c]}" || fail "run c's control client: $(cat "$T/c.open")"
wait "$HELD"
expect_eq "the held tunnel, the run closed" "end: closed" "$(tail -1 "$T/held.out")"
expect_event c "cut at proxy: CONNECT web.test:8081 (the run's proxy was closed)"
closed=$(jq -c 'select(.type == "closed") | {run_id, allowed, blocked, events_dropped}' "$T/c.ev")
expect_eq "run c's end" '{"run_id":"c","allowed":2,"blocked":3,"events_dropped":0}' "$closed"
[ -e "${SOCK[c]}" ] && fail "run c's socket is still there"
echo "ok: run c's socket is gone"

open_run f '{"hosts": ["web.test:8081"], "limits": {"lifetime_s": 2, "idle_s": 60}}'
out=$("${CTL_PY[@]}" hold "${SOCK[f]}" 'CONNECT web.test:8081 HTTP/1.1\r\n\r\n')
expect_eq "a tunnel past its lifetime: how it ended" "end: closed" "$(tail -1 <<<"$out")"
expect_event f "cut at proxy: CONNECT web.test:8081 (open for 2 s, the limit)"

echo "-- fail closed: the control connection lost, then the proxy killed mid-connection"
open_run d '{"hosts": ["web.test"]}'
kill -KILL "${CTL_PID[d]}"
for _ in $(seq 50); do [ -e "${SOCK[d]}" ] || break; sleep 0.1; done
[ -e "${SOCK[d]}" ] && fail "run d's socket outlived its control connection"
echo "ok: run d closed with its control connection"
"${CTL_PY[@]}" hold "${SOCK[a]}" 'CONNECT web.test:8081 HTTP/1.1\r\n\r\n' >"$T/held2.out" 2>&1 &
HELD=$!
OWN_PIDS+=("$HELD")
for _ in $(seq 50); do grep -q 'Connection established' "$T/held2.out" && break; sleep 0.1; done
grep -q 'Connection established' "$T/held2.out" || fail "no tunnel: $(cat "$T/held2.out")"
kill -KILL "$EGR_PID"
wait "$HELD"
expect_eq "the tunnel, the proxy killed" "end: closed" "$(tail -1 "$T/held2.out")"
out=$(raw a 'GET http://web.test/ HTTP/1.1\r\n\r\n' 2>&1)
expect_match "a new connection to the run's socket" "ConnectionRefusedError" "$out"
wait "${CTL_PID[a]}"
expect_eq "run a's control client saw the end" '{"type":"eof"}' "$(tail -1 "$T/a.ev" | jq -c .)"
# a new proxy on the same directory: the dead one's sockets swept, nothing of its runs approved
"${NSX[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups -- "$ANVIL_BUILD/anvil-egress" \
        --control "$EGR/control.sock" --run-dir "$EGR/runs" >"$T/egr3.log" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 50); do grep -q 'listening on' "$T/egr3.log" && break; sleep 0.1; done
expect_eq "sockets left in the run directory after a restart" "" "$(find "$EGR/runs" -type s)"
open_run g '{"hosts": ["web.test"]}'
allowed g 'GET http://web.test/ HTTP/1.1\r\n\r\n' "hello from web.test (11.0.0.10)"
echo "-- a stop (SIGTERM): every run closed, its connections cut, exit 0"
mkdir -p "$T/egr2" && chown 65534:65534 "$T/egr2"
"${NSX[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups -- "$ANVIL_BUILD/anvil-egress" \
        --control "$T/egr2/control.sock" --run-dir "$T/egr2/runs" >"$T/egr2.log" 2>&1 &
EGR2_PID=$!
OWN_PIDS+=("$EGR2_PID")
for _ in $(seq 50); do grep -q 'listening on' "$T/egr2.log" && break; sleep 0.1; done
EGR=$T/egr2 open_run e '{"hosts": ["web.test:8081"]}'
"${CTL_PY[@]}" hold "${SOCK[e]}" 'CONNECT web.test:8081 HTTP/1.1\r\n\r\n' >"$T/held3.out" 2>&1 &
HELD=$!
OWN_PIDS+=("$HELD")
for _ in $(seq 50); do grep -q 'Connection established' "$T/held3.out" && break; sleep 0.1; done
kill -TERM "$EGR2_PID"
rc=0
wait "$EGR2_PID" || rc=$?
expect_eq "anvil-egress's exit status after SIGTERM" 0 "$rc"
wait "$HELD"
expect_eq "the tunnel, the proxy stopped" "end: closed" "$(tail -1 "$T/held3.out")"
grep -q "anvil-egress: info: stopped" "$T/egr2.log" || fail "no 'stopped': $(cat "$T/egr2.log")"
# (a sanitized build: ASan's and UBSan's reports, LeakSanitizer's at that exit, would be here)
for log in "$T/egr.log" "$T/egr2.log"; do
        grep -q "Sanitizer\|runtime error" "$log" && fail "$log: $(grep -m3 "Sanitizer\|runtime error" "$log")"
done
echo "ok: no sanitizer report in the proxies' logs"
echo "t_egress: done"
