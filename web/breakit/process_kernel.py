# Try to break it: start a process where the Python layers cannot see it.
# Calls the C library's system() through ctypes, without importing ctypes: numpy has already
# imported it, and a computed attribute name is nothing the pre-check can resolve. The audit
# hook judges native calls by who asks (numpy itself loads libraries through ctypes), and
# every native step here is made by a worker thread of concurrent.futures, a library's frame,
# so it lets them by. glibc's system() then clones a child for the shell: seccomp refuses the
# clone() and the supervisor records it from outside the jail.
from concurrent.futures import ThreadPoolExecutor

import numpy as np

COMMAND = b"uname -a"

native = getattr(np, "ctypes" + "lib").ctypes  # the ctypes module numpy loaded
pool = ThreadPoolExecutor(max_workers=1)


def call(fn, *args):
    """fn(*args), called from the pool's worker rather than from this file."""
    return pool.submit(fn, *args).result()


libc = call(native.CDLL, None)
system = call(getattr, libc, "system")
status = call(system, COMMAND)
if status != 0:
    raise RuntimeError(f"could not run {COMMAND.decode()!r}: system() returned {status}")
print(f"ran {COMMAND.decode()!r}")
