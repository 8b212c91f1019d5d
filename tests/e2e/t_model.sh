# The model client (broker/model.c) against a real HTTP server on 127.0.0.1
# (tests/model_server.py, replaying a script), through tests/e2e/modelclient: a reply and the
# request as the server received it (model, messages, max_tokens, temperature, the key as a
# Bearer header, nothing sent that was not set); 429 with Retry-After then a success; 5xx
# retried with backoff then given up; a reset connection retried; 401 (with and without a
# key), 403, 404 naming the URL; a refused connection naming host:port; an https server with
# a certificate not trusted, refused before anything is sent; malformed bodies;
# finish_reason length; a timeout; an oversize body, with and without Content-Length, and a
# body of exactly the limit taken; oversize headers; requests at once; cancel and close; the
# server's message made printable. The key is in no output. Then the broker's --model-* settings: each bad
# value refused with its message, a key file open to others or owned by someone else
# refused, and ANVIL_MODEL_KEY wiped from the running broker's environment.
# Needs no daemon of the suite's; every connection is to 127.0.0.1.
. "$(dirname "$0")/lib.sh"

MC="$ANVIL_BUILD/tests/modelclient"
SRV="$TOP/tests/model_server.py"
[ -x "$MC" ] || fail "$MC is not built"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy ANVIL_MODEL_KEY
KEY="sk-anvil-e2e-$RANDOM$RANDOM-$RANDOM$RANDOM"
TLS_ARGS=()
MODEL="test-model"
: >"$T/all.out"

# serve NAME SCRIPT: a scripted server of its own; its API base in URL, its record in LOG.
serve() {
        local name=$1
        printf '%s' "$2" >"$T/$name.script.json"
        "$PY" "$SRV" --script "$T/$name.script.json" --port-file "$T/$name.port" --log "$T/$name.jsonl" \
                "${TLS_ARGS[@]}" 2>"$T/$name.srv.err" &
        OWN_PIDS+=("$!")
        for _ in $(seq 100); do
                [ -s "$T/$name.port" ] && break
                sleep 0.05
        done
        [ -s "$T/$name.port" ] || fail "the scripted server $name did not start: $(cat "$T/$name.srv.err")"
        URL="http://127.0.0.1:$(cat "$T/$name.port")/v1"
        LOG="$T/$name.jsonl"
}

# client ARGS...: one request (modelclient); its line(s) in OUT, its exit code in RC.
client() {
        OUT=$("$MC" --model "$MODEL" "$@" 2>"$T/client.err")
        RC=$?
        { echo "$OUT"; cat "$T/client.err"; } >>"$T/all.out"
        [ "$RC" -le 1 ] || fail "modelclient $* exited $RC: $OUT $(cat "$T/client.err")"
}

completion() { # CONTENT [FINISH_REASON]: a chat completion body
        "$PY" "$SRV" --completion "$1" --finish-reason "${2:-stop}"
}

requests() { wc -l <"$LOG" | tr -d ' '; }
# lj N FILTER: jq on the Nth request the server recorded
lj() { sed -n "$1p" "$LOG" | jq -c "$2"; }
# the error text of OUT, without "error attempts=A ms=M: "
errtext() { sed -E 's/^error attempts=[0-9]+ ms=[0-9]+: //' <<<"$OUT"; }
field() { grep -oE "(^| )$1=[^ :]+" <<<"$OUT" | head -1 | sed -E "s/^ ?$1=//"; }

# ---- a reply, and the request as the server saw it ----
serve ok "[{\"body\": $(completion 'print("hi") # é')}]"
cat >"$T/messages.json" <<'JSON'
[{"role": "system", "content": "You write Python tools."},
 {"role": "user", "content": "Sum revenue by region — in €\nplease"}]
