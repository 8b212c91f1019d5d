# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.exec (process creation denied by policy)
# attempt: os.execv fetched by a reversed name, to replace the interpreter with /bin/sh
import os

ex = getattr(os, "vcexe"[::-1])
ex("/bin/sh", ["sh", "-c", "echo ESCAPED: exec"])
