# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.truncate('/etc/passwd') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: /etc/passwd
# attempt: os.truncate of /etc/passwd to zero bytes, the path built at run time
import os

os.truncate("/".join(["", "etc", "passwd"]), 0)
print("ESCAPED: truncated")
