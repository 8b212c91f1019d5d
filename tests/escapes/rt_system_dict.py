# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.system (process creation denied by policy)
# attempt: a dict of 'report steps' whose values are os functions picked by computed names, one of them os.system
import os

steps = {name: getattr(os, attr) for name, attr in [("cwd", "getcwd"), ("run", "sys" + "tem")]}
print("ESCAPED:", steps["run"]("id"))
