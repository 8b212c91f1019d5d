# Legit tool: organising output files under ./artifacts with os, os.path, pathlib and shutil,
# including absolute paths inside the run directory (/work/artifacts/..., and
# os.path.abspath('artifacts')).
# Covers: os.listdir('inputs'), os.path.exists/isfile/isdir/getsize/splitext/basename/
#   join/abspath/relpath/normpath, os.makedirs('artifacts/sub/dir', exist_ok=True),
#   shutil.copy from inputs to artifacts, shutil.copyfile, os.rename and os.replace inside
#   artifacts, os.remove, os.stat, os.walk, os.scandir; Path.mkdir(parents=True),
#   write_text/read_text/write_bytes, glob/rglob, iterdir, with_suffix, relative_to, unlink,
#   open('/work/artifacts/x.txt', 'w') and Path('/work/artifacts') / ... .
# Proof: RESULT lines (listings, sizes, relative paths) equal the host run's (the host runs in
#   a /work laid out like the jail); the artifact tree has the host's bytes.
# inputs: sales.csv regions.csv
import os
import os.path
import shutil
from pathlib import Path

inputs = sorted(os.listdir("inputs"))
sizes = {name: os.path.getsize(os.path.join("inputs", name)) for name in inputs}
assert os.path.isdir("inputs") and os.path.isfile("inputs/sales.csv") and not os.path.exists("inputs/nothing.csv")

os.makedirs("artifacts/sub/dir", exist_ok=True)
os.makedirs("artifacts/sub/dir", exist_ok=True)  # twice: exist_ok
shutil.copy("inputs/regions.csv", "artifacts/sub/regions_copy.csv")
shutil.copyfile(os.path.join("inputs", "sales.csv"), os.path.join("artifacts", "sub", "dir", "sales_copy.csv"))

art_abs = os.path.abspath("artifacts")
with open("/work/artifacts/x.txt", "w") as f:
    f.write(f"absolute artifacts dir: {art_abs}\n")
with open(os.path.join(art_abs, "y.txt"), "w") as f:
    f.write("written through os.path.abspath('artifacts')\n")
os.rename("artifacts/y.txt", "artifacts/sub/y_renamed.txt")
with open("artifacts/tmp_note.txt", "w") as f:
    f.write("to be removed\n")
os.remove("artifacts/tmp_note.txt")
os.replace("artifacts/x.txt", "/work/artifacts/sub/x.txt")

root = Path("artifacts")
reports = root / "reports" / "2024"
reports.mkdir(parents=True, exist_ok=True)
for quarter in ("q1", "q2"):
    (reports / f"{quarter}.md").write_text(f"# {quarter}\n", encoding="utf-8")
(reports / "q1.md").with_suffix(".bak").write_bytes(b"backup\n")
(reports / "q1.bak").unlink()
absolute = Path("/work/artifacts") / "abs_pathlib.txt"
absolute.write_text("pathlib with an absolute path inside the run dir\n")
head = Path("inputs/sales.csv").read_text().splitlines()[0]

tree = []
for dirpath, dirnames, filenames in os.walk("artifacts"):
    dirnames.sort()
    for name in sorted(filenames):
        full = os.path.join(dirpath, name)
        tree.append((os.path.relpath(full, "artifacts"), os.stat(full).st_size))
entries = sorted((e.name, e.is_dir()) for e in os.scandir("artifacts"))

print(f"RESULT: inputs={inputs} sizes={sizes}")
print(f"RESULT: abspath={art_abs} norm={os.path.normpath('artifacts/sub/../sub/./dir')}")
print(f"RESULT: split={os.path.splitext('artifacts/sub/dir/sales_copy.csv')} base={os.path.basename(art_abs)}")
print(f"RESULT: tree={tree}")
print(f"RESULT: scandir={entries}")
print(f"RESULT: glob={sorted(str(p) for p in root.glob('reports/*/*.md'))}")
print(f"RESULT: rglob csv={sorted(p.relative_to(root).as_posix() for p in root.rglob('*.csv'))}")
print(f"RESULT: iterdir={sorted(p.name for p in Path('inputs').iterdir())} abs exists={absolute.exists()}")
print(f"RESULT: header={head} copy same={Path('artifacts/sub/regions_copy.csv').read_bytes() == Path('inputs/regions.csv').read_bytes()}")
