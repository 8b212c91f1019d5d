# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: socket.socket(AF_INET, SOCK_STREAM) (network denied by policy (capability not granted))
# attempt: open a listener: bind a TCP socket to 127.0.0.1 (port chosen by the kernel)
import asyncio  # noqa: F401
import sys

net = sys.modules["tekcos"[::-1]]
srv = net.socket(net.AF_INET, net.SOCK_STREAM)
srv.bind(("127.0.0.1", 0))
srv.listen(1)
print("ESCAPED: listening on", srv.getsockname())
