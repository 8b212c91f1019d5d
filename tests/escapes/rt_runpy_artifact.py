# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: import socket (network denied by policy)
# attempt: write a module under artifacts/ and run it with runpy (a library), fetched by a computed name: code loaded from where the tool writes is the tool's
import runpy

with open("artifacts/mod.py", "w") as f:
    f.write("import socket\nprint('ESCAPED: socket imported from an artifact')\n")
getattr(runpy, "run_" + "path")("artifacts/mod.py")
