# Legit tool: a one-page dashboard figure (2x2 subplots: pie, stacked bars, heatmap, line)
# saved with fig.savefig(Path('artifacts') / ...), and a text summary beside it.
# Covers: gridspec subplots, ax.pie with autopct, stacked ax.bar with bottom=, ax.imshow with a
#   colorbar and text annotations, twin axes (ax.twinx), fig.suptitle, savefig with dpi,
#   facecolor and metadata; Path.write_text of the summary.
# Proof: RESULT lines (pie shares, heatmap maximum, twin-axis ranges) equal the host run's;
#   artifacts/dashboard.png is a PNG within 1% of the host's size; summary.txt has its bytes.
# inputs: sales.csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

ART = Path("artifacts")
sales = pd.read_csv(Path("inputs/sales.csv"), parse_dates=["date"])
sales["month"] = sales["date"].dt.month

share = sales.groupby("region")["revenue"].sum()
stack = sales.pivot_table(index="month", columns="product", values="units", aggfunc="sum", fill_value=0)
heat = sales.pivot_table(index="region", columns="product", values="revenue", aggfunc="sum", fill_value=0)

fig, axes = plt.subplots(2, 2, figsize=(11, 8), dpi=80)
wedges, _texts, autotexts = axes[0, 0].pie(share.values, labels=share.index, autopct="%1.1f%%", startangle=90)
axes[0, 0].set_title("Revenue share")

bottom = np.zeros(len(stack))
for product in stack.columns:
    axes[0, 1].bar(stack.index, stack[product], bottom=bottom, label=product)
    bottom += stack[product].values
axes[0, 1].legend(fontsize="x-small")
axes[0, 1].set_title("Units per month")

im = axes[1, 0].imshow(heat.values, cmap="viridis", aspect="auto")
axes[1, 0].set_xticks(range(len(heat.columns)), heat.columns, rotation=45, fontsize="small")
axes[1, 0].set_yticks(range(len(heat.index)), heat.index)
for (i, j), v in np.ndenumerate(heat.values):
    axes[1, 0].text(j, i, f"{v / 1000:.0f}k", ha="center", va="center", fontsize=7, color="w")
fig.colorbar(im, ax=axes[1, 0])

monthly = sales.groupby("month").agg(revenue=("revenue", "sum"), orders=("revenue", "size"))
axes[1, 1].plot(monthly.index, monthly["revenue"], color="tab:blue")
twin = axes[1, 1].twinx()
twin.plot(monthly.index, monthly["orders"], color="tab:red", linestyle="--")
fig.suptitle("Sales dashboard 2024")
fig.tight_layout()
fig.savefig(ART / "dashboard.png", dpi=80, facecolor="white", metadata={"Title": "Sales dashboard"})
plt.close(fig)

summary = "\n".join(f"{t.get_text()}: {a.get_text()}" for t, a in zip(_texts, autotexts))
(ART / "summary.txt").write_text(summary + "\n", encoding="utf-8")

print(f"RESULT: wedges={len(wedges)} shares={[a.get_text() for a in autotexts]}")
print(f"RESULT: stacked max={bottom.max():.0f} months={len(stack)}")
i, j = np.unravel_index(heat.values.argmax(), heat.shape)
print(f"RESULT: heat max={heat.index[i]}/{heat.columns[j]}={heat.values[i, j]:.2f}")
print(f"RESULT: orders range={monthly['orders'].min()}..{monthly['orders'].max()}")
