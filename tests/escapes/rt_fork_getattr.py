# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.fork (process creation denied by policy)
# attempt: the canned fork attempt at run time: os.fork fetched with getattr and a joined name
import os

fk = getattr(os, "".join(["fo", "rk"]))
pid = fk()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print("ESCAPED: forked", pid)
