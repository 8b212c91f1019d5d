# Legit tool: file operations relative to an open directory, as careful code and the
# standard library's own cleanup do: a staging directory under ./artifacts opened once, its
# files made, listed, renamed and removed through dir_fd.
# Covers: os.open of a directory (O_DIRECTORY), os.open(name, O_WRONLY|O_CREAT, dir_fd=),
#   os.write/os.close, os.listdir(fd), os.scandir(fd), os.stat(name, dir_fd=),
#   os.rename(src_dir_fd=, dst_dir_fd=), os.mkdir and os.rmdir with dir_fd, os.unlink(name,
#   dir_fd=), open(name, opener=...) with a dir_fd opener, tempfile.TemporaryDirectory under
#   /tmp (its cleanup is shutil.rmtree by fd).
# Proof: RESULT lines (names listed, sizes, what is left) equal the host run's;
#   artifacts/summary.txt has the host's bytes.
# inputs: sales.csv
import os
import tempfile

import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
os.makedirs("artifacts/staging", exist_ok=True)
d = os.open("artifacts/staging", os.O_RDONLY | os.O_DIRECTORY)
try:
    for region, g in sales.groupby("region"):
        fd = os.open(f"{region.lower()}.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=d)
        os.write(fd, f"{region},{g['revenue'].sum():.2f}\n".encode())
        os.close(fd)
    listed = sorted(os.listdir(d))
    scanned = sorted(e.name for e in os.scandir(d))
    sizes = {n: os.stat(n, dir_fd=d).st_size for n in listed}
    os.mkdir("done", dir_fd=d)
    os.rename("north.txt", "done/north.txt", src_dir_fd=d, dst_dir_fd=d)

    def in_staging(path, flags):
        return os.open(path, flags, 0o644, dir_fd=d)

    with open("note.txt", "w", opener=in_staging) as f:
        f.write("staged\n")
    with open("done/north.txt", opener=in_staging) as f:
        north = f.read().strip()
    for n in os.listdir(d):
        if n.endswith(".txt"):
            os.unlink(n, dir_fd=d)
    os.unlink("done/north.txt", dir_fd=d)
    os.rmdir("done", dir_fd=d)
finally:
    os.close(d)
os.rmdir("artifacts/staging")

with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(os.path.join(tmp, "a", "b"))
    with open(os.path.join(tmp, "a", "b", "x.csv"), "w") as f:
        f.write("x\n1\n")
    tmp_listed = sorted(os.listdir(os.path.join(tmp, "a")))
tmp_gone = not os.path.exists(tmp)

with open("artifacts/summary.txt", "w") as f:
    f.write(f"{north}\n")

print(f"RESULT: listed={listed} scanned equal={scanned == listed}")
print(f"RESULT: sizes={sizes}")
print(f"RESULT: north={north}")
print(f"RESULT: staging gone={not os.path.exists('artifacts/staging')} tmp={tmp_listed} tmp gone={tmp_gone}")
