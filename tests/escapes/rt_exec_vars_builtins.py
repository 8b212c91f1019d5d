# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: compile (dynamic code execution denied by policy)
# attempt: exec taken from vars(builtins) by a computed key, running source that opens a socket
import builtins

run = vars(builtins)["ex" + "ec"]
run("import socket; print('ESCAPED:', socket.create_connection(('127.0.0.1', 8080), timeout=2))")
