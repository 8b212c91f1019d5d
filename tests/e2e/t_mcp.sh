# anvil-mcp against the suite's daemons, driven by a client we did not write: the official MCP
# TypeScript SDK (@modelcontextprotocol/sdk, pinned in tests/mcp/package-lock.json, installed
# here with `npm ci` when the lock changed) spawns it over stdio as a host does, and calls
# everything (tests/mcp/client.mjs; submit_task against a broker of its own with a scripted
# model); then malformed JSON-RPC is written raw to its stdin, each
# answered per JSON-RPC and MCP, verbatim, with the process still serving (tests/mcp/raw.py).
# The run the SDK cancels must be stored as killed: cancelled.
. "$(dirname "$0")/lib.sh"
MCP="$ANVIL_BUILD/anvil-mcp"
DIR="$TOP/tests/mcp"
[ -x "$MCP" ] || fail "no $MCP: build it (make)"
command -v node >/dev/null || fail "node is not installed (make deps)"

# The SDK, from its lock, once per version of the lock (a stamp of its hash beside it).
want=$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$DIR/node_modules/.anvil-lock" 2>/dev/null)" != "$want" ]; then
        (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error) >"$T/npm.log" 2>&1 ||
                fail "npm ci in tests/mcp: $(tail -5 "$T/npm.log")"
        echo "$want" >"$DIR/node_modules/.anvil-lock"
fi
version=$(node -e 'console.log(require(process.argv[1]).version)' "$DIR/node_modules/@modelcontextprotocol/sdk/package.json")
expect_eq "the MCP SDK installed is the one pinned" "$(jq -r '.packages["node_modules/@modelcontextprotocol/sdk"].version' "$DIR/package-lock.json")" "$version"

cp "$TOP/data/sales.csv" "$T/sales.csv"
# submit_task's broker: one of the test's own, whose model is the scripted one of the README's
# first task (a look at the data, an attempt at the network, the tool).
. "$(dirname "$0")/agent_lib.sh"
cp "$TOP/examples/agent/scripted_model.json" "$T/scripts/readme.json"
start_model readme
start_bro taskbro --model-url "http://127.0.0.1:$PORT_readme/v1" --model scripted
export ANVIL_MCP_TASK_SOCKET="$T/taskbro.sock"
(cd "$DIR" && timeout 120 node client.mjs "$MCP" "$T/sales.csv" "$T") >"$T/client.out" 2>&1 ||
        { cat "$T/client.out"; fail "the SDK's client failed"; }
cat "$T/client.out"
run=$(cat "$T/cancelled_run")
# The broker stores the result once the supervisor has ended the run.
for _ in $(seq 50); do
        "$CTL" show "$run" --json >"$T/result.json" 2>/dev/null && break
        sleep 0.2
done
expect_eq "the run the SDK cancelled, as stored" "killed: cancelled" "$(j .killed)"

timeout 120 "$PY" "$DIR/raw.py" "$MCP" >"$T/raw.out" 2>&1 || { cat "$T/raw.out"; fail "raw JSON-RPC"; }
cat "$T/raw.out"

# Inputs are opened by anvil-mcp as the user it runs as: as nobody, a file only root may read
# is refused with the system's reason; the control, a file anyone may read, is read in the jail.
printf 'secret\n' >"$T/secret.txt"
chmod 600 "$T/secret.txt"
printf 'public\n' >"$T/public.txt"
chmod 644 "$T/public.txt"
as_nobody_run() { # PATH: the run_python result's text, anvil-mcp as nobody on taskbro
        setpriv --reuid=65534 --regid=65534 --clear-groups -- env ANVIL_SOCKET="$T/taskbro.sock" "$PY" -c '
import json, subprocess, sys
msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
         "capabilities": {}, "clientInfo": {"name": "t_mcp", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run_python", "arguments": {
         "code": "print(open(\"inputs/" + sys.argv[2].rsplit("/", 1)[1] + "\").read().strip())", "inputs": [sys.argv[2]]}}}]
p = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
for m in msgs:
    p.stdin.write(json.dumps(m) + "\n")
p.stdin.flush()
for line in p.stdout:
    m = json.loads(line)
    if m.get("id") == 2:
        r = m["result"]
        print(json.dumps({"isError": r["isError"], "text": r["content"][0]["text"]}))
        break
p.stdin.close()
p.wait()' "$MCP" "$1"
}
out=$(as_nobody_run "$T/secret.txt")
expect_eq "as nobody, a file only root may read" \
        "{\"isError\": true, \"text\": \"inputs[0] $T/secret.txt: cannot open it: Permission denied\"}" "$out"
out=$(as_nobody_run "$T/public.txt")
expect_match "control: as nobody, a file anyone may read" '"isError": false, "text": "run [^:]+: ok \(exit code 0\).*stdout:\\n  public\\n' "$out"

# The control of the cancel: the same long run, not cancelled, is not killed at once (it
# would be without the cancel: it ends by its timeout).
"$CTL" run - --timeout 2 --json >"$T/result.json" 2>/dev/null <<'PY' || true
import time
for i in range(600):
    print("tick", i, flush=True)
    time.sleep(0.1)
PY
expect_eq "control: the long run not cancelled" "killed: timeout" "$(j .killed)"

# docs/mcp.md's schemas are what tools/list answers.
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t_mcp","version":"1"}}}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | "$MCP" 2>/dev/null | jq -S -c 'select(.id == 2) | [.result.tools[] | {name, inputSchema}]' >"$T/listed.json"
awk '/^### The tools. schemas/ { s = 1 } s && /^```json/ { b = 1; next } b && /^```/ { exit } b' "$TOP/docs/mcp.md" |
        jq -S -c . >"$T/documented.json"
[ -s "$T/listed.json" ] || fail "tools/list did not answer"
cmp -s "$T/listed.json" "$T/documented.json" || fail "docs/mcp.md's schemas are not what tools/list answers:
$(diff <(jq . "$T/documented.json") <(jq . "$T/listed.json") | head -20)"
echo "ok: docs/mcp.md's schemas are what tools/list answers"
