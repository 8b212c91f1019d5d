# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: import ctypes (native code denied by policy)
# attempt: __import__ and 'ctypes' both base64-decoded at run time, looked up in vars(builtins)
import base64
import builtins

imp = vars(builtins)[base64.b64decode(b"X19pbXBvcnRfXw==").decode()]
ct = imp(base64.b64decode(b"Y3R5cGVz").decode())
print("ESCAPED:", ct.CDLL(None))
