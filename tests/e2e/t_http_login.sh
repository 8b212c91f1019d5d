# The web UI's door (issue 13): off unless --http is set; loopback only unless allowed; the
# static files below --web-dir and nothing else; every answer's security headers; the
# one-time login link of `anvilctl ui` (single use, bound to the caller's uid), the session
# cookie's flags; /api/ without a session 401; a POST without the page's Origin 403 (and the
# same POST with it, the control, accepted); bodies and headers over their bounds 413 and 431
# while the socket's clients are served on. Curl is the HTTP client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/http_lib.sh"
A=65533
B=65532

# ---- the address: loopback, or an explicit setting ----
"$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/r.sock" \
        --state-dir "$T/r" --http 0.0.0.0:0 --web-dir "$WEB" >"$T/r.log" 2>&1
expect_eq "a non-loopback address without the setting: exit 1" 1 "$?"
expect_eq "and its error" "anvil-broker: error: --http 0.0.0.0:0: not a loopback address; every machine that reaches it could try the UI's login: set http_allow_remote = yes (--http-allow-remote) to serve it anyway" "$(grep -- '--http 0.0.0.0' "$T/r.log")"
"$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$ANVIL_SUP_SOCKET" --listen "$T/r.sock" \
        --state-dir "$T/r" --http localhost:80 --web-dir "$WEB" >"$T/r.log" 2>&1
expect_eq "a name, not an address: refused" "anvil-broker: error: --http localhost:80: expected ADDRESS:PORT, e.g. 127.0.0.1:8700 (IPv4, or [IPv6]:PORT)" "$(grep -- '--http localhost' "$T/r.log")"
start_bro remote --http 0.0.0.0:0 --http-allow-remote --web-dir "$WEB"
expect_match "with --http-allow-remote: served, with a warning" "warning: --http 0.0.0.0:0: serving the web UI beyond this machine" "$(cat "$T/remote.log")"
kill "$BRO_PID"; wait "$BRO_PID" 2>/dev/null

start_web w
echo "ok: the web UI at $ORIGIN"

# ---- static files ----
expect_eq "GET /: index.html" "$(cat "$WEB/index.html")" "$(curl -s "$ORIGIN/")"
expect_eq "app.js" 200 "$(code "$ORIGIN/app.js")"
expect_eq "vendor/lib/x.js" 200 "$(code "$ORIGIN/vendor/lib/x.js")"
expect_line "a .js file's type" 'Content-Type: text/javascript; charset=utf-8' "$(hdrs "$ORIGIN/app.js")"
expect_line "a .css file's type" 'Content-Type: text/css; charset=utf-8' "$(hdrs "$ORIGIN/style.css")"
h=$(hdrs "$ORIGIN/")
for want in "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'" \
        "X-Content-Type-Options: nosniff" "Referrer-Policy: no-referrer" "X-Frame-Options: DENY"; do
        grep -qxF "$want" <<<"$h" || fail "GET / lacks the header '$want': $h"
done
echo "ok: the security headers on a static file"
grep -qi '^Access-Control' <<<"$h$(hdrs -H "Origin: http://evil.example" "$ORIGIN/api/me")" && fail "a CORS header was sent"
echo "ok: no CORS header, even to a foreign Origin"
for p in /../etc/passwd /%2e%2e/etc/passwd /vendor/../index.html /.hidden /index.html%00.png /vendor/ /vendor "//etc/passwd"; do
        c=$(code --path-as-is "$ORIGIN$p")
        case "$c" in 400 | 404) ;; *) fail "GET $p: $c, expected 400 or 404" ;; esac
done
expect_eq "GET /%2e%2e/etc/passwd: the path refused" '{"error":{"code":"bad_request","message":"the path is not one the server serves (no '"'"'..'"'"', NUL or hidden name)"}}' "$(curl -s --path-as-is "$ORIGIN/%2e%2e/etc/passwd")"
expect_eq "GET /index.html%00.png: refused, not cut short" 400 "$(code --path-as-is "$ORIGIN/index.html%00.png")"
expect_eq "a type not served (.py)" 404 "$(code "$ORIGIN/breakit/network.py")"
expect_eq "POST to a static path" 405 "$(code -X POST "$ORIGIN/index.html")"
echo "ok: no traversal, NUL, hidden file, listing or other type"

# ---- the API without a session ----
expect_eq "GET /api/me without a session: 401" 401 "$(code "$ORIGIN/api/me")"
expect_eq "its message" '{"error":{"code":"unauthorized","message":"no session: open the link that `anvilctl ui` prints"}}' "$(curl -s "$ORIGIN/api/me")"
expect_eq "POST /api/runs without a session: 401" 401 "$(code -X POST -H "Origin: $ORIGIN" -d '{}' "$ORIGIN/api/runs")"
expect_eq "a forged cookie: 401" 401 "$(code -b "anvil_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" "$ORIGIN/api/me")"

