# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: sys._getframe (introspection denied by policy)
# attempt: sys._getframe() to reach the runner's frames and their globals
import sys

frame = sys._getframe(0)
print("ESCAPED:", frame)
