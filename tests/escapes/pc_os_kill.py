# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: os.kill (signals to other processes denied by policy)
# attempt: signal the jail's pid 1 with os.kill
import os
import signal

os.kill(1, signal.SIGTERM)
print("ESCAPED: signalled pid 1")
