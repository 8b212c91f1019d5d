# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.posix_spawn (process creation denied by policy)
# attempt: os.posix_spawn named by a chr() sequence
import os

name = "".join(chr(c) for c in [112, 111, 115, 105, 120, 95, 115, 112, 97, 119, 110])
spawn = getattr(os, name)
print("ESCAPED:", spawn("/bin/true", ["true"], {}))
