"""The servers of t_egress.sh, in the test's own network namespace (run there with ip netns
exec): a DNS server on 127.0.0.1:53 answering from a fixed zone (and logging each question),
HTTP servers and a TLS one on the addresses the test gave the namespace's dummy interface.
Nothing here is reachable from outside that namespace.

usage: egress_net.py ZONE_JSON CERT KEY LOG
ZONE_JSON: {"names": {"web.test": ["11.0.0.10"], ...}, "http": ["11.0.0.10", ...],
            "tls": ["11.0.0.10"], "slow": ["11.0.0.10:8081"], "dns": ["127.0.0.1"] (optional)}
Each server answers GET / with "hello from HOST (ADDR)", /redirect?to=URL with a 302 there,
/big?n=N with N bytes; the slow one accepts and never answers."""
import http.server
import json
import socket
import socketserver
import ssl
import struct
import sys
import threading

zone = json.load(open(sys.argv[1]))
cert, key, log_path = sys.argv[2], sys.argv[3], sys.argv[4]
log = open(log_path, "a", buffering=1)


def dns_answer(q):
    (qid, flags, qd) = struct.unpack(">HHH", q[:6])
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1 : i + 1 + q[i]].decode("ascii", "replace"))
        i += 1 + q[i]
    qtype = struct.unpack(">H", q[i + 1 : i + 3])[0]
    question = q[12 : i + 5]
    name = ".".join(labels).lower()
    log.write("dns %s %d\n" % (name, qtype))
    answers = []
    for a in zone["names"].get(name, []):
        fam = socket.AF_INET6 if ":" in a else socket.AF_INET
        want = 28 if fam == socket.AF_INET6 else 1
        if qtype == want:
            rdata = socket.inet_pton(fam, a)
            answers.append(b"\xc0\x0c" + struct.pack(">HHIH", want, 1, 5, len(rdata)) + rdata)
    rcode = 0 if name in zone["names"] else 3
    hdr = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, len(answers), 0, 0)
    return hdr + question + b"".join(answers)


def dns_server(addr="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    while True:
        q, peer = s.recvfrom(512)
        try:
            s.sendto(dns_answer(q), peer)
        except Exception as e:  # a question this server does not parse: no answer
            log.write("dns error %r\n" % e)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        log.write("http %s %s %s\n" % (self.server.server_address[0], self.headers.get("Host"), self.requestline))

    def do_GET(self):
        if self.path.startswith("/redirect?to="):
            self.send_response(302)
            self.send_header("Location", self.path[len("/redirect?to=") :])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/big?n="):
            body = b"x" * int(self.path[len("/big?n=") :])
        else:
            body = ("hello from %s (%s)\n" % (self.headers.get("Host"), self.server.server_address[0])).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Seen-Connection", self.headers.get("Connection", ""))
        self.send_header("X-Seen-Proxy-Authorization", self.headers.get("Proxy-Authorization", ""))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        out = b"posted " + body + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(addr, port, tls):
    class S(Server):
        address_family = socket.AF_INET6 if ":" in addr else socket.AF_INET

    srv = S((addr, port), Handler)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()


def slow(addr, port):
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(16)
    held = []
    while True:
        held.append(s.accept()[0])  # held open, never answered


# "dns": the addresses it answers on (127.0.0.1 unless given): a proxy run without a mount
# namespace of its own asks the host's resolv.conf's nameserver, given to the namespace too
for a in zone.get("dns", ["127.0.0.1"]):
    threading.Thread(target=dns_server, args=(a,), daemon=True).start()
for a in zone.get("http", []):
    serve(a, 80, False)
for a in zone.get("tls", []):
    serve(a, 443, True)
for a in zone.get("slow", []):
    h, p = a.rsplit(":", 1)
    threading.Thread(target=slow, args=(h, int(p)), daemon=True).start()
log.write("ready\n")
threading.Event().wait()
