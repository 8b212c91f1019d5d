# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.mkdir('/work/anvil-escape-dir') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: /work/anvil-escape-dir
# attempt: os.mkdir of a directory beside artifacts/, the path built at run time
import os

target = "/".join(["", "work", "anvil-escape-dir"])
os.mkdir(target)
print("ESCAPED: made", target)
