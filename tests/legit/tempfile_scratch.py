# Legit tool: intermediate files in the private /tmp (tempfile.TemporaryDirectory,
# NamedTemporaryFile, mkstemp), with only the final result copied to ./artifacts.
# Covers: tempfile.gettempdir, TemporaryDirectory as a context manager, NamedTemporaryFile
#   (mode 'w+', delete=True) written, flushed, re-read by name with pandas, mkstemp with
#   os.fdopen, SpooledTemporaryFile, pandas to_csv/read_csv in the temp dir, shutil.copy of
#   the result into artifacts, cleanup checked.
# Proof: RESULT lines (rows round-tripped, cleanup done) equal the host run's;
#   artifacts/top_products.csv has the host's bytes.
# inputs: sales.csv
import os
import shutil
import tempfile

import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
tmp_root = tempfile.gettempdir()

with tempfile.TemporaryDirectory(prefix="sales-") as tmp:
    part_paths = []
    for region, g in sales.groupby("region"):
        p = os.path.join(tmp, f"part_{region}.csv")
        g.to_csv(p, index=False)
        part_paths.append(p)
    parts = [pd.read_csv(p) for p in sorted(part_paths)]
    combined = pd.concat(parts, ignore_index=True)
    top = combined.groupby("product")["revenue"].sum().nlargest(3).round(2)
    result = os.path.join(tmp, "top_products.csv")
    top.to_csv(result)
    shutil.copy(result, "artifacts/top_products.csv")
    files_in_tmp = len(os.listdir(tmp))
    tmp_was_inside = os.path.dirname(tmp) == tmp_root
removed = not os.path.exists(tmp)

with tempfile.NamedTemporaryFile("w+", suffix=".csv", encoding="utf-8") as nt:
    sales.head(50).to_csv(nt, index=False)
    nt.flush()
    back = pd.read_csv(nt.name)
    nt.seek(0)
    first_line = nt.readline().strip()
    named = nt.name
named_removed = not os.path.exists(named)

fd, path = tempfile.mkstemp(prefix="note-", suffix=".txt")
with os.fdopen(fd, "w") as f:
    f.write("units\n" + "\n".join(str(u) for u in sales["units"].head(10)) + "\n")
with open(path) as f:
    units_back = [int(x) for x in f.read().split()[1:]]
os.unlink(path)

with tempfile.SpooledTemporaryFile(max_size=1024, mode="w+") as spool:
    spool.write("x" * 2048)
    spool.seek(0)
    spooled = len(spool.read())

print(f"RESULT: tmp root={tmp_root} inside={tmp_was_inside} files={files_in_tmp} removed={removed}")
print(f"RESULT: combined rows={len(combined)} top={top.to_dict()}")
print(f"RESULT: named rows={len(back)} header={first_line} removed={named_removed}")
print(f"RESULT: mkstemp units={units_back} removed={not os.path.exists(path)}")
print(f"RESULT: spooled={spooled}")
