# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: open('./artifacts/../outside.txt', 'w') (write outside ALLOWED_WRITE_PATHS)
# expect-stdout: carried on after: blocked at runtime: open('./artifacts/../outside.txt', 'w') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: {rundir}/outside.txt
# attempt: catch anvil.SandboxBlocked, say nothing and carry on: the run is ok, the refusal is still on the record
from anvil import SandboxBlocked

target = "/".join([".", "artifacts", "..", "outside.txt"])
try:
    with open(target, "w") as f:
        f.write("written by an escape attempt\n")
    print("ESCAPED: wrote", target)
except SandboxBlocked as e:
    print("carried on after:", e)