# ---- login: one-time, bound to the uid ----
url=$(login_link $A)
expect_match "the link" "^$ORIGIN/login\\?t=[A-Za-z0-9_-]{43}\$" "$url"
h=$(curl -s -D - -o /dev/null -c "$T/a.jar" "$url" | tr -d '\r')
expect_line "login: 303 to /" 'HTTP/1.1 303 See Other' "$h"
expect_line "login: Location /" 'Location: /' "$h"
expect_line "the cookie's flags" 'Set-Cookie: anvil_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/' "$h"
expect_eq "the link a second time: 403" 403 "$(code "$url")"
expect_eq "its message" '{"error":{"code":"forbidden","message":"this login link is unknown, used, or expired: run `anvilctl ui` again"}}' "$(curl -s "$url")"
expect_eq "a made-up token: 403" 403 "$(code "$ORIGIN/login?t=x")"
expect_eq "no token: 403" 403 "$(code "$ORIGIN/login")"
expect_eq "GET /api/me: A's uid" "$A" "$(curl -s -b "$T/a.jar" "$ORIGIN/api/me" | jq -r .uid)"
expect_line "an API answer is not stored" 'Cache-Control: no-store' "$(hdrs -b "$T/a.jar" "$ORIGIN/api/me")"
login $B "$T/b.jar"
expect_eq "B's session is B's" "$B" "$(curl -s -b "$T/b.jar" "$ORIGIN/api/me" | jq -r .uid)"
echo "ok: each session is its user's"

# ---- a link expires (a test build's broker whose links live 1 s) ----
start_bro short --http 127.0.0.1:0 --web-dir "$WEB" --test-http-token-s 1
SHORT=$(sed -n 's/.*web UI: \(http:[^ ]*\) (files from .*/\1/p' "$T/short.log")
expect_match "the link's life, as anvilctl says it" "open this link within 1 s" "$(ANVIL_SOCKET="$T/short.sock" as_uid $A "$CTL" ui --no-browser 2>&1 >/dev/null)"
url=$(ANVIL_SOCKET="$T/short.sock" as_uid $A "$CTL" ui --no-browser 2>/dev/null)
sleep 1.5
expect_eq "a link used after its life: 403" 403 "$(code "$url")"
url=$(ANVIL_SOCKET="$T/short.sock" as_uid $A "$CTL" ui --no-browser 2>/dev/null)
expect_eq "the control: a link of the same broker used at once: 303" 303 "$(code "$url")"
kill "$BRO_PID"; wait "$BRO_PID" 2>/dev/null
[ -n "$SHORT" ] || fail "no origin for the short broker"

# ---- sessions end: unused for their idle life, and at their whole life (a test build's
# broker: idle 2 s, whole 4 s) ----
start_bro sess --http 127.0.0.1:0 --web-dir "$WEB" --test-http-session-s 2
SO=$(sed -n 's/.*web UI: \(http:[^ ]*\) (files from .*/\1/p' "$T/sess.log")
sess_login() { curl -s -o /dev/null -c "$1" "$(ANVIL_SOCKET="$T/sess.sock" as_uid $A "$CTL" ui --no-browser 2>/dev/null)"; }
sess_login "$T/idle.jar"
sess_login "$T/used.jar"
for i in 1 2 3 4 5; do # used every 0.9 s: alive past its idle life, until its whole life
        sleep 0.9
        c=$(code -b "$T/used.jar" "$SO/api/me")
        [ "$i" -le 3 ] && { [ "$c" = 200 ] || fail "a session used every 0.9 s, at try $i: $c"; }
done
echo "ok: the control: a session used every 0.9 s lived 2.7 s, past its idle life of 2 s"
expect_eq "then it ended at its whole life (4 s)" 401 "$c"
expect_eq "a session left unused past its idle life: ended" 401 "$(code -b "$T/idle.jar" "$SO/api/me")"
kill "$BRO_PID"; wait "$BRO_PID" 2>/dev/null

# ---- POST: the session and the page's Origin ----
body='{"source":"print(1)"}'
expect_eq "POST with no Origin: 403" 403 "$(code -b "$T/a.jar" -X POST -d "$body" "$ORIGIN/api/runs")"
expect_eq "POST with a foreign Origin: 403" 403 "$(code -b "$T/a.jar" -X POST -H "Origin: http://evil.example" -d "$body" "$ORIGIN/api/runs")"
expect_eq "its message" "{\"error\":{\"code\":\"forbidden\",\"message\":\"a POST must come from the page itself (Origin $ORIGIN)\"}}" "$(curl -s -b "$T/a.jar" -X POST -H "Origin: http://evil.example" -d "$body" "$ORIGIN/api/runs")"
expect_eq "the control: the same POST with the page's Origin: 202" 202 "$(code -b "$T/a.jar" -X POST -H "Origin: $ORIGIN" -d "$body" "$ORIGIN/api/runs")"

# ---- bounds: body and headers; the socket is served on ----
head -c $((16 * 1024 * 1024 + 1)) /dev/zero | tr '\0' a >"$T/big"
expect_eq "a body over 16 MiB (Content-Length): 413" 413 "$(code -b "$T/a.jar" -X POST -H "Origin: $ORIGIN" -H 'Content-Type: application/json' --data-binary @"$T/big" "$ORIGIN/api/runs")"
expect_eq "a body over 16 MiB (chunked): 413" 413 "$(code -b "$T/a.jar" -X POST -H "Origin: $ORIGIN" -H 'Transfer-Encoding: chunked' --data-binary @"$T/big" "$ORIGIN/api/runs")"
expect_eq "headers over 32 KiB: 431" 431 "$(code -H "X-Big: $(head -c 40000 /dev/zero | tr '\0' a)" "$ORIGIN/")"
tool ok.py <<<'print("still here")'
out=$(ANVIL_SOCKET="$WEB_SOCK" "$CTL" run "$T/ok.py" 2>&1) || fail "a socket run after the oversized requests: $out"
expect_match "a socket run right after: served" "still here" "$out"
expect_eq "and the page too" 200 "$(code "$ORIGIN/")"
echo "ok: oversized requests refused, the broker serves on"
