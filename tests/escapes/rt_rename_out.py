# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.rename('artifacts/a.txt', './artifacts/../a.txt') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: {rundir}/a.txt
# attempt: write a file where writing is allowed, then move it out of artifacts/ with os.rename
import os

with open("artifacts/a.txt", "w") as f:
    f.write("moved out by an escape attempt\n")
dst = os.sep.join([".", "artifacts", "..", "a.txt"])
os.rename("artifacts/a.txt", dst)
print("ESCAPED: moved to", dst)
