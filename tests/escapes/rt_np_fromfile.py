# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)
# attempt: numpy.fromfile (a C reader) on /etc/passwd built at run time
import numpy as np

p = "/".join(["", "etc", "passwd"])
print("ESCAPED:", np.fromfile(p, dtype=np.uint8)[:8])
