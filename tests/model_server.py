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

Replies as real servers serialise them, byte for byte (the dialects):
    "dialect":  "openai" | "llama.cpp" | "ollama" | "vllm" | "gateway": the reply shaped and
                serialised as that server does: OpenAI pretty-printed with refusal null,
                annotations and usage details; llama.cpp compact in its key order with
                `timings`; Ollama as Go writes it (\u003c \u003e \u0026 escapes); vLLM with its
                null-valued extra fields; a gateway without id, created or usage.
      "content":       the reply's content ("hello from step N"); null for none
      "finish_reason": ("stop"; "tool_calls" when tool_calls are given)
      "tool_calls":    function names the model calls (content null unless given, as OpenAI
                       sends it)
      "reasoning":     the server's separate reasoning (reasoning_content; Ollama: reasoning)
      "stream":        true, false, or absent: as the request asked ("stream": true), as the
                       servers do. A stream is server-sent events in HTTP chunks, as each
                       server sends them (its role chunk, its deltas, its finish_reason
                       chunk, its usage chunk, data: [DONE]; the gateway's comments, CRLF and
                       no [DONE])
      "chunks":        the content's deltas (a list of strings; default: pieces of 7 bytes)
      "event_delay_s": seconds between two events of a stream (a model thinking)
      "close_after_events": close the connection after this many events (a server dying)
    A stream the client stops reading (it hung up) is logged as
        {"n": N, "t": <when>, "stream_cut_after": <events sent>, "of": <events in all>}.
    "error_dialect": the same names: an error body (with "status", default 400, and
                "message") as each server sends it: error.code a string (openai), an
                integer (llama.cpp, vllm), null (gateway), a string error (ollama).

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


# ---- the dialects: bodies as each server serialises them ----