JSON
ANVIL_MODEL_KEY="$KEY" client --url "$URL/" --messages "$T/messages.json" --max-tokens 64 --temperature 0.2
expect_eq "a reply's exit" 0 "$RC"
expect_match "a reply" '^ok attempts=1 ms=[0-9]+ finish_reason=stop content="print\(\\"hi\\"\) # é"$' "$OUT"
expect_eq "requests received" 1 "$(requests)"
expect_eq "method and path (the URL's trailing / dropped)" "POST /v1/chat/completions" "$(lj 1 '.method + " " + .path' | tr -d '"')"
expect_eq "the request's model" "\"$MODEL\"" "$(lj 1 .json.model)"
expect_eq "the request's messages" "$(jq -c . "$T/messages.json")" "$(lj 1 .json.messages)"
expect_eq "the request's max_tokens" 64 "$(lj 1 .json.max_tokens)"
expect_eq "the request's temperature" 0.2 "$(lj 1 .json.temperature)"
expect_eq "the request asks for a stream" true "$(lj 1 .json.stream)"
expect_eq "the request accepts a stream" "\"application/json, text/event-stream\"" "$(lj 1 .headers.Accept)"
expect_eq "the Authorization header" "\"Bearer $KEY\"" "$(lj 1 .headers.Authorization)"
expect_eq "the Content-Type header" '"application/json"' "$(lj 1 '.headers["Content-Type"]')"
expect_eq "no Expect: 100-continue" null "$(lj 1 .headers.Expect)"

serve plain "[{}]"
client --url "$URL"
expect_match "without key, max_tokens, temperature" '^ok attempts=1 .*content="hello from step 1"$' "$OUT"
expect_eq "the request's keys when nothing optional is set" '["messages","model","stream"]' "$(lj 1 '.json | keys')"
expect_eq "no Authorization header without a key" null "$(lj 1 .headers.Authorization)"

# A key from a file, read as the broker reads it.
printf '%s\n' "$KEY" >"$T/key"
chmod 600 "$T/key"
serve keyfile "[{}]"
client --url "$URL" --key-file "$T/key"
expect_eq "the key file's key, its newline stripped" "\"Bearer $KEY\"" "$(lj 1 .headers.Authorization)"

# ---- retries ----
serve ra "[{\"status\": 429, \"headers\": {\"Retry-After\": \"1\"}, \"body\": {\"error\": {\"message\": \"Rate limit reached\"}}}, {}]"
client --url "$URL"
expect_match "429 with Retry-After: 1, then a reply" '^ok attempts=2 ms=[0-9]+ finish_reason=stop content="hello from step 2"$' "$OUT"
expect_eq "requests received" 2 "$(requests)"
waited=$(jq -rs '.[1].t - .[0].t' "$LOG")
expect_eq "the wait between them is at least Retry-After's 1 s ($waited s)" true "$(jq -n "$waited >= 1.0")"
[ "$(field ms)" -ge 1000 ] || fail "the reply's ms ($(field ms)) is under the 1 s waited"

serve five "[{\"status\": 500, \"body\": {\"error\": {\"message\": \"overloaded\"}}}, {\"status\": 502, \"raw\": \"Bad Gateway\"}, {\"status\": 503}]"
client --url "$URL" --retries 2
expect_eq "three 5xx: exit" 1 "$RC"
expect_eq "three 5xx: the error" "the model server answered HTTP 503 (gave up after 3 attempts)" "$(errtext)"
expect_eq "three 5xx: attempts" 3 "$(field attempts)"
expect_eq "requests received" 3 "$(requests)"
expect_eq "the backoff: at least 0.5 s, then 1 s" true "$(jq -s '(.[1].t - .[0].t >= 0.5) and (.[2].t - .[1].t >= 1.0)' "$LOG")"
grep -q "the model server answered HTTP 500; the server says: overloaded; attempt 2 of 3 in 500 ms" "$T/client.err" ||
        fail "the first retry is not logged with the server's message: $(cat "$T/client.err")"
echo "ok: each retry is logged, with the server's message"

