# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: sys._getframe (introspection denied by policy)
# attempt: sys._getframe fetched with getattr and a joined name
import sys

gf = getattr(sys, "_".join(["", "getframe"]))
print("ESCAPED:", gf(0))
