#!/usr/bin/python3
"""Malformed JSON-RPC written raw to anvil-mcp's stdin (tests/e2e/t_mcp.sh runs it): each bad
message answered as JSON-RPC 2.0 and MCP have it, verbatim, and the process still serving
after each (a ping answered). Usage: raw.py ANVIL_MCP; prints "ok: ..." per check, exits 1 at
the first that fails."""
import json
import os
import select
import subprocess
import sys
import time

MCP = sys.argv[1]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class Server:
    def __init__(self, *args):
        self.p = subprocess.Popen([MCP, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=dict(os.environ))
        self.buf = b""
        self.pings = 0

    def write(self, data: bytes):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        self.write(json.dumps(msg).encode() + b"\n")

    def read(self, timeout=20.0):
        """The next line anvil-mcp writes, as JSON, or None after timeout."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                fail(f"anvil-mcp closed its stdout (exit {self.p.wait()}): {self.p.stderr.read().decode()}")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            fail(f"not JSON on stdout: {line[:200]!r}")

    def serving(self, what):
        """A ping answered next, and nothing before it: the bad message got no other answer."""
        self.pings += 1
        pid = f"ping-{self.pings}"
        self.send({"jsonrpc": "2.0", "id": pid, "method": "ping"})
        got = self.read()
        if got != {"jsonrpc": "2.0", "id": pid, "result": {}}:
            fail(f"{what}: then a ping was answered {got}")

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(timeout=30)
        if rc != 0:
            fail(f"anvil-mcp exited {rc} at the end of its stdin")
        return self.p.stderr.read().decode()


def expect(srv, what, data, code, message, rid=None):
    """data (bytes, or a message) answered by error code with message, id rid; still serving."""
    srv.write(data if isinstance(data, bytes) else json.dumps(data).encode() + b"\n")
    got = srv.read()
    want = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    if got != want:
        fail(f"{what}: expected {want}, got {got}")
    srv.serving(what)
    print(f"ok: {what}: {code} {message[:110]}")


def silent(srv, what, data):
    """data gets no answer (a notification, a response): the next line is the ping's."""
    srv.write(data if isinstance(data, bytes) else json.dumps(data).encode() + b"\n")
    srv.serving(what)
    print(f"ok: {what}: no answer")


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
R = -32600

srv = Server()
# Before initialize: ping alone.
srv.serving("ping before initialize")
print("ok: ping before initialize answered")
expect(srv, "tools/list before initialize", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, R,
       "tools/list before initialize: send initialize first", 2)
# Not JSON, or not a message.
expect(srv, "a line that is not JSON", b'{"jsonrpc": "2.0", "id": 3,\n', -32700,
       "not valid JSON: string or '}' expected near end of file (line 1, column 27)")
srv.write(b'{"jsonrpc": "2.0", "id": "\xff", "method": "ping"}\n')
got = srv.read()
if got.get("error", {}).get("code") != -32700 or got.get("id") is not None:
    fail(f"bytes that are not UTF-8: {got}")
srv.serving("bytes that are not UTF-8")
print(f"ok: bytes that are not UTF-8: -32700 {got['error']['message']}")
expect(srv, "duplicate keys", b'{"jsonrpc": "2.0", "id": 4, "id": 5, "method": "ping"}\n', -32700,
       "not valid JSON: duplicate object key near '\"id\"' (line 1, column 32)")
srv.write(b"[" * 100000 + b"]" * 100000 + b"\n")
got = srv.read()
if got.get("error", {}).get("code") != -32700 or "maximum parsing depth" not in got["error"]["message"]:
    fail(f"JSON nested 100000 deep: {got}")
srv.serving("JSON nested 100000 deep")
print(f"ok: JSON nested 100000 deep: -32700 {got['error']['message']}")
expect(srv, "a number", b"42\n", R, "a JSON-RPC message is a JSON object")
BATCH = ("a batch (a JSON array) is not accepted: this server speaks MCP 2025-06-18 and later, which removed JSON-RPC "
         "batching; send each message on its own line")
expect(srv, "a batch", [{"jsonrpc": "2.0", "id": 6, "method": "ping"}, {"jsonrpc": "2.0", "id": 7, "method": "ping"}], R, BATCH)
expect(srv, "an empty batch", b"[]\n", R, BATCH)
# Wrong ids.
for bad in (None, 1.5, True, {"a": 1}, [1]):
    expect(srv, f"id {json.dumps(bad)}", {"jsonrpc": "2.0", "id": bad, "method": "ping"}, R,
           "\"id\" must be a string or an integer (MCP: never null)")
expect(srv, "jsonrpc 1.0", {"jsonrpc": "1.0", "id": 8, "method": "ping"}, R, '"jsonrpc" must be "2.0"', 8)
expect(srv, "no jsonrpc", {"id": 9, "method": "ping"}, R, '"jsonrpc" must be "2.0"', 9)
expect(srv, "an unknown member", {"jsonrpc": "2.0", "id": 10, "method": "ping", "extra": 1}, R,
       'unknown member "extra" in a JSON-RPC message', 10)
expect(srv, "a method not a string", {"jsonrpc": "2.0", "id": 11, "method": 5}, R, '"method" must be a string', 11)
expect(srv, "neither method nor result", {"jsonrpc": "2.0", "id": 12}, R,
       'a request has a "method"; a response ("result" or "error") is not expected here', 12)
silent(srv, "a response to nothing", {"jsonrpc": "2.0", "id": 13, "result": {}})
silent(srv, "an unknown notification", {"jsonrpc": "2.0", "method": "notifications/whatever"})
silent(srv, "a blank line", b"   \n")
silent(srv, "a cancel of no request in flight", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                 "params": {"requestId": 999}})
silent(srv, "a cancel without a requestId", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})