serve five1 "[{\"status\": 500, \"body\": {\"error\": {\"message\": \"overloaded\"}}}]"
client --url "$URL" --retries 0
expect_eq "one 500 without retries" "the model server answered HTTP 500; the server says: overloaded" "$(errtext)"
expect_eq "requests received" 1 "$(requests)"

serve exhausted "[]"
client --url "$URL" --retries 1
expect_eq "beyond the script" "the model server answered HTTP 500; the server says: script exhausted (gave up after 2 attempts)" "$(errtext)"

serve reset "[{\"close\": true}, {}]"
client --url "$URL"
expect_match "a connection closed without a reply, then a reply" '^ok attempts=2 .*content="hello from step 2"$' "$OUT"
serve reset2 "[{\"close\": true}, {\"close\": true}]"
client --url "$URL" --retries 1
expect_eq "closed twice" "the model server at 127.0.0.1:$(cat "$T/reset2.port") closed the connection without a reply (gave up after 2 attempts)" "$(errtext)"

# ---- what is not retried ----
serve e401 "[{\"status\": 401, \"body\": {\"error\": {\"message\": \"Incorrect API key provided: $KEY\"}}}]"
ANVIL_MODEL_KEY="$KEY" client --url "$URL"
expect_eq "401 with a key" "the model server refused the key (HTTP 401)" "$(errtext)"
expect_eq "401: attempts" 1 "$(field attempts)"
serve e401b "[{\"status\": 401}]"
client --url "$URL"
expect_eq "401 without a key" "the model server wants a key (HTTP 401) and none is set (ANVIL_MODEL_KEY or --model-key-file)" "$(errtext)"

serve e403 "[{\"status\": 403, \"body\": {\"error\": {\"message\": \"Project does not have access to model\"}}}]"
client --url "$URL"
expect_eq "403" "the model server refused access to model '$MODEL' (HTTP 403); the server says: Project does not have access to model" "$(errtext)"

serve e404 "[{\"status\": 404, \"body\": {\"error\": {\"message\": \"The model \`$MODEL\` does not exist\"}}}]"
client --url "$URL"
expect_eq "404 names the URL" "the model server has nothing at $URL/chat/completions (HTTP 404): check the URL and the model name '$MODEL'; the server says: The model \`$MODEL\` does not exist" "$(errtext)"
expect_eq "404: requests received" 1 "$(requests)"

serve e418 "[{\"status\": 418, \"raw\": \"\\u001b[31mI'm a\\tteapot\\u202e $KEY\\r\\nsecond line\"}]"
client --url "$URL" --key-file "$T/key"
expect_eq "another status; the server's message printable, the key redacted" "the model server answered HTTP 418; the server says: [31mI'm a teapot [redacted]" "$(errtext)"

# Nothing listens on a port just released.
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
client --url "http://127.0.0.1:$port/v1" --retries 1
expect_eq "connection refused" "cannot connect to the model server at 127.0.0.1:$port: connection refused (gave up after 2 attempts)" "$(errtext)"
expect_eq "connection refused: attempts" 2 "$(field attempts)"
client --url "http://127.0.0.1:$port/v1" --retries 0
expect_eq "connection refused, no retries" "cannot connect to the model server at 127.0.0.1:$port: connection refused" "$(errtext)"

# An https server the client has no reason to trust: the handshake fails, nothing is sent.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/tls.key" -out "$T/tls.crt" -days 1 \
        -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1 ||
        fail "openssl could not make a self-signed certificate"
TLS_ARGS=(--tls-cert "$T/tls.crt" --tls-key "$T/tls.key")
serve tls "[{}]"
url_tls="https://127.0.0.1:$(cat "$T/tls.port")/v1"
ANVIL_MODEL_KEY="$KEY" client --url "$url_tls"
expect_eq "an untrusted certificate" "TLS with the model server at 127.0.0.1:$(cat "$T/tls.port") failed: SSL peer certificate or SSH remote key was not OK" "$(errtext)"
expect_eq "an untrusted certificate: nothing sent" 0 "$(requests)"
TLS_ARGS=()

