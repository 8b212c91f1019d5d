# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: write path './artifacts/../outside.txt' outside ALLOWED_WRITE_PATHS (./artifacts)
# host-untouched: {rundir}/outside.txt
# attempt: the canned write attempt as written: open('./artifacts/../outside.txt', 'w')
with open("./artifacts/../outside.txt", "w") as f:
    f.write("written by an escape attempt\n")
print("ESCAPED: wrote outside.txt")
