# Legit tool: distribution charts: a scatter of units against revenue and histograms of
# order size, saved both ways (plt.savefig and fig.savefig).
# Covers: a 1x2 subplot grid, ax.scatter with colours per product (a colormap), ax.hist with
#   returned counts and bins, np.histogram to cross-check, a boxplot, plt.savefig with a
#   pathlib Path, fig.savefig with os.path.join.
# Proof: RESULT lines (histogram counts and bin edges, scatter point count) equal the host
#   run's; the PNGs are PNGs within 1% of the host's size.
# inputs: sales.csv
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
codes, names = pd.factorize(sales["product"], sort=True)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), dpi=90)
sc = ax1.scatter(sales["units"], sales["revenue"], c=codes, cmap="tab10", s=12, alpha=0.7)
ax1.set_xlabel("units")
ax1.set_ylabel("revenue")
ax1.set_title("Units vs revenue")
counts, edges, _patches = ax2.hist(sales["revenue"], bins=20, color="#55a868", edgecolor="white")
ax2.set_title("Order revenue")
ax2.set_yscale("log")
fig.tight_layout()
fig.savefig(os.path.join("artifacts", "scatter_hist.png"))

plt.figure(figsize=(6, 4), dpi=90)
plt.boxplot([sales.loc[sales["product"] == p, "units"] for p in names], labels=list(names))
plt.xticks(rotation=30)
plt.tight_layout()
plt.savefig(Path("artifacts") / "units_box.png")
plt.close("all")

np_counts, np_edges = np.histogram(sales["revenue"], bins=20)
assert np.array_equal(np_counts, counts.astype(int))
print(f"RESULT: points={len(sc.get_offsets())} products={list(names)}")
print(f"RESULT: hist counts={np_counts.tolist()}")
print(f"RESULT: hist edges first={edges[0]:.2f} last={edges[-1]:.2f} width={edges[1] - edges[0]:.4f}")
