# The model client (broker/model.c) against replies as real servers send them
# (tests/model_server.py's dialects, byte for byte: OpenAI pretty-printed, llama.cpp's key
# order and timings, Ollama's \u003c escapes, vLLM's null extras, a gateway without usage),
# streamed as server-sent events and whole: every request asks for "stream": true, a server
# that streams is read as it streams (the reply's pieces arriving before its end), one that
# answers with a whole body is read as before, one that refuses streaming is asked again at
# once without it (and a 400 for another reason is not); tool calls with content null;
# reasoning kept apart; error bodies whose error.code is a string, an integer or null; a
# stream cut by a cancel stops at once (the server sees the client go), one cut by the
# server is an error; a malformed event and an oversize stream are refused.
# Needs no daemon of the suite's; every connection is to 127.0.0.1.
. "$(dirname "$0")/lib.sh"

MC="$ANVIL_BUILD/tests/modelclient"
SRV="$TOP/tests/model_server.py"
[ -x "$MC" ] || fail "$MC is not built"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy ANVIL_MODEL_KEY
MODEL="test-model"
: >"$T/all.out"

# serve NAME SCRIPT: a scripted server of its own; its API base in URL, its record in LOG.
serve() {
        local name=$1
        printf '%s' "$2" >"$T/$name.script.json"
        "$PY" "$SRV" --script "$T/$name.script.json" --port-file "$T/$name.port" --log "$T/$name.jsonl" \
                2>"$T/$name.srv.err" &
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
        OUT=$("$MC" --model "$MODEL" --url "$URL" "$@" 2>"$T/client.err")
        RC=$?
        { echo "$OUT"; cat "$T/client.err"; } >>"$T/all.out"
        [ "$RC" -le 1 ] || fail "modelclient $* exited $RC: $OUT $(cat "$T/client.err")"
}
lj() { grep '"method"' "$LOG" | sed -n "$1p" | jq -c "$2"; }
requests() { grep -c '"method"' "$LOG"; }
errtext() { grep -E '^error' <<<"$OUT" | sed -E 's/^error attempts=[0-9]+ ms=[0-9]+: //'; }

# The content of every dialect's reply: a <code> action with the characters Go escapes and
# UTF-8, and a line end in the middle of a 7-byte piece.
CONTENT=$'Thought: x\n<code>\nif 1 > 0 & True:\n    print("\xc3\xa9 <ok>")\n</code>'
CJSON=$(jq -cn --arg c "$CONTENT" '$c')

# ---- each dialect, streamed (the request asked) and whole (a server that ignores stream) ----
for d in openai llama.cpp ollama vllm gateway; do
        serve "s-$d" "[{\"dialect\": \"$d\", \"content\": $CJSON}, {\"dialect\": \"$d\", \"content\": $CJSON, \"stream\": false}]"
        client
        expect_eq "$d, streamed: the request asked for it" true "$(lj 1 .json.stream)"
        expect_eq "$d, streamed" "ok attempts=1 finish_reason=stop content=$CJSON streamed" "$(sed -E 's/ ms=[0-9]+//' <<<"$OUT")"
        client
        expect_eq "$d, a whole body to a stream request" "ok attempts=1 finish_reason=stop content=$CJSON" \
                "$(sed -E 's/ ms=[0-9]+//' <<<"$OUT")"
done
# the bodies were the servers' own: Ollama's escapes and OpenAI's indentation on the wire
serve wire-ollama "[{\"dialect\": \"ollama\", \"content\": \"<a>\", \"stream\": false}]"
curl -s -X POST -d '{}' "$URL/chat/completions" >"$T/ollama.body"
expect_match "Ollama's body escapes < and > as Go does" '"content":"\\u003ca\\u003e"' "$(cat "$T/ollama.body")"
serve wire-openai "[{\"dialect\": \"openai\", \"content\": \"x\", \"stream\": true}]"
curl -s -N -X POST -d '{}' "$URL/chat/completions" >"$T/openai.sse"
expect_match "OpenAI's stream ends with [DONE]" 'data: \[DONE\]' "$(tail -2 "$T/openai.sse")"
expect_match "OpenAI's stream has its usage chunk, empty choices" '"choices":\[\],"usage"' "$(cat "$T/openai.sse")"

# ---- the reply's pieces arrive before its end ----
serve slow '[{"dialect": "vllm", "content": "abcd", "chunks": ["a", "b", "c", "d"], "event_delay_s": 0.3}]'
client --deltas
expect_eq "four deltas" 4 "$(grep -c '^delta ' <<<"$OUT")"
expect_eq "the deltas are the reply" '"a""b""c""d"' "$(grep '^delta ' <<<"$OUT" | cut -d' ' -f3 | tr -d '\n')"
first=$(grep -m1 '^delta ' <<<"$OUT" | sed -E 's/^delta t=([0-9]+) .*/\1/')
total=$(grep '^ok ' <<<"$OUT" | sed -E 's/.* ms=([0-9]+) .*/\1/')
[ -n "$first" ] && [ -n "$total" ] || fail "no delta or no end: $OUT"
[ $((total - first)) -ge 900 ] || fail "the first piece came ${first} ms in, the end at ${total} ms: not before the end"
echo "ok: the first piece arrived ${first} ms in, the whole reply at ${total} ms"
# control: a whole body gives no delta
serve whole '[{"dialect": "vllm", "content": "abcd", "stream": false}]'
client --deltas
expect_eq "a whole body: no delta" 0 "$(grep -c '^delta ' <<<"$OUT")"

