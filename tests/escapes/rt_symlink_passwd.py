# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.symlink('/etc/passwd', 'artifacts/p') (link pointing outside the jail's roots)
# host-untouched: {artifacts}/p
# attempt: os.symlink('/etc/passwd', 'artifacts/p') with the target built at run time, for the host's artifact listing to follow
import os

target = "/".join(["", "etc", "passwd"])
os.symlink(target, "artifacts/p")
print("ESCAPED: made artifacts/p")
