# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: socket.socket(AF_INET, SOCK_STREAM) (network denied by policy (capability not granted))
# attempt: the canned network attempt at run time: socket taken from sys.modules after asyncio loaded it, TCP connect to 127.0.0.1:8080
import asyncio  # noqa: F401  (loads socket as a library import)
import sys

net = sys.modules["so" + "cket"]
s = net.socket(net.AF_INET, net.SOCK_STREAM)
s.settimeout(2)
s.connect(("127.0.0.1", 8080))
print("ESCAPED: connected to 127.0.0.1:8080")