# The lifecycle.
expect(srv, "initialize without clientInfo", {**INIT, "params": {"protocolVersion": "2025-06-18", "capabilities": {}}},
       -32602, "params.clientInfo: must be an object", 1)
srv.send(INIT)
got = srv.read()
if got.get("id") != 1 or got["result"]["protocolVersion"] != "2025-06-18":
    fail(f"initialize: {got}")
print("ok: initialize: protocol 2025-06-18, as asked")
srv.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
expect(srv, "initialize again", {**INIT, "id": 14}, R, "initialize was already received in this session", 14)
expect(srv, "a notification with an id", {"jsonrpc": "2.0", "id": 15, "method": "notifications/initialized"}, R,
       "notifications/initialized is a notification and carries no \"id\"", 15)
expect(srv, "an unknown method", {"jsonrpc": "2.0", "id": 16, "method": "tools/destroy"}, -32601,
       "method not found: tools/destroy", 16)
expect(srv, "params an array", {"jsonrpc": "2.0", "id": 17, "method": "tools/list", "params": [1]}, -32602,
       '"params" must be an object', 17)
# Invalid params of tools/call.
call = lambda i, p: {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": p}
expect(srv, "tools/call without name", call(18, {}), -32602, "params.name: is required", 18)
expect(srv, "tools/call without code", call(19, {"name": "run_python", "arguments": {}}), -32602,
       "arguments.code: is required", 19)
expect(srv, "limits.timeout_s a string", call(20, {"name": "run_python", "arguments": {"code": "1", "limits": {"timeout_s": "9"}}}),
       -32602, "arguments.limits.timeout_s: must be a positive integer", 20)
expect(srv, "a capability that is none", call(21, {"name": "run_python", "arguments": {"code": "1", "capabilities": ["root"]}}),
       -32602, "arguments.capabilities: 'root' is not a capability (there are: network, process)", 21)
expect(srv, "resources/read without uri", {"jsonrpc": "2.0", "id": 22, "method": "resources/read", "params": {}}, -32602,
       "params.uri: is required", 22)

# Huge messages: over the bound refused, its bytes skipped, and serving on; under it, decoded.
LIMIT = 8 * 1024 * 1024
big = b'{"jsonrpc": "2.0", "id": 23, "method": "ping", "params": {"pad": "' + b"x" * (LIMIT + 10) + b'"}}\n'
expect(srv, "a message over 8 MiB", big, R,
       "a message over the limit of 8388608 bytes: refused, its bytes skipped to the next newline")
code = "#" * (1024 * 1024 + 1)  # a source over the 1 MiB run_python takes, in a message under the bound
expect(srv, "a 1 MiB source, decoded (under the bound)", call(24, {"name": "run_python", "arguments": {"code": code}}), -32602,
       "arguments.code: must be a string of at most 1048576 bytes, without NUL", 24)

# Duplicate ids in flight, and a cancel: no answer for the cancelled request.
srv.send(call(25, {"name": "run_python", "arguments": {"code": "import time\ntime.sleep(30)\n"}}))
time.sleep(0.5)
expect(srv, "an id in flight used again", {"jsonrpc": "2.0", "id": 25, "method": "resources/list"}, R,
       'this "id" is already used by a request in flight')
t0 = time.monotonic()
srv.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 25, "reason": "raw test"}})
srv.serving("the cancel")
got = srv.read(timeout=4)
if got is not None:
    fail(f"an answer came for the cancelled request: {got}")
print("ok: the cancelled request was not answered (4 s)")
srv.serving("after the cancel")
log = srv.close()
if "the run ended killed: cancelled" not in log:
    fail(f"the cancelled run's end is not in the log: {log}")
print("ok: the log: the run ended killed: cancelled")

# Version negotiation, both ways: a version not spoken gets the latest; an old one, itself
# (and its results are without what came later: structuredContent, resource links).
for asked, want in (("1999-01-01", "2025-11-25"), ("2024-11-05", "2024-11-05")):
    s = Server()
    s.send({**INIT, "params": {**INIT["params"], "protocolVersion": asked}})
    got = s.read()
    if got["result"]["protocolVersion"] != want:
        fail(f"asked {asked}: {got}")
    print(f"ok: asked {asked}: answered {want}")
    if asked == "2024-11-05":
        s.send(call(2, {"name": "run_python", "arguments": {"code": "open('artifacts/a.txt', 'w').write('x')"}}))
        got = s.read()["result"]
        types = [c["type"] for c in got["content"]]
        if "structuredContent" in got or types != ["text"]:
            fail(f"a 2024-11-05 session's result: {types}, {list(got)}")
        print("ok: a 2024-11-05 session's result: text alone, no structuredContent")
    s.close()
print("ok: all")
