# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: os.execv (process creation denied by policy)
# attempt: replace the interpreter with a shell via os.execv
import os

os.execv("/bin/sh", ["sh", "-c", "echo ESCAPED: exec"])
