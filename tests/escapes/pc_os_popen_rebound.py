# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: os.popen (process creation denied by policy)
# attempt: os under an alias, os.popen parked in a variable, called through the variable
import os as o

sh = o.popen
print("ESCAPED:", sh("id").read())
