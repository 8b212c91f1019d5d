# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: os.fork (process creation denied by policy)
# attempt: the canned fork attempt as written: os.fork(), child exits, parent waits
import os

pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print("ESCAPED: forked", pid)
