# Legit tool: a work directory under ./artifacts for per-product intermediate files,
# merged into one result, then removed with shutil.rmtree; pathlib and os removals too.
# Covers: os.makedirs('artifacts/work/parts', exist_ok=True), per-group to_csv into it,
#   glob.glob over it, pd.concat of the parts, shutil.rmtree('artifacts/work'),
#   shutil.copytree and shutil.move inside artifacts, Path.unlink(missing_ok=True),
#   Path.rmdir, os.path.exists afterwards.
# Proof: RESULT lines (parts written, rows merged, what is left) equal the host run's;
#   artifacts/merged.csv and the moved copy have the host's bytes, and nothing of the work
#   directory is left on either side.
# inputs: sales.csv
import glob
import os
import shutil
from pathlib import Path

import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
work = os.path.join("artifacts", "work", "parts")
os.makedirs(work, exist_ok=True)
for product, g in sales.groupby("product"):
    g.to_csv(os.path.join(work, product.lower().replace(" ", "_") + ".csv"), index=False)

parts = sorted(glob.glob("artifacts/work/parts/*.csv"))
merged = pd.concat((pd.read_csv(p) for p in parts), ignore_index=True).sort_values(["date", "region", "product"])
merged.to_csv("artifacts/merged.csv", index=False)

shutil.copytree("artifacts/work/parts", "artifacts/parts_copy")
shutil.move("artifacts/parts_copy/notebook.csv", "artifacts/notebook.csv")
shutil.rmtree("artifacts/parts_copy")
shutil.rmtree("artifacts/work")

scratch = Path("artifacts/scratch")
scratch.mkdir()
(scratch / "note.txt").write_text("temporary\n")
(scratch / "note.txt").unlink()
(scratch / "never.txt").unlink(missing_ok=True)
scratch.rmdir()

print(f"RESULT: parts={[os.path.basename(p) for p in parts]}")
print(f"RESULT: merged rows={len(merged)} equal={merged.reset_index(drop=True).equals(sales.sort_values(['date', 'region', 'product']).reset_index(drop=True))}")
print(f"RESULT: left={sorted(os.listdir('artifacts'))} work gone={not os.path.exists('artifacts/work')}")
