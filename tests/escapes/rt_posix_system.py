# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.system (process creation denied by policy)
# attempt: system() from the posix module (os's C half) found in sys.modules, not through os
import sys

px = sys.modules["pos" + "ix"]
print("ESCAPED:", getattr(px, "metsys"[::-1])("id"))
