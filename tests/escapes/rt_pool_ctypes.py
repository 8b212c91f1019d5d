# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: ctypes.dlopen (native code denied by policy)
# attempt: libc's system() through numpy's ctypes, every native step submitted to a ThreadPoolExecutor worker (a library's frame calls it)
from concurrent.futures import ThreadPoolExecutor

import numpy as np

native = getattr(np, "ctypes" + "lib").ctypes
pool = ThreadPoolExecutor(max_workers=1)
libc = pool.submit(native.CDLL, None).result()
system = pool.submit(getattr, libc, "system").result()
print("ESCAPED: system() returned", pool.submit(system, b"id").result())
