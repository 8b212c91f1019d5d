# Legit tool: bar chart of revenue per region with the pyplot state machine, saved with
# plt.savefig(os.path.join('artifacts', ...)).
# Covers: matplotlib.use('Agg'), plt.figure/bar/bar_label/title/xticks, a FuncFormatter,
#   plt.savefig with os.path.join('artifacts', 'revenue_bar.png') and with a name built at
#   run time, plt.close('all'); the data behind the chart also written as CSV.
# Proof: RESULT lines (bar heights, number of bars) equal the host run's; the PNGs exist,
#   are PNGs and are within 1% of the host's size; artifacts/revenue_bar.csv has its bytes.
# inputs: sales.csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter

OUT_DIR = "artifacts"
sales = pd.read_csv(os.path.join("inputs", "sales.csv"))
totals = sales.groupby("region")["revenue"].sum().sort_values(ascending=False).round(2)
totals.to_csv(os.path.join(OUT_DIR, "revenue_bar.csv"), header=["revenue"])

plt.figure(figsize=(6, 4), dpi=100)
bars = plt.bar(totals.index, totals.values, color=["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3"])
plt.bar_label(bars, labels=[f"{v / 1000:.1f}k" for v in totals.values], padding=2)
plt.title("Revenue by region")
plt.ylabel("Revenue")
plt.gca().yaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
plt.tight_layout()
plt.savefig(os.path.join("artifacts", "revenue_bar.png"))

# The same chart, horizontal, under a name made at run time.
plt.figure(figsize=(6, 4), dpi=80)
plt.barh(totals.index[::-1], totals.values[::-1])
plt.xlabel("Revenue")
name = f"revenue_barh_{len(totals)}.png"
plt.savefig(os.path.join(OUT_DIR, name), dpi=80)
plt.close("all")

heights = [round(b.get_height(), 2) for b in bars]
print(f"RESULT: bars={len(bars)} heights={heights}")
print(f"RESULT: files={sorted(f for f in os.listdir(OUT_DIR) if f.endswith('.png'))}")
