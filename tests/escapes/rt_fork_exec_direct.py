# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: _posixsubprocess.fork_exec (process creation denied by policy)
# attempt: start /bin/sh through _posixsubprocess.fork_exec, which CPython does not audit itself, fetched from sys.modules after a library imported it
import os
import sys
import webbrowser  # noqa: F401  (imports subprocess, which imports _posixsubprocess)

ps = sys.modules["_posix" + "subprocess"]
r, w = os.pipe()
pid = ps.fork_exec([b"/bin/sh", b"-c", b"echo a process ran, pid $$"], (b"/bin/sh",), True, (w,), None, None,
                   -1, -1, -1, w, -1, -1, r, w, True, False, -1, None, None, None, -1, None, False)
os.close(w)
print("ESCAPED:", os.read(r, 200).decode().strip(), os.waitpid(pid, 0))
