"""t_egress_jail.sh's client: what the broker will do for a run granted network, done by hand
against a supervisor. It opens a run on anvil-egress's control socket (hosts from SPEC_JSON),
keeps that connection for the run's life, and sends the supervisor a run_request whose
`egress` is the O_PATH fd the proxy gave (docs/protocol.md), then prints the run_result (or
the error frame) as one JSON line, and the proxy's events, one a line, to EVENTS.

  egress_run.py SUP_SOCKET CONTROL|- SPEC_JSON TOOL.py EVENTS [options]
     --no-approve      network requested, not approved
     --no-request      neither requested nor approved (the egress fd still sent)
     --no-egress       no egress fd (CONTROL may be -)
     --input NAME=FILE an input, as bytes
"""
import json
import os
import socket
import struct
import sys

import msgpack


def frame(obj):
    body = msgpack.packb(obj, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


def read_frame(s):
    def exact(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                return None
            b += c
        return b

    h = exact(4)
    if h is None:
        return None
    body = exact(struct.unpack(">I", h)[0])
    return msgpack.unpackb(body, raw=False)


def main():
    sup, control, spec, tool, events = sys.argv[1:6]
    opts = sys.argv[6:]
    inputs = []
    for i, o in enumerate(opts):
        if o == "--input":
            name, path = opts[i + 1].split("=", 1)
            inputs.append({"name": name, "data": open(path, "rb").read()})
    fds = []
    ctl = None
    if "--no-egress" not in opts:
        ctl = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ctl.connect(control)
        msg = dict(json.loads(spec), type="open", run_id="jail-%d" % os.getpid())
        ctl.send(json.dumps(msg).encode())
        data, got, _, _ = socket.recv_fds(ctl, 65536, 1)
        reply = json.loads(data)
        if reply["type"] != "opened":
            print(json.dumps({"type": "egress_error", "message": reply.get("message")}))
            return 1
        # The fd as the proxy sent it, as the broker passes it on. The proxy runs under `ip
        # netns exec`, which gives it a mount namespace of its own (as its systemd unit does):
        # the fd is of a mount in that namespace, which the jail reaches through the fd, never
        # by a mount (jail/relay.c).
        fds = [got[0]]
    caps_req = [] if "--no-request" in opts else ["network"]
    caps_ok = [] if "--no-approve" in opts or "--no-request" in opts else ["network"]
    req = {"v": 1, "type": "run_request", "request_id": "r1", "source": open(tool).read(),
           "capabilities_requested": caps_req, "capabilities_approved": caps_ok}
    if inputs:
        req["inputs"] = inputs
    if fds:
        req["egress"] = 0
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sup)
    f = frame(req)
    if fds:
        socket.send_fds(s, [f[:4]], fds)
        s.sendall(f[4:])
        for fd in fds:
            os.close(fd)
    else:
        s.sendall(f)
    out = None
    while True:
        m = read_frame(s)
        if m is None or m.get("type") in ("run_result", "error"):
            out = m
            break
    s.close()
    if ctl:
        ctl.settimeout(10)
        with open(events, "a") as ev:
            try:
                ctl.send(json.dumps({"type": "close", "run_id": "jail-%d" % os.getpid()}).encode())
                while True:
                    data = ctl.recv(65536)
                    if not data:
                        break
                    m = json.loads(data)
                    ev.write(json.dumps(m) + "\n")
                    if m["type"] == "closed":
                        break
            except (socket.timeout, ConnectionResetError, BrokenPipeError):
                ev.write('{"type":"eof"}\n')

    def plain(o):
        if isinstance(o, bytes):
            return o.decode("utf-8", "replace")
        if isinstance(o, dict):
            return {k: plain(v) for k, v in o.items()}
        if isinstance(o, list):
            return [plain(v) for v in o]
        return o

    print(json.dumps(plain(out)))
    return 0


sys.exit(main())
