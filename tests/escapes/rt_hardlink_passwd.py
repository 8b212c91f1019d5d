# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.link('/etc/passwd', 'artifacts/h') (link pointing outside the jail's roots)
# host-untouched: {artifacts}/h
# attempt: a hard link to /etc/passwd inside artifacts/, the target built at run time
import os

target = "/".join(["", "etc", "passwd"])
os.link(target, "artifacts/h")
print("ESCAPED: made artifacts/h")
