# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: subprocess.run (process creation denied by policy)
# attempt: subprocess.run(['id']) to run a program
import subprocess

out = subprocess.run(["id"], capture_output=True, text=True)
print("ESCAPED:", out.stdout)
