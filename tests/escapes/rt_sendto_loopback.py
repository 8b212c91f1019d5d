# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: socket.socket(AF_INET, SOCK_DGRAM) (network denied by policy (capability not granted))
# attempt: a UDP datagram to 127.0.0.1:9 through a socket module found in sys.modules
import asyncio  # noqa: F401
import sys

net = sys.modules["".join(["so", "ck", "et"])]
u = net.socket(net.AF_INET, net.SOCK_DGRAM)
u.sendto(b"ping", ("127.0.0.1", 9))
print("ESCAPED: datagram sent")