# ---- malformed replies ----
serve html "[{\"raw\": \"<html>oops</html>\"}]"
client --url "$URL"
expect_eq "not JSON" "the model server's reply is not valid JSON: '[' or '{' expected near '<' (at byte 1)" "$(errtext)"
expect_eq "not JSON: not retried" 1 "$(requests)"
serve nochoices '[{"body": {"id": "x", "choices": []}}]'
client --url "$URL"
expect_eq "no choices" "the model server's reply has no choices" "$(errtext)"
serve nocontent '[{"body": {"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": []}, "finish_reason": "tool_calls"}]}}]'
client --url "$URL"
expect_eq "no message content" "the model server's reply has no message content" "$(errtext)"
serve errin200 '[{"body": {"error": {"message": "upstream model crashed"}}}]'
client --url "$URL"
expect_eq "an error in a 200" "the model server answered with an error: upstream model crashed" "$(errtext)"

serve keyinreply "[{\"body\": $(completion "import os  # $KEY")}]"
ANVIL_MODEL_KEY="$KEY" client --url "$URL"
expect_eq "a reply that contains the key" "the model server's reply contains the key; it is refused" "$(errtext)"
serve length "[{\"body\": $(completion 'def f(' length)}, {\"body\": $(completion 'def g(' length)}]"
client --url "$URL" --max-tokens 16
expect_match "finish_reason length" '^error attempts=1 ms=[0-9]+: the model.s reply was cut at max_tokens \(16\): finish_reason is length content="def f\("$' "$OUT"
client --url "$URL"
expect_eq "finish_reason length, max_tokens not sent" "the model's reply was cut at the server's token limit: finish_reason is length content=\"def g(\"" "$(errtext)"

# ---- bounds ----
serve slow '[{"delay_s": 4}]'
client --url "$URL" --timeout 1
expect_eq "a slow server" "the model server did not answer within 1 s" "$(errtext)"
ms=$(field ms)
{ [ "$ms" -ge 1000 ] && [ "$ms" -lt 3000 ]; } || fail "the timeout took $ms ms"
echo "ok: the timeout took $ms ms"
expect_eq "a timeout is not retried" 1 "$(requests)"

big=$((9 * 1024 * 1024))
serve big "[{\"raw\": \"x\", \"repeat\": $big}, {\"raw\": \"x\", \"repeat\": $big, \"no_length\": true}, {\"status\": 500, \"raw\": \"x\", \"repeat\": $big}]"
client --url "$URL" --retries 0
expect_eq "an oversize body (Content-Length)" "the model server's reply is larger than 8 MiB" "$(errtext)"
client --url "$URL" --retries 0
expect_eq "an oversize body (no Content-Length)" "the model server's reply is larger than 8 MiB" "$(errtext)"
client --url "$URL" --retries 3
expect_eq "an oversize error body, not retried" "the model server's reply is larger than 8 MiB" "$(errtext)"
expect_eq "requests received" 3 "$(requests)"
serve bighdr "$("$PY" -c 'import json; print(json.dumps([{"headers": {f"X-Pad-{i}": "p" * 1000 for i in range(70)}}]))')"
client --url "$URL" --retries 0
expect_eq "headers of 70 KB" "the model server's reply headers are larger than 64 KiB" "$(errtext)"
serve exact "[{\"body\": $(completion 'print(8)'), \"pad_to\": $((8 * 1024 * 1024))}]"
client --url "$URL"
expect_match "control: a body of exactly 8 MiB is taken" '^ok attempts=1 .*content="print\(8\)"$' "$OUT"

