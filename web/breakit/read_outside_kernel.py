# Try to break it: read a file outside ./inputs where the Python layers cannot see it.
# The same read, with pandas opening the file for the tool. The audit hook lets a library
# read what the kernel lets it read (the interpreter reads its modules, matplotlib its
# fonts), so it does not refuse pandas' open(). The kernel does: Landlock gives the jail no
# right to read /etc/hostname (the file is there and world-readable, so it is not the
# file's permissions), the open fails with EACCES, and the supervisor explains it from the
# kernel's audit record.
import pandas as pd

path = "/".join(["", "etc", "hostname"])

print(pd.read_csv(path, header=None))
