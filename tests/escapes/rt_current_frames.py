# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: sys._current_frames (introspection denied by policy)
# attempt: sys._current_frames() by a computed name, every thread's frame at once
import sys

cf = getattr(sys, "_current_" + "frames")
print("ESCAPED:", cf())
