# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: import socket (network denied by policy)
# attempt: importlib.import_module('socket') with a literal name, judged as the import it is
import importlib

sock = importlib.import_module("socket")
print("ESCAPED:", sock.gethostname())