def _go_json(value):
    """Go's encoding/json: compact, HTML characters and U+2028/9 escaped, UTF-8 kept."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def _compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _tool_calls(names, streamed=False):
    calls = []
    for i, name in enumerate(names):
        call = {"id": f"call_{i}abc", "type": "function",
                "function": {"name": name, "arguments": "{\"code\": \"print(1)\"}"}}
        if streamed:
            call = {"index": i, **call}
        calls.append(call)
    return calls


def dialect_body(d, content, finish, tools, reasoning):
    """The whole (non-streamed) reply of server d, as bytes."""
    now = int(time.time())
    if d == "openai":
        msg = {"role": "assistant", "content": content}
        if tools:
            msg["tool_calls"] = _tool_calls(tools)
        msg.update({"refusal": None, "annotations": []})
        body = {"id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object": "chat.completion", "created": now,
                "model": "gpt-4.1-2025-04-14",
                "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}],
                "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
                          "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                          "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                        "accepted_prediction_tokens": 0,
                                                        "rejected_prediction_tokens": 0}},
                "service_tier": "default", "system_fingerprint": None}
        return (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode()
    if d == "llama.cpp":
        msg = {"role": "assistant", "content": content}
        if reasoning:
            msg["reasoning_content"] = reasoning
        body = {"choices": [{"finish_reason": finish, "index": 0, "message": msg}], "created": now,
                "model": "gpt-3.5-turbo", "system_fingerprint": "b4361-d79d8f39", "object": "chat.completion",
                "usage": {"completion_tokens": 10, "prompt_tokens": 20, "total_tokens": 30},
                "id": "chatcmpl-zFdUiwzWZrJNpNcHAIYpJBC6Fcvn6eYu",
                "timings": {"prompt_n": 20, "prompt_ms": 12.345, "prompt_per_token_ms": 0.61725,
                            "prompt_per_second": 1620.08, "predicted_n": 10, "predicted_ms": 100.2,
                            "predicted_per_token_ms": 10.02, "predicted_per_second": 99.8}}
        return _compact(body).encode()
    if d == "ollama":
        msg = {"role": "assistant", "content": content or ""}
        if reasoning:
            msg["reasoning"] = reasoning
        if tools:
            msg["tool_calls"] = _tool_calls(tools)
        body = {"id": "chatcmpl-462", "object": "chat.completion", "created": now, "model": "qwen2.5-coder:7b",
                "system_fingerprint": "fp_ollama", "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                "usage": {"prompt_tokens": 26, "completion_tokens": 10, "total_tokens": 36}}
        return _go_json(body).encode()
    if d == "vllm":
        msg = {"role": "assistant", "reasoning_content": reasoning, "content": content,
               "tool_calls": _tool_calls(tools) if tools else []}
        body = {"id": "chatcmpl-8f2c", "object": "chat.completion", "created": now,
                "model": "Qwen/Qwen2.5-7B-Instruct",
                "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish,
                             "stop_reason": None}],
                "usage": {"prompt_tokens": 20, "total_tokens": 30, "completion_tokens": 10,
                          "prompt_tokens_details": None},
                "prompt_logprobs": None, "kv_transfer_params": None}
        return _compact(body).encode()
    if d == "gateway":
        body = {"object": "chat.completion", "model": "m",
                "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": finish,
                             "index": 0}]}
        return _compact(body).encode()
    raise ValueError(f"unknown dialect {d!r}")


def dialect_events(d, content, finish, tools, reasoning, chunks):
    """The streamed reply of server d: a list of the bytes of each event, in order."""
    now = int(time.time())
    pieces = chunks if chunks is not None else [content[i:i + 7] for i in range(0, len(content or ""), 7)]
    ev = []
    if d in ("openai", "vllm", "ollama"):
        def chunk(delta, fr, extra=None):
            c = {"index": 0, "delta": delta}
            if d != "ollama":
                c["logprobs"] = None
            c["finish_reason"] = fr
            if d == "vllm":
                c["stop_reason"] = None
            head = {"openai": {"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": now,
                               "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb"},
                    "vllm": {"id": "chatcmpl-8f", "object": "chat.completion.chunk", "created": now,
                             "model": "Qwen/Qwen2.5-7B-Instruct"},
                    "ollama": {"id": "chatcmpl-704", "object": "chat.completion.chunk", "created": now,
                               "model": "qwen2.5-coder:7b", "system_fingerprint": "fp_ollama"}}[d]
            body = {**head, "choices": [c], **(extra or {})}
            text = _go_json(body) if d == "ollama" else _compact(body)
            return f"data: {text}\n\n".encode()
        role = {"role": "assistant", "content": "" if d != "openai" or not tools else None}
        if d == "openai":
            role["refusal"] = None
        if tools:
            role["tool_calls"] = _tool_calls(tools, streamed=True)
        ev.append(chunk(role, None))
        if reasoning:
            key = "reasoning" if d == "ollama" else "reasoning_content"
            ev.append(chunk({key: reasoning}, None))
        for p in pieces:
            ev.append(chunk({"role": "assistant", "content": p} if d == "ollama" else {"content": p}, None))
        ev.append(chunk({"role": "assistant", "content": ""} if d == "ollama" else {}, finish))
        if d in ("openai", "vllm"):  # the usage chunk: empty choices
            usage = {"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": now, "model": "m",
                     "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}}
            ev.append(f"data: {_compact(usage)}\n\n".encode())
        ev.append(b"data: [DONE]\n\n")
        return ev
    if d == "llama.cpp":
        def chunk(delta, fr, extra=None):
            body = {"choices": [{"finish_reason": fr, "index": 0, "delta": delta}], "created": now,
                    "id": "chatcmpl-Wq", "model": "gpt-3.5-turbo", "system_fingerprint": "b4361-d79d8f39",
                    "object": "chat.completion.chunk", **(extra or {})}
            return f"data: {_compact(body)}\n\n".encode()
        ev.append(chunk({"role": "assistant", "content": None}, None))
        if reasoning:
            ev.append(chunk({"reasoning_content": reasoning}, None))
        for p in pieces:
            ev.append(chunk({"content": p}, None))
        ev.append(chunk({}, finish))
        ev.append(("data: " + _compact({"choices": [], "created": now, "id": "chatcmpl-Wq", "model": "gpt-3.5-turbo",
                                        "object": "chat.completion.chunk",
                                        "usage": {"completion_tokens": 8, "prompt_tokens": 20, "total_tokens": 28},
                                        "timings": {"prompt_n": 20, "prompt_ms": 12.3, "predicted_n": 8,
                                                    "predicted_ms": 80.1}}) + "\n\n").encode())
        ev.append(b"data: [DONE]\n\n")
        return ev
    if d == "gateway":  # comments, data: without its space, CRLF, no [DONE]
        ev.append(b": OPENROUTER PROCESSING\r\n\r\n")
        for p in pieces:
            ev.append(("data:" + _compact({"choices": [{"delta": {"content": p}, "finish_reason": None}]})
                       + "\r\n\r\n").encode())
        ev.append(("data:" + _compact({"choices": [{"delta": {}, "finish_reason": finish}]}) + "\r\n\r\n").encode())
        return ev
    raise ValueError(f"unknown dialect {d!r}")


def error_body(d, status, message):
    if d == "openai":
        body = {"error": {"message": message, "type": "invalid_request_error", "param": None,
                          "code": "invalid_api_key" if status == 401 else "bad_request"}}
        return (json.dumps(body, indent=2) + "\n").encode()
    if d == "llama.cpp":
        return _compact({"error": {"code": status, "message": message, "type": "invalid_request_error"}}).encode()
    if d == "vllm":
        return _compact({"object": "error", "message": message, "type": "BadRequestError", "param": None,
                         "code": status}).encode()
    if d == "ollama":
        return _go_json({"error": message}).encode()
    if d == "gateway":
        return _compact({"error": {"message": message, "type": None, "param": None, "code": None}}).encode()
    raise ValueError(f"unknown dialect {d!r}")


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

    def note(self, entry):
        """A line of the log that is not a request (a stream the client hung up on)."""
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")


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
        if "dialect" in step or "error_dialect" in step:
            self.answer_dialect(n, step, bool(isinstance(body, dict) and body.get("stream") is True))
            return
        self.answer(n, step)

    def answer_dialect(self, n, step, asked_stream):
        if step.get("delay_s"):
            time.sleep(float(step["delay_s"]))
        if "error_dialect" in step:
            payload = error_body(step["error_dialect"], int(step.get("status", 400)), step.get("message", "bad request"))
            self.answer(n, {"status": int(step.get("status", 400)), "raw_bytes": payload,
                            "headers": {"Content-Type": "application/json"}})
            return
        d = step["dialect"]
        tools = step.get("tool_calls") or []
        content = step.get("content", None if tools else f"hello from step {n}")
        finish = step.get("finish_reason", "tool_calls" if tools else "stop")
        reasoning = step.get("reasoning")
        stream = step.get("stream", asked_stream)
        if not stream:
            self.answer(n, {"raw_bytes": dialect_body(d, content, finish, tools, reasoning),
                            "headers": {"Content-Type": "application/json; charset=utf-8"}})
            return
        events = dialect_events(d, content, finish, tools, reasoning, step.get("chunks"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = 0
        try:
            for i, e in enumerate(events):
                if i == step.get("close_after_events"):  # a server that dies mid-reply
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if i and step.get("event_delay_s"):
                    time.sleep(float(step["event_delay_s"]))
                self.wfile.write(b"%x\r\n%s\r\n" % (len(e), e))
                self.wfile.flush()
                sent += 1
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.server.state.note({"n": n, "t": time.time(), "stream_cut_after": sent, "of": len(events)})

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
        if "raw_bytes" in step:
            payload = step["raw_bytes"]
        elif "raw" in step:
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
