# Legit tool: revenue, units and order count per region and per product with pandas group-by.
# Covers: pd.read_csv of ./inputs/sales.csv, groupby().agg() with named aggregations,
#   groupby on two keys with unstack, sort_values, to_csv under ./artifacts.
# Proof: RESULT lines (per-region totals, best product, grand total) equal the host run's;
#   artifacts/groupby_region.csv and artifacts/groupby_region_product.csv have the same bytes.
# inputs: sales.csv
import pandas as pd

sales = pd.read_csv("./inputs/sales.csv")

by_region = (
    sales.groupby("region")
    .agg(orders=("revenue", "size"), units=("units", "sum"), revenue=("revenue", "sum"),
         avg_order=("revenue", "mean"))
    .sort_values("revenue", ascending=False)
)
by_region["revenue"] = by_region["revenue"].round(2)
by_region["avg_order"] = by_region["avg_order"].round(2)
by_region.to_csv("./artifacts/groupby_region.csv")

two_keys = sales.groupby(["region", "product"])["units"].sum().unstack(fill_value=0)
two_keys.to_csv("artifacts/groupby_region_product.csv")

for region, row in by_region.iterrows():
    print(f"RESULT: {region} orders={row['orders']} units={row['units']} revenue={row['revenue']:.2f} "
          f"avg={row['avg_order']:.2f}")

best_product = sales.groupby("product")["revenue"].sum().idxmax()
print(f"RESULT: best product={best_product}")
print(f"RESULT: grand total={sales['revenue'].sum():.2f} rows={len(sales)}")
print(f"RESULT: cells={two_keys.size} units={int(two_keys.values.sum())}")
