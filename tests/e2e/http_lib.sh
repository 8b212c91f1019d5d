# Helpers for the web UI's tests (t_http_*.sh): a broker of the test's own with --http on a
# free loopback port and a web directory of the test's, and curl as the HTTP client.
# start_web NAME [broker options...]: the broker (start_bro), its origin in ORIGIN.
WEB="$T/web"
mkdir -p "$WEB/breakit" "$WEB/vendor/lib"
printf '<!doctype html><title>Anvil</title><script src="app.js"></script>\n' >"$WEB/index.html"
printf 'console.log("app");\n' >"$WEB/app.js"
printf 'body { margin: 0 }\n' >"$WEB/style.css"
printf 'export const x = 1;\n' >"$WEB/vendor/lib/x.js"
printf '[{"id":"network","title":"Open a socket"}]\n' >"$WEB/breakit/attempts.json"
printf 'import socket\nsocket.socket()\n' >"$WEB/breakit/network.py"
printf 'secret\n' >"$WEB/.hidden"
chmod -R a+rX "$WEB"
start_web() {
        local name=$1
        shift
        start_bro "$name" --http 127.0.0.1:0 --web-dir "$WEB" "$@"
        ORIGIN=$(sed -n 's/.*web UI: \(http:[^ ]*\) (files from .*/\1/p' "$T/$name.log" | tail -1)
        [ -n "$ORIGIN" ] || fail "the broker $name names no web UI origin: $(cat "$T/$name.log")"
        WEB_SOCK="$T/$name.sock"
}
# login_link UID [ui options]: a login link for UID, from anvilctl ui --no-browser
login_link() {
        local uid=$1
        shift
        ANVIL_SOCKET="$WEB_SOCK" as_uid "$uid" "$CTL" ui --no-browser "$@" 2>"$T/ui.err" || fail "anvilctl ui as $uid: $(cat "$T/ui.err")"
}
# login UID JAR [ui options]: a session for UID, its cookie in JAR
login() {
        local uid=$1 jar=$2 url
        shift 2
        url=$(login_link "$uid" "$@")
        curl -s -o /dev/null -c "$jar" -w '%{http_code}' "$url" | grep -qx 303 || fail "login as $uid: not 303"
}
# code ARGS...: curl's status code for the request
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
# hdrs ARGS...: the answer's headers, CR removed
hdrs() { curl -s -D - -o /dev/null "$@" | tr -d '\r'; }
# expect_line WHAT REGEX TEXT: some line of TEXT is REGEX, whole (headers, one a line)
expect_line() {
        grep -Eqx -- "$2" <<<"$3" || fail "$1: no line is /$2/ in: $3"
        echo "ok: $1: a line is /$2/"
}
