# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: ctypes.dlopen (native code denied by policy)
# attempt: ctypes reached through numpy.ctypeslib (a library import), then CDLL(None) to get libc
import numpy as np

ct = getattr(np, "ctypes" + "lib").ctypes  # numpy.ctypeslib by name is a pre-check finding
libc = ct.CDLL(None)
libc.system(b"echo ESCAPED: libc system")
