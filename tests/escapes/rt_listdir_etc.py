# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.listdir('/etc') (read outside ALLOWED_READ_PATHS)
# attempt: list a directory outside the read roots, by a path built at run time
import os

print("ESCAPED:", os.listdir("/".join(["", "etc"])))
