# The web UI's JSON API (issue 13, docs/web-api.md) through a real broker and supervisor, curl
# the client: a run started from the page (POST /api/runs) goes as a socket run does and is
# its user's alone (another uid's session gets 403 for it, its artifacts, and 404 for its
# cancel); listings are each user's own; artifacts come with a Content-Type from the fixed
# list, and what could run script (x.html, x.svg) as an inert download (attachment, nosniff,
# CSP sandbox); the tool's output is JSON-escaped, never markup; an SSE follower sees a run's
# events live, and a late one everything from the start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/http_lib.sh"
A=65533
B=65532
start_web w
login $A "$T/a.jar"
login $B "$T/b.jar"
post() { # JAR PATH BODY: the answer's body; its status in $T/status
        curl -s -o "$T/post.out" -w '%{http_code}' -b "$1" -X POST -H "Origin: $ORIGIN" -H 'Content-Type: application/json' \
                --data-binary "$3" "$ORIGIN$2" >"$T/status"
        cat "$T/post.out"
}
get() { curl -s -b "$1" "$ORIGIN$2"; }

# ---- a run with artifacts of every kind ----
src=$(cat <<'PY'
import base64, csv
print("<script>alert(1)</script>")
with open("artifacts/a.csv", "w") as f:
    f.write("x,y\n1,2\n")
open("artifacts/x.html", "w").write("<script>alert(1)</script>")
open("artifacts/x.svg", "w").write('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
open("artifacts/p.png", "wb").write(base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="))
open("artifacts/notes.md", "w").write("# hi\n")
open("artifacts/blob.bin", "wb").write(b"\x00\x01")
print(open("inputs/in.txt").read())
PY
)
body=$(jq -cn --arg s "$src" '{source: $s, inputs: [{name: "in.txt", data_b64: ("from the page" | @base64)}]}')
id=$(post "$T/a.jar" /api/runs "$body" | jq -r .id)
expect_eq "POST /api/runs: 202" 202 "$(cat "$T/status")"
expect_match "its id" '^[0-9]{8}T[0-9]+-' "$id"
for _ in $(seq 100); do
        [ "$(get "$T/a.jar" "/api/runs/$id" | jq -r '.status // empty')" != "" ] && break
        sleep 0.2
done
get "$T/a.jar" "/api/runs/$id" >"$T/run.json"
expect_eq "GET /api/runs/ID: the stored result, ok" ok "$(jq -r .status "$T/run.json")"
expect_eq "its source, kept for a run from the page" "$src" "$(jq -r .source "$T/run.json")"
expect_match "the tool's output, as JSON text (escaped, never markup)" '"stdout":"<script>alert\(1\)</script>\\nfrom the page' "$(jq -c '{stdout}' "$T/run.json")"
expect_eq "GET /api/runs: A's, newest first, with this one" "$id" "$(get "$T/a.jar" /api/runs | jq -r '.entries[0].id')"
expect_eq "GET /api/runs as B: not A's" "" "$(get "$T/b.jar" /api/runs | jq -r --arg id "$id" '.entries[] | select(.id == $id) | .id')"

# ---- artifacts: the fixed list of types; script inert ----
art() { hdrs -b "$T/a.jar" "$ORIGIN/api/runs/$id/artifacts/$1"; }
expect_line "a.csv: text" 'Content-Type: text/plain; charset=utf-8' "$(art a.csv)"
expect_eq "a.csv: its bytes" "x,y
1,2" "$(get "$T/a.jar" "/api/runs/$id/artifacts/a.csv")"
expect_line "notes.md: text" 'Content-Type: text/plain; charset=utf-8' "$(art notes.md)"
expect_line "p.png: an image" 'Content-Type: image/png' "$(art p.png)"
grep -qi '^Content-Disposition' <<<"$(art p.png)" && fail "p.png is not shown inline"
h=$(art x.html)
expect_line "x.html: a download, never a page" 'Content-Type: application/octet-stream' "$h"
expect_line "x.html: attachment" 'Content-Disposition: attachment' "$h"
expect_line "x.html: nosniff" 'X-Content-Type-Options: nosniff' "$h"
h=$(art x.svg)
expect_line "x.svg: an image for <img>" 'Content-Type: image/svg\+xml' "$h"
expect_line "x.svg: attachment" 'Content-Disposition: attachment' "$h"
expect_line "x.svg: sandboxed" "Content-Security-Policy: default-src 'none'; .*; sandbox" "$h"
expect_eq "x.svg: one policy" 1 "$(grep -c '^Content-Security-Policy' <<<"$h")"
expect_line "blob.bin: a download" 'Content-Disposition: attachment' "$(art blob.bin)"
expect_eq "an artifact not listed: 400" 400 "$(code -b "$T/a.jar" "$ORIGIN/api/runs/$id/artifacts/nope.txt")"

# ---- another user: sees nothing of A's, cancels nothing ----
expect_eq "B: GET A's run: 403" 403 "$(code -b "$T/b.jar" "$ORIGIN/api/runs/$id")"
expect_match "its message" "belongs to another user|another user" "$(get "$T/b.jar" "/api/runs/$id")"
expect_eq "B: A's artifact: 403" 403 "$(code -b "$T/b.jar" "$ORIGIN/api/runs/$id/artifacts/a.csv")"
expect_eq "B: A's events: 403" 403 "$(code -b "$T/b.jar" "$ORIGIN/api/runs/$id/events")"
slow=$(jq -cn '{source: "import time\nprint(\"first\", flush=True)\ntime.sleep(3)\nprint(\"second\")"}')
sid=$(post "$T/a.jar" /api/runs "$slow" | jq -r .id)
expect_eq "B: cancel A's run in flight: 404" 404 "$(code -b "$T/b.jar" -X POST -H "Origin: $ORIGIN" "$ORIGIN/api/runs/$sid/cancel")"
expect_eq "root sees A's run" ok "$(
        ANVIL_SOCKET="$WEB_SOCK" "$CTL" ui --no-browser >"$T/root.url" 2>/dev/null
        curl -s -o /dev/null -c "$T/root.jar" "$(cat "$T/root.url")"
        get "$T/root.jar" "/api/runs/$id" | jq -r .status)"

# ---- events: a follower sees the run live; a late one sees it all ----
curl -s -N -b "$T/a.jar" "$ORIGIN/api/runs/$sid/events" >"$T/live.sse" &
LIVE=$!
OWN_PIDS+=("$LIVE")
for _ in $(seq 50); do grep -q '"text":"first' "$T/live.sse" && break; sleep 0.1; done
grep -q '"text":"first' "$T/live.sse" || fail "the follower did not see the first line live: $(cat "$T/live.sse")"
grep -q '^event: result' "$T/live.sse" && fail "the result came before the run ended"
echo "ok: the follower saw 'first' while the run ran (no result yet)"
wait "$LIVE"
expect_line "the stream ends with the result" 'event: result' "$(cat "$T/live.sse")"
expect_eq "the result's status" ok "$(sed -n 's/^data: //p' "$T/live.sse" | tail -1 | jq -r .status)"
grep -q '"text":"second' "$T/live.sse" || fail "no second line: $(cat "$T/live.sse")"
expect_line "its type" 'Content-Type: text/event-stream' "$(hdrs -b "$T/a.jar" "$ORIGIN/api/runs/$sid/events")"
curl -s -N -b "$T/a.jar" "$ORIGIN/api/runs/$sid/events" >"$T/late.sse"
expect_eq "a late follower: the same events" "$(grep -c '^event:' "$T/live.sse")" "$(grep -c '^event:' "$T/late.sse")"

# ---- cancel: the owner's own ----
cid=$(post "$T/a.jar" /api/runs "$(jq -cn '{source: "import time\ntime.sleep(30)"}')" | jq -r .id)
expect_eq "A cancels A's run: 202" 202 "$(code -b "$T/a.jar" -X POST -H "Origin: $ORIGIN" "$ORIGIN/api/runs/$cid/cancel")"
curl -s -N -b "$T/a.jar" "$ORIGIN/api/runs/$cid/events" >"$T/cancel.sse"
expect_eq "it was killed: cancelled" "killed: cancelled" "$(sed -n 's/^data: //p' "$T/cancel.sse" | tail -1 | jq -r '.killed // .status')"

# ---- the probe, the folder, break-it ----
expect_match "GET /api/probe" '"tier":' "$(get "$T/a.jar" /api/probe)"
expect_eq "GET /api/folder without --inputs" '{"files":[]}' "$(get "$T/a.jar" /api/folder)"
expect_eq "GET /api/breakit: the manifest" "$(cat "$WEB/breakit/attempts.json")" "$(get "$T/a.jar" /api/breakit)"
expect_eq "GET /api/breakit/network.py" "$(cat "$WEB/breakit/network.py")" "$(get "$T/a.jar" /api/breakit/network.py)"
expect_line "as text" 'Content-Type: text/plain; charset=utf-8' "$(hdrs -b "$T/a.jar" "$ORIGIN/api/breakit/network.py")"
expect_eq "GET /api/breakit/../x: refused" 400 "$(code --path-as-is -b "$T/a.jar" "$ORIGIN/api/breakit/..%2fattempts.json")"

# ---- the broker's stop: a follower has the stopped run's result, and the broker ends ----
lid=$(post "$T/a.jar" /api/runs "$(jq -cn '{source: "import time\ntime.sleep(30)"}')" | jq -r .id)
curl -s -N -b "$T/a.jar" "$ORIGIN/api/runs/$lid/events" >"$T/stop.sse" &
FOL=$!
OWN_PIDS+=("$FOL")
for _ in $(seq 50); do grep -q '"kind":"started"' "$T/stop.sse" && break; sleep 0.1; done
kill -TERM "$BRO_PID"
wait "$BRO_PID"
expect_eq "the broker stops: exit 0" 0 "$?"
wait "$FOL"
expect_eq "the follower had the run's result" "killed: the broker is stopping" "$(sed -n 's/^data: //p' "$T/stop.sse" | tail -1 | jq -r .killed)"
