# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('./artifacts/../outside.txt', 'w') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: {rundir}/outside.txt
# attempt: the canned write attempt at run time: './artifacts/../outside.txt' joined from parts, opened for writing
target = "/".join([".", "artifacts", "..", "outside.txt"])
with open(target, "w") as f:
    f.write("written by an escape attempt\n")
print("ESCAPED: wrote", target)
