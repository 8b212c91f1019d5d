# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: import pty (process creation denied by policy)
# attempt: a shell on a pseudo-terminal with pty.spawn
import pty

pty.spawn(["/bin/sh", "-c", "echo ESCAPED: shell on a pty"])
