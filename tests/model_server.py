#!/usr/bin/python3
"""A scripted OpenAI-compatible server for the tests: replays a script, one step per request.

Usage:
    /usr/bin/python3 tests/model_server.py --script SCRIPT.json --port-file PORT_FILE \
        --log REQUESTS.jsonl [--port N] [--max-body BYTES] [--tls-cert CERT.pem --tls-key KEY.pem]

It listens on 127.0.0.1 on an ephemeral port, or on --port N (HTTP/1.1, keep-alive, a thread
per connection: the README's scripted model uses a port named in its task file), and writes the
port number to PORT_FILE, when given, once it is ready (written to a temporary
file and renamed, so a reader never sees it half-written). With --tls-cert and --tls-key it
speaks HTTPS with that certificate (a client that does not trust it fails its handshake,
and nothing is recorded). Stop it with SIGTERM or SIGINT.
Python's standard library only.

The script is a JSON array of steps. The Nth request received, whatever its method and path,
is answered by step N; every request after the last step gets
    500 {"error": {"message": "script exhausted", "type": "test_server"}}.
A step is an object; every field is optional:
    "status":   the HTTP status (200)
    "body":     any JSON value, sent as application/json
    "raw":      a string sent as the body as it is (UTF-8), instead of "body"
    "repeat":   send "raw" this many times over (a large body without a large script)
    "pad_to":   pad the body with trailing spaces (JSON's own blanks) to this many bytes
    "headers":  {"Name": "value"} sent with the response (Retry-After, Content-Type...)
    "delay_s":  seconds to wait before answering (a slow server)
    "stall_s":  seconds to wait after the status line and headers (Content-Length included),
                before the body (a server that answers its headers and then hangs)
    "no_length": true: no Content-Length; the body ends when the connection is closed
    "close":    true: close the connection without answering at all (a reset)
With neither "body" nor "raw", the body is a chat completion whose content is
"hello from step N" (finish_reason "stop").

Every request received is appended to the JSONL log, one object a line, before it is
answered:
    {"n": 1, "t": <time.time() on arrival>, "method": "POST", "path": "/v1/chat/completions",
     "headers": {"Content-Type": "application/json", ...}, "json": <the body decoded> or null,
     "body": <the body as text, only when it is not JSON>}
Header names keep the case the client sent; a header sent twice keeps the last value.

Helper for tests: `model_server.py --completion TEXT [--finish-reason R]` prints a chat
completion body with that content, as a step's "body" wants it.
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion(content, finish_reason="stop", model="scripted"):
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class State:
    def __init__(self, script, log_path, max_body):
        self.script = script
        self.log_path = log_path
        self.max_body = max_body
        self.n = 0
        self.lock = threading.Lock()

    def record(self, entry):
        """Numbers the request, logs it, returns (n, step or None)."""
        with self.lock:
            self.n += 1
            entry = {"n": self.n, **entry}
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
                f.flush()
            step = self.script[self.n - 1] if self.n <= len(self.script) else None
            return self.n, step


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "anvil-model-server/1"

    def log_message(self, fmt, *args):  # quiet: the JSONL log is the record
        pass

    def handle_any(self):
        state = self.server.state
        t = time.time()
        length = self.headers.get("Content-Length")
        raw = b""
        if length is not None:
            try:
                n = int(length)
            except ValueError:
                n = -1
            if n < 0 or n > state.max_body:
                self.send_error(413, "bad or too large Content-Length")
                return
            raw = self.rfile.read(n)
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
            text = None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
            text = raw.decode("utf-8", "replace")
        entry = {"t": t, "method": self.command, "path": self.path,
                 "headers": {k: v for k, v in self.headers.items()}, "json": body}
        if text is not None:
            entry["body"] = text
        n, step = state.record(entry)
        if step is None:
            step = {"status": 500, "body": {"error": {"message": "script exhausted", "type": "test_server"}}}
        self.answer(n, step)

    def answer(self, n, step):
        if step.get("delay_s"):
            time.sleep(float(step["delay_s"]))
        if step.get("close"):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        status = int(step.get("status", 200))
        headers = dict(step.get("headers", {}))
        if "raw" in step:
            payload = str(step["raw"]).encode("utf-8") * int(step.get("repeat", 1))
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        else:
            value = step["body"] if "body" in step else completion(f"hello from step {n}")
            payload = json.dumps(value).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        if len(payload) < int(step.get("pad_to", 0)):
            payload += b" " * (int(step["pad_to"]) - len(payload))
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, str(v))
            if step.get("no_length"):
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if step.get("stall_s"):
                self.wfile.flush()
                time.sleep(float(step["stall_s"]))
            for i in range(0, len(payload), 1 << 16):
                self.wfile.write(payload[i:i + (1 << 16)])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a timeout, an abort): fine

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script")
    ap.add_argument("--port-file")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log")
    ap.add_argument("--max-body", type=int, default=64 << 20)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--completion", help="print a chat completion body with this content and exit")
    ap.add_argument("--finish-reason", default="stop")
    a = ap.parse_args()
    if a.completion is not None:
        print(json.dumps(completion(a.completion, a.finish_reason)))
        return 0
    if not (a.script and (a.port_file or a.port) and a.log):
        ap.error("--script, --log and --port-file (or --port) are required")
    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    if not isinstance(script, list) or not all(isinstance(s, dict) for s in script):
        ap.error("the script must be a JSON array of objects")
    open(a.log, "w").close()
    # socketserver listens with a backlog of 5: requests at once beyond that would wait for
    # the client's SYN to be sent again (a second), which tests of parallel requests measure.
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    server.state = State(script, a.log, a.max_body)
    if a.tls_cert:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        # The handshake happens in accept(); one that fails is an OSError, which socketserver
        # drops, and the server goes on.
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{server.server_address[1]}\n")
        os.rename(tmp, a.port_file)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
