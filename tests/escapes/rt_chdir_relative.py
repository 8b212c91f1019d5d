# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)
# attempt: chdir to / first, then open a relative path (judged against the current directory, not the start one)
import os

os.chdir("/")
rel = "/".join(["etc", "passwd"])
print("ESCAPED:", open(rel).readline())
