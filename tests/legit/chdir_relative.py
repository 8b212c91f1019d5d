# Legit tool: a tool that moves into its output directory and works with paths relative to
# it, as scripts written for "run from the output folder" do.
# Covers: os.chdir('artifacts'), pd.read_csv('../inputs/sales.csv'), to_csv and open() of
#   names relative to the new cwd, os.getcwd(), contextlib.chdir('..') as a context manager
#   with reads relative to the working directory inside it, Path.cwd() / 'x'.
# Proof: RESULT lines (rows, totals, the cwd seen) equal the host run's; artifacts/by_region.csv
#   and artifacts/notes/summary.txt have the host's bytes.
# inputs: sales.csv
import contextlib
import os
from pathlib import Path

import pandas as pd

os.chdir("artifacts")
sales = pd.read_csv("../inputs/sales.csv")
by_region = sales.groupby("region")["revenue"].sum().round(2)
by_region.to_csv("by_region.csv")
os.makedirs("notes", exist_ok=True)
with open(os.path.join("notes", "summary.txt"), "w") as f:
    f.write(f"regions={len(by_region)} total={by_region.sum():.2f}\n")
here = os.getcwd()
with contextlib.chdir(".."):
    with open("inputs/sales.csv") as f:
        header = f.readline().strip()
    listed = sorted(os.listdir("."))
back = Path.cwd()
size = (back / "by_region.csv").stat().st_size

print(f"RESULT: rows={len(sales)} regions={len(by_region)} total={by_region.sum():.2f}")
print(f"RESULT: cwd={here} back={back} size={size}")
print(f"RESULT: header={header} listed={listed}")
