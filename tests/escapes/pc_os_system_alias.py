# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: os.system (process creation denied by policy)
# attempt: os.system imported under an innocent name (from os import system as run_report)
from os import system as run_report

run_report("echo ESCAPED: shell command ran")
