# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: import ctypes (native code denied by policy)
# attempt: call libc's system() through ctypes
import ctypes

libc = ctypes.CDLL(None)
libc.system(b"echo ESCAPED: libc system")
