# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: import socket (network denied by policy)
# attempt: builtins.__import__ fetched with getattr and a joined name, importing a joined module name
import builtins

imp = getattr(builtins, "".join(["__imp", "ort__"]))
net = imp("".join(["so", "ck", "et"]))
print("ESCAPED:", net)