# ---- requests at once, cancel, close ----
serve par "[$(printf '{"delay_s": 0.5},%.0s' $(seq 7)) {\"delay_s\": 0.5}]"
client --url "$URL" --parallel 8
expect_eq "8 at once: all ok" 8 "$(grep -c '^ok attempts=1 ' <<<"$OUT")"
expect_eq "8 at once: 8 different replies" 8 "$(grep -oE 'step [0-9]+' <<<"$OUT" | sort -u | wc -l | tr -d ' ')"
ms=$(grep -oE 'ms=[0-9]+' <<<"$OUT" | cut -d= -f2 | sort -n | tail -1)
[ "$ms" -lt 2000 ] || fail "8 at once took $ms ms (half a second each): were they run one after the other?"
echo "ok: 8 at once, the slowest in $ms ms"

serve cancel '[{"delay_s": 5}, {"delay_s": 5}, {"status": 503}]'
client --url "$URL" --cancel-after 300
expect_eq "cancel while the server is slow" cancelled "$(errtext)"
[ "$(field ms)" -lt 2000 ] || fail "the cancel took $(field ms) ms"
client --url "$URL" --close-after 300
expect_eq "close while the server is slow" cancelled "$(errtext)"
client --url "$URL" --retries 3 --cancel-after 200
expect_eq "cancel while waiting to retry" "cancelled" "$(errtext)"
expect_eq "cancel while waiting to retry: attempts" 1 "$(field attempts)"

# ---- the key appears in nothing printed ----
if grep -qF "$KEY" "$T/all.out"; then
        fail "the key appears in modelclient's output or log: $(grep -F "$KEY" "$T/all.out" | head -2)"
fi
echo "ok: the key is in none of modelclient's output and log lines"
if grep -qF "${KEY: -8}" "$T/all.out"; then
        fail "the key's last 8 characters appear in modelclient's output"
fi
echo "ok: nor its last 8 characters"

