# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.kill (signals to other processes denied by policy)
# attempt: os.kill fetched by a joined name, signal 0 (a probe) to the jail's pid 1
import os

k = getattr(os, "".join(["ki", "ll"]))
k(1, 0)
print("ESCAPED: signalled pid 1")
