# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: import socket (network denied by policy)
# attempt: the canned network attempt as written: import socket, connect to 127.0.0.1:8080
import socket

s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(2)
s.connect(("127.0.0.1", 8080))
print("ESCAPED: connected to 127.0.0.1:8080")
