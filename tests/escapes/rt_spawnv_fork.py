# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.fork (process creation denied by policy)
# attempt: os.spawnv by a computed name; it is written in Python over fork and exec, so the fork is what is refused
import os

sv = getattr(os, "spawn" + chr(118))
print("ESCAPED:", sv(os.P_WAIT, "/bin/true", ["true"]))
