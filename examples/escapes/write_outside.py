# Escape attempt: writing outside ./artifacts. Opens './artifacts/../outside.txt'
# (that is, ./outside.txt in the working directory) for writing and prints whether
# the write succeeded.
#
# What Anvil should do:
#   namespace (now): ./artifacts/.. is /work on the jail's read-only root, so the open
#     fails (OSError, read-only file system); the host's run directory is untouched.
#   precheck:  blocked: write path './artifacts/../outside.txt' outside
#     ALLOWED_WRITE_PATHS (./artifacts)  -- the tool never runs.
#   audit:     the open for writing outside the roots is refused with a PermissionError
#     raised here (printed below).
#   landlock:  the only writable tree is /work/artifacts (and /tmp).
try:
    with open("./artifacts/../outside.txt", "w") as f:
        f.write("written by write_outside.py\n")
except OSError as e:
    print(f"write failed: {type(e).__name__}: {e}")
else:
    print("write succeeded: outside.txt now exists next to artifacts/")
