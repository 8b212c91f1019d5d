# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: ctypes.dlopen (native code denied by policy)
# expect-stdout: main thread carried on
# attempt: CDLL(None) in a thread of _thread.start_new_thread with no Python frame at all: list.extend consumes map(CDLL, [None])
import _thread
import time

import numpy as np

native = getattr(np, "ctypes" + "lib").ctypes
box = []
_thread.start_new_thread(box.extend, (map(native.CDLL, [None]),))
time.sleep(1)
if box:
    print("ESCAPED: libc loaded in a bare thread:", box[0])
print("main thread carried on")
