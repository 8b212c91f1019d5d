# Escape attempt: reading a host file. Builds the path /etc/passwd at run time (so no
# literal path appears in the source for a static check to see), reads it and prints
# the first lines it got.
#
# What Anvil should do:
#   namespace (now): the jail's /etc is synthetic, so this reads the jail's three-line
#     passwd (root, tool, nobody), never the host's.
#   precheck:  nothing to see: the path is not a literal; the later layers catch it.
#   audit:     the open for reading outside the read roots is refused with a
#     PermissionError raised here (printed below).
#   landlock:  blocked at kernel: read '/etc/passwd' (outside the jail's read roots,
#     landlock), for readers below Python.
path = "/".join(["", "etc", "pass" + "wd"])

try:
    with open(path) as f:
        lines = [line.rstrip("\n") for _, line in zip(range(5), f)]
except OSError as e:
    print(f"read {path} failed: {type(e).__name__}: {e}")
else:
    print(f"read {path}: first {len(lines)} lines")
    for line in lines:
        print(f"  {line}")
