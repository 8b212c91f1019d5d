# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: ctypes.string_at (native code denied by policy)
# attempt: read raw interpreter memory with ctypes.string_at (ctypes reached through numpy)
import numpy as np

ct = getattr(np.ctypeslib, "sepytc"[::-1])
print("ESCAPED:", ct.string_at(id(0), 16))
