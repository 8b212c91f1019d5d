# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: write path 'artifacts/../outside.txt' outside ALLOWED_WRITE_PATHS (./artifacts)
# host-untouched: {rundir}/outside.txt
# attempt: os.path.join('artifacts', '..', 'outside.txt') opened for writing (the join of literals is folded)
import os

with open(os.path.join("artifacts", "..", "outside.txt"), "w") as f:
    f.write("written by an escape attempt\n")
print("ESCAPED: wrote outside.txt")
