# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: import subprocess (process creation denied by policy)
# attempt: __import__ of a reversed module name, 'ssecorpbus'[::-1]
import builtins

imp = vars(builtins)["__tropmi__"[::-1]]
sp = imp("ssecorpbus"[::-1])
print("ESCAPED:", sp.run(["id"], capture_output=True).stdout)