# ---- the broker's settings ----
BRO="$ANVIL_BUILD/anvil-broker"
broker_args=(--config /dev/null --supervisor "$T/nosuch.sock" --listen "$T/bro.sock" --state-dir "$T/bro")
refused() { # WHAT EXPECTED-MESSAGE [ENV=VALUE] ARGS...: the broker refuses to start, saying so
        local what=$1 want=$2 out rc
        shift 2
        out=$(env "$@" 2>&1 </dev/null)
        rc=$?
        expect_eq "$what: exit" 2 "$rc"
        expect_eq "$what" "anvil-broker: $want (see --help)" "$(head -1 <<<"$out")"
        if grep -qF "$KEY" <<<"$out"; then fail "$what: the key is in the message"; fi
}
good=(--model-url "http://127.0.0.1:9/v1" --model m)
refused "--model-timeout 0" "--model-timeout: '0' is not a whole number of seconds within 1..3600" "$BRO" "${broker_args[@]}" "${good[@]}" --model-timeout 0
refused "--model-timeout 1s" "--model-timeout: '1s' is not a whole number of seconds within 1..3600" "$BRO" "${broker_args[@]}" "${good[@]}" --model-timeout 1s
refused "--model-max-tokens -1" "--model-max-tokens: '-1' is not a whole number within 0..1000000" "$BRO" "${broker_args[@]}" "${good[@]}" --model-max-tokens -1
refused "--model-temperature 2.5" "--model-temperature: '2.5' is not a number within 0..2" "$BRO" "${broker_args[@]}" "${good[@]}" --model-temperature 2.5
refused "--model-temperature nan" "--model-temperature: 'nan' is not a number within 0..2" "$BRO" "${broker_args[@]}" "${good[@]}" --model-temperature nan
refused "--model-retries 11" "--model-retries: '11' is not a whole number within 0..10" "$BRO" "${broker_args[@]}" "${good[@]}" --model-retries 11
refused "an ftp URL" "model URL: only http:// and https:// are supported" "$BRO" "${broker_args[@]}" --model-url ftp://127.0.0.1/v1 --model m
refused "credentials in the URL" "model URL: has credentials in it; give the key by ANVIL_MODEL_KEY or --model-key-file" "$BRO" "${broker_args[@]}" --model-url "http://user:$KEY@127.0.0.1/v1" --model m
refused "a query in the URL" "model URL: has a query or fragment; give the API base, e.g. https://api.openai.com/v1" "$BRO" "${broker_args[@]}" --model-url "http://127.0.0.1/v1?x=1" --model m
refused "no --model" "no model is set: give --model" "$BRO" "${broker_args[@]}" --model-url http://127.0.0.1/v1
refused "a key file without a URL" "no model server is set: give --model-url" "$BRO" "${broker_args[@]}" --model-key-file "$T/key"
refused "the key twice" "the key is given twice, by ANVIL_MODEL_KEY and --model-key-file: give one" ANVIL_MODEL_KEY="$KEY" "$BRO" "${broker_args[@]}" "${good[@]}" --model-key-file "$T/key"
refused "a key with a blank" "ANVIL_MODEL_KEY: the key has a blank, a control character or a non-ASCII byte (at byte 3)" ANVIL_MODEL_KEY="abc def" "$BRO" "${broker_args[@]}" "${good[@]}"
cp "$T/key" "$T/key644"
chmod 644 "$T/key644"
refused "a key file others may read" "--model-key-file: key file $T/key644: open to group or others (mode 0644): chmod 600 it" "$BRO" "${broker_args[@]}" "${good[@]}" --model-key-file "$T/key644"
cp "$T/key" "$T/keynobody"
chown nobody "$T/keynobody"
refused "a key file of another user" "--model-key-file: key file $T/keynobody: owned by uid $(id -u nobody), not by the broker's uid $(id -u)" "$BRO" "${broker_args[@]}" "${good[@]}" --model-key-file "$T/keynobody"
: >"$T/keyempty"
chmod 600 "$T/keyempty"
refused "an empty key file" "--model-key-file: key file $T/keyempty: the key is empty" "$BRO" "${broker_args[@]}" "${good[@]}" --model-key-file "$T/keyempty"
printf 'a\nb\n' >"$T/keytwolines"
chmod 600 "$T/keytwolines"
refused "a key file of two lines" "--model-key-file: key file $T/keytwolines: the key has a blank, a control character or a non-ASCII byte (at byte 1)" "$BRO" "${broker_args[@]}" "${good[@]}" --model-key-file "$T/keytwolines"

# A broker started with the key in its environment: running, it no longer has it there,
# and its log names where the key came from, never the key.
ANVIL_MODEL_KEY="$KEY" "$BRO" "${broker_args[@]}" "${good[@]}" --model-retries 1 >"$T/bro.log" 2>&1 &
bro_pid=$!
OWN_PIDS+=("$bro_pid")
for _ in $(seq 100); do
        grep -q "model: " "$T/bro.log" && break
        sleep 0.05
done
expect_match "the broker's log of its model" "model: m at http://127.0.0.1:9/v1, key from ANVIL_MODEL_KEY, timeout 120 s, 1 retries" "$(cat "$T/bro.log")"
tr '\0' '\n' <"/proc/$bro_pid/environ" >"$T/bro.environ"
grep -q '^ANVIL_MODEL_KEY=' "$T/bro.environ" || fail "control: the broker's initial environment has no ANVIL_MODEL_KEY entry at all"
if grep -qF "$KEY" "$T/bro.environ"; then fail "the key is still in the running broker's /proc/PID/environ"; fi
echo "ok: the key is wiped from the running broker's /proc/PID/environ"
kill "$bro_pid"
wait "$bro_pid" 2>/dev/null
if grep -qF "$KEY" "$T/bro.log"; then fail "the key is in the broker's log"; fi
echo "ok: the key is not in the broker's log"
expect_match "the broker stops cleanly with its model client" ": stopped$" "$(tail -1 "$T/bro.log")"
