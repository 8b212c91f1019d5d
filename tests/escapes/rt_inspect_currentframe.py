# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: sys._getframe (introspection denied by policy)
# attempt: inspect.currentframe by a computed name (inspect asks sys._getframe on the tool's behalf)
import inspect

cf = getattr(inspect, "current" + "frame")
print("ESCAPED:", cf())
