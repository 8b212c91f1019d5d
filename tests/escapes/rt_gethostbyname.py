# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: socket.gethostbyname (network denied by policy (capability not granted))
# attempt: socket.gethostbyname('localhost') through a socket module found in sys.modules
import asyncio  # noqa: F401
import sys

net = sys.modules["socket"]
print("ESCAPED:", net.gethostbyname("localhost"))
