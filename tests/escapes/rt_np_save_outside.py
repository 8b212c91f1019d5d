# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/work/leak.npy', 'w') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: /work/leak.npy
# attempt: numpy.save to /work/leak.npy built at run time (numpy opens it 'wb'; the audit event carries FileIO's mode, 'w')
import numpy as np

target = "/".join(["", "work", "leak.npy"])
np.save(target, np.arange(3))
print("ESCAPED: wrote", target)
