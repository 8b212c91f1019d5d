# Anvil example tool: total revenue per region.
# Reads ./inputs/sales.csv (date,region,product,units,unit_price,revenue) and
# writes ./artifacts/revenue_by_region.csv and ./artifacts/revenue_by_region.png.
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import StrMethodFormatter

INPUT = "./inputs/sales.csv"
OUT_CSV = "./artifacts/revenue_by_region.csv"
OUT_PNG = "./artifacts/revenue_by_region.png"

sales = pd.read_csv(INPUT)
missing = {"region", "revenue"} - set(sales.columns)
if missing:
    raise ValueError("Required columns missing: " + ", ".join(sorted(missing)))

by_region = (
    sales.groupby("region", as_index=False)["revenue"]
    .sum()
    .sort_values("revenue", ascending=False, kind="mergesort")
    .reset_index(drop=True)
)
by_region["revenue"] = by_region["revenue"].round(2)
by_region.to_csv(OUT_CSV, index=False, float_format="%.2f")

fig, ax = plt.subplots(figsize=(7, 4.5))
ax.bar(by_region["region"], by_region["revenue"], color="#4c72b0")
ax.set_title("Revenue by region, 2024")
ax.set_xlabel("Region")
ax.set_ylabel("Revenue")
ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
fig.tight_layout()
fig.savefig(OUT_PNG, dpi=100)
plt.close(fig)

total = round(float(sales["revenue"].sum()), 2)
print(f"rows: {len(sales)}, regions: {len(by_region)}")
for row in by_region.itertuples(index=False):
    print(f"  {row.region:<10} {row.revenue:>12,.2f}  ({row.revenue / total:.1%})")
print(f"grand total: {total:.2f}")
