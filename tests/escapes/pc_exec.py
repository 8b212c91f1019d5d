# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: exec (dynamic code execution denied by policy)
# attempt: exec a block of source that opens a socket
src = """
import socket
socket.create_connection(("127.0.0.1", 8080), timeout=2)
print("ESCAPED: connected")
"""
exec(src)
