# Try to break it: read a file outside ./inputs, the plain way.
# /etc/hostname is there in the jail (the jail's own file, not the host's) but none of the
# tool's business. The path is built at run time, so the pre-check has no literal to judge;
# the audit hook sees the tool's own open() of a path outside the read roots and refuses it.
path = "/".join(["", "etc", "hostname"])

with open(path) as f:
    print(f.read())