# ---- tool calls, reasoning ----
serve tools '[{"dialect": "openai", "tool_calls": ["python", "get_weather"]}, {"dialect": "openai", "tool_calls": ["python"], "stream": false}]'
client
expect_eq "a streamed tool call: no content, the calls named" 'ok attempts=1 finish_reason=tool_calls content="" streamed tool_calls=python, get_weather' \
        "$(sed -E 's/ ms=[0-9]+//' <<<"$OUT")"
client
expect_eq "OpenAI's content null with tool_calls" 'ok attempts=1 finish_reason=tool_calls content="" tool_calls=python' \
        "$(sed -E 's/ ms=[0-9]+//' <<<"$OUT")"
serve reasoning '[{"dialect": "vllm", "content": "x = 1", "reasoning": "Let me think: ```py\ndraft()\n```"}, {"dialect": "ollama", "content": "x = 1", "reasoning": "hm", "stream": false}]'
client
expect_eq "vLLM's reasoning_content, streamed, kept apart" 'ok attempts=1 finish_reason=stop content="x = 1" streamed reasoning="Let me think: ```py\ndraft()\n```"' \
        "$(sed -E 's/ ms=[0-9]+//' <<<"$OUT")"
client
expect_eq "Ollama's reasoning kept apart" 'ok attempts=1 finish_reason=stop content="x = 1" reasoning="hm"' \
        "$(sed -E 's/ ms=[0-9]+//' <<<"$OUT")"

# ---- a server that does not stream: asked again at once without it ----
serve nostream '[{"status": 400, "body": {"error": {"message": "stream is not supported by this backend", "code": null}}}, {"dialect": "gateway", "content": "fine"}]'
client --retries 0
expect_eq "asked again without stream" 'ok attempts=2 finish_reason=stop content="fine"' "$(sed -E 's/ ms=[0-9]+//' <<<"$OUT")"
expect_eq "the second request's stream" false "$(lj 2 .json.stream)"
# control: a 400 for another reason is the error it is, asked once
serve other400 '[{"error_dialect": "openai", "status": 400, "message": "maximum context length exceeded"}, {"dialect": "gateway"}]'
client --retries 0
expect_eq "another 400: not asked again" 1 "$(requests)"
expect_eq "another 400's error" "the model server answered HTTP 400; the server says: maximum context length exceeded" "$(errtext)"

# ---- error bodies as servers send them: error.code a string, an integer, null ----
for d in openai llama.cpp vllm ollama gateway; do
        serve "e-$d" "[{\"error_dialect\": \"$d\", \"status\": 404, \"message\": \"no model x here\"}]"
        client --retries 0
        expect_match "$d's error body" "the model server has nothing at .*; the server says: no model x here$" "$(errtext)"
done

# ---- a stream cut: by a cancel (the server sees the client go), by the server ----
serve cancel '[{"dialect": "openai", "content": "abcdefghijklmnopqrstuvwxyz", "chunks": ["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q","r","s","t"], "event_delay_s": 0.25}]'
client --cancel-after 1000 --deltas
expect_match "a cancel ends the request" '^error attempts=1 ms=[0-9]+: cancelled$' "$(grep '^error' <<<"$OUT")"
ms=$(grep '^error' <<<"$OUT" | sed -E 's/.* ms=([0-9]+):.*/\1/')
[ "$ms" -lt 1500 ] || fail "the cancel took $ms ms"
[ "$(grep -c '^delta ' <<<"$OUT")" -ge 1 ] || fail "no piece arrived before the cancel: $OUT"
for _ in $(seq 50); do grep -q stream_cut_after "$LOG" && break; sleep 0.1; done
cut=$(jq -r 'select(.stream_cut_after) | "\(.stream_cut_after) of \(.of)"' "$LOG")
[ -n "$cut" ] || fail "the server did not see the client hang up"
echo "ok: the stream stopped at the cancel: the server sent $cut events"
serve died '[{"dialect": "llama.cpp", "content": "abcdefghijklmnopqrstuvwxyz", "close_after_events": 3}, {"dialect": "llama.cpp"}]'
client --retries 3
expect_match "a stream the server cut" "^error attempts=1 ms=[0-9]+: the model server at 127.0.0.1:[0-9]+ ended the connection in the middle of its reply" "$OUT"
expect_eq "a stream partly told is not asked again" 1 "$(requests)"

# ---- what a stream may not be ----
serve bad "[{\"raw\": \"data: {\\\"choices\\\":[{\\\"delta\\\":{\\\"content\\\":\\\"a\\\"}}]}\\n\\ndata: {oops}\\n\\n\", \"headers\": {\"Content-Type\": \"text/event-stream\"}}]"
client
expect_eq "a malformed event" "the model server's reply is not valid JSON: string or '}' expected near 'oops' (at byte 5)" "$(errtext)"
unit='data: {"choices":[{"delta":{"content":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}]}\n\n'
serve big "[{\"raw\": $(printf '%s' "$unit" | jq -Rs . | sed 's/\\\\n/\\n/g'), \"repeat\": 120000, \"no_length\": true, \"headers\": {\"Content-Type\": \"text/event-stream\"}}]"
client
expect_eq "a stream over the bound" "the model server's reply is larger than 8 MiB" "$(errtext)"
