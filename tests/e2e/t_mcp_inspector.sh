# anvil-mcp against a second client we did not write: the MCP Inspector's CLI mode
# (@modelcontextprotocol/inspector, pinned in tests/mcp/inspector/package-lock.json, installed
# here with `npm ci` when the lock changed: 260 packages, half a minute the first time). Each
# call is a session of its own: the tools listed, a run and its artifact read back as a
# resource, a blocked run (isError, the refusal verbatim), an unknown tool (an error, exit 1).
# Its release needs node 22.7.5 by its package's word; it runs on node 20, which npm says
# with a warning (docs/mcp.md).
. "$(dirname "$0")/lib.sh"
MCP="$ANVIL_BUILD/anvil-mcp"
DIR="$TOP/tests/mcp/inspector"
command -v node >/dev/null || fail "node is not installed (make deps)"
want=$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$DIR/node_modules/.anvil-lock" 2>/dev/null)" != "$want" ]; then
        (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error) >"$T/npm.log" 2>&1 ||
                fail "npm ci in tests/mcp/inspector: $(tail -5 "$T/npm.log")"
        echo "$want" >"$DIR/node_modules/.anvil-lock"
fi
# The CLI looks for its own package.json at "../package.json" from the working directory
# before its module's: it is run from a directory whose parent has none.
mkdir -p "$T/cwd/run"
insp() {
        (cd "$T/cwd/run" && timeout 60 "$DIR/node_modules/.bin/mcp-inspector" --cli "$MCP" -e "ANVIL_SOCKET=$ANVIL_SOCKET" "$@")
}

insp --method tools/list >"$T/list.json" 2>"$T/err" || fail "tools/list: $(cat "$T/err")"
expect_eq "the tools the Inspector lists" '["run_python","submit_task","probe"]' "$(jq -c '[.tools[].name]' "$T/list.json")"

insp --method tools/call --tool-name run_python \
        --tool-arg "code=$(printf 'print("hello")\nopen("artifacts/hello.txt", "w").write("hi\\n")')" >"$T/ok.json" 2>"$T/err" ||
        fail "tools/call: $(cat "$T/err")"
expect_eq "a run's isError" false "$(jq -r .isError "$T/ok.json")"
expect_match "its text" '^run [^:]+: ok \(exit code 0\) in .*stdout:
  hello
' "$(jq -r '.content[0].text' "$T/ok.json")"
run=$(jq -r .structuredContent.run_id "$T/ok.json")
insp --method resources/read --uri "anvil://run/$run/hello.txt" >"$T/read.json" 2>"$T/err" || fail "resources/read: $(cat "$T/err")"
expect_eq "its artifact read as a resource (another session)" '[{"uri":"anvil://run/'"$run"'/hello.txt","mimeType":"text/plain","text":"hi\n"}]' \
        "$(jq -c .contents "$T/read.json")"

insp --method tools/call --tool-name run_python --tool-arg "code=$(printf 'import socket\nsocket.socket()')" >"$T/blocked.json" 2>"$T/err" ||
        fail "tools/call of a blocked run: $(cat "$T/err")"
expect_eq "a blocked run's isError" true "$(jq -r .isError "$T/blocked.json")"
expect_match "its refusal, verbatim" 'precheck: blocked: import socket \(network denied by policy\) \(line 1\)' \
        "$(jq -r '.content[0].text' "$T/blocked.json")"

rc=0
insp --method tools/call --tool-name nope >"$T/nope.out" 2>&1 || rc=$?
expect_eq "an unknown tool: the Inspector's exit" 1 "$rc"
expect_match "  its message" 'MCP error -32602: unknown tool: nope \(the tools are run_python, submit_task and probe\)' "$(cat "$T/nope.out")"
