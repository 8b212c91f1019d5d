# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.chmod('/etc/passwd') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: /etc/passwd
# attempt: make /etc/passwd world-writable with os.chmod, the path built at run time
import os

os.chmod("/".join(["", "etc", "passwd"]), 0o666)
print("ESCAPED: chmod done")
