# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: ctypes.dlopen (native code denied by policy)
# expect-stdout: registered
# attempt: atexit.register(list.extend, map(CDLL, [None])): CDLL(None) called by the interpreter at its end, with no frame at all
import atexit

import numpy as np

native = getattr(np, "ctypes" + "lib").ctypes
box = []
atexit.register(box.extend, map(native.CDLL, [None]))
print("registered")
