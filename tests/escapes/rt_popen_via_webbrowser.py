# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: subprocess.Popen (process creation denied by policy)
# attempt: subprocess loaded by a library (webbrowser imports it), taken from sys.modules, then Popen
import sys
import webbrowser  # noqa: F401

sp = sys.modules["sub" + "process"]
print("ESCAPED:", sp.Popen(["/bin/true"]).wait())
