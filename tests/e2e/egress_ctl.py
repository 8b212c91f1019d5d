"""The clients of t_egress.sh: anvil-egress's control socket (as the broker will use it) and
proxy clients over a run's socket, with the bytes sent exactly as given (an IP literal in
any form, a broken head, a slow one), which curl would normalise or refuse to send.

  egress_ctl.py open CONTROL RUN_ID SPEC_JSON EVENTS   opens the run, prints "socket PATH";
      every message from the daemon is a line of EVENTS; SIGTERM: "close", then waits for
      "closed" (a line of EVENTS too), and exits
  egress_ctl.py ctl CONTROL MESSAGE...   sends each MESSAGE (text, as is) on one control
      connection, prints each reply's "message" (or its type), one a line
  egress_ctl.py raw SOCKET REQUEST     sends REQUEST (Python escapes: \\r\\n), prints the reply
  egress_ctl.py tls SOCKET HOST PORT CA    CONNECT, then TLS (verified against CA), GET /
  egress_ctl.py slow SOCKET            a head sent a byte a second: prints what came back, and
                                       after how long the proxy ended it
  egress_ctl.py hold SOCKET REQUEST   sends REQUEST and reads until the end: prints it, and how
                                       the connection ended
  egress_ctl.py relay SOCKET PORT      127.0.0.1:PORT relayed to SOCKET, byte for byte, so that
                                       curl's -x reaches the run's socket (the relay part 2 puts
                                       in the jail); prints "ready" once listening"""
import array
import json
import os
import signal
import socket
import ssl
import stat
import sys
import time


def ctl_open(control, run_id, spec, events):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(control)
    msg = dict(json.loads(spec), type="open", run_id=run_id)
    try:
        s.send(json.dumps(msg).encode())
        data, fds, _, _ = socket.recv_fds(s, 65536, 1)
    except (BrokenPipeError, ConnectionResetError):
        data = b""
    if not data:
        print("closed: the daemon ended the connection", flush=True)
        return 1
    reply = json.loads(data)
    out = open(events, "a", buffering=1)
    out.write(json.dumps(reply) + "\n")
    if reply["type"] != "opened":
        print("error " + reply.get("message", ""), flush=True)
        return 1
    # the fd is the run's socket itself (what the supervisor will bind into the jail)
    st = os.fstat(fds[0])
    try:
        pst = os.stat(reply["socket"])
    except PermissionError:  # the run directory is the daemon's alone: the fd is the way in
        print("socket %s (fd only: its path is not reachable)" % reply["socket"], flush=True)
        pst = None
    if pst:
        assert stat.S_ISSOCK(st.st_mode) and (st.st_ino, st.st_dev) == (pst.st_ino, pst.st_dev), "fd is not the socket"
        print("socket " + reply["socket"], flush=True)
    closing = []
    signal.signal(signal.SIGTERM, lambda *a: closing.append(1))
    s.settimeout(0.1)  # a signal does not interrupt recv (PEP 475): look every 0.1 s
    while True:
        try:
            if closing == [1]:
                closing.append(2)
                s.send(json.dumps({"type": "close", "run_id": run_id}).encode())
            data = s.recv(65536)
        except socket.timeout:
            continue
        if not data:
            out.write('{"type":"eof"}\n')
            return 0
        m = json.loads(data)
        out.write(json.dumps(m) + "\n")
        if m["type"] == "closed":
            return 0


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def read_all(s, limit=30):
    s.settimeout(limit)
    got = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return got, "closed"
            got += b
    except ConnectionResetError:
        return got, "reset"
    except socket.timeout:
        return got, "timeout"


def send(s, request):
    try:
        s.sendall(request.encode("latin-1").decode("unicode_escape").encode("latin-1"))
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused before it was all sent: the refusal is still there to read


def raw(path, request):
    s = connect(path)
    send(s, request)
    got, how = read_all(s)
    sys.stdout.write(got.decode("latin-1"))
    return 0


def many(path, n, request):
    # the same request n times, one connection each after the last has ended; prints "sent n"
    for _ in range(int(n)):
        s = connect(path)
        send(s, request)
        read_all(s)
    print("sent %s" % n)
    return 0


def tls(path, host, port, ca):
    s = connect(path)
    s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port, host, port)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    print(head.split(b"\r\n")[0].decode())
    if b" 200 " not in head.split(b"\r\n")[0]:
        sys.stdout.write(s.recv(4096).decode())
        return 1
    ctx = ssl.create_default_context(cafile=ca)
    t = ctx.wrap_socket(s, server_hostname=host)
    t.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host).encode())
    got, how = read_all(t)
    print("tls " + t.version())
    sys.stdout.write(got.decode())
    return 0


def slow(path):
    s = connect(path)
    t0 = time.monotonic()
    head = b"GET http://web.test/ HTTP/1.1\r\nHost: web.test\r\nX-Slow: " + b"a" * 200
    got = b""
    s.settimeout(1.0)
    for ch in head:
        try:
            s.send(bytes([ch]))
            b = s.recv(4096)
            if not b:
                break
            got += b
            break
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
    rest, how = read_all(s, 5)
    got += rest
    sys.stdout.write(got.decode("latin-1"))
    print("\nended after %.1f s" % (time.monotonic() - t0))
    return 0


def hold(path, request):
    s = connect(path)
    send(s, request)
    got, how = read_all(s, 60)
    sys.stdout.write(got.decode("latin-1"))
    print("\nend: %s" % how)
    return 0


def relay(path, port):
    import threading

    def pump(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    ls = socket.socket(socket.AF_INET)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(port)))
    ls.listen(16)
    print("ready", flush=True)
    while True:
        c = ls.accept()[0]
        u = connect(path)
        threading.Thread(target=pump, args=(c, u), daemon=True).start()
        threading.Thread(target=pump, args=(u, c), daemon=True).start()


def ctl(control, *messages):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(control)
    for m in messages:
        s.send(m.encode())
        r = json.loads(s.recv(65536))
        print(r.get("message", r["type"]))
    return 0


cmd = sys.argv[1]
if cmd == "open":
    sys.exit(ctl_open(*sys.argv[2:6]))
sys.exit({"raw": raw, "many": many, "tls": tls, "slow": slow, "hold": hold, "relay": relay, "ctl": ctl}[cmd](*sys.argv[2:]))
