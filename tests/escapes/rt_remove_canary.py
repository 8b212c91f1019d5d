# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.remove('/etc/anvil-escape-canary') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: /etc/anvil-escape-canary
# attempt: os.remove of a file under /etc, the path built at run time (refused before the file system is asked)
import os

target = "/".join(["", "etc", "anvil-escape-canary"])
os.remove(target)
print("ESCAPED: removed", target)
