# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: socket.getaddrinfo (network denied by policy (capability not granted))
# attempt: a name lookup (getaddrinfo of localhost), the first step of any connection or DNS exfiltration
import asyncio  # noqa: F401
import sys

net = sys.modules["so" "cket"]
lookup = getattr(net, "get" + "addr" + "info")
print("ESCAPED:", lookup("localhost", 80))
