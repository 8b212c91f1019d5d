# Legit tool: revenue against target per manager, by merging sales with a second input.
# Covers: two pd.read_csv inputs, DataFrame.merge (inner, validate='many_to_one'),
#   merge with indicator to prove no row is lost, a left join of products, assign, to_csv.
# Proof: RESULT lines (per manager revenue, target, attainment) equal the host run's;
#   artifacts/manager_attainment.csv has the same bytes.
# inputs: sales.csv regions.csv products.csv
import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
regions = pd.read_csv("inputs/regions.csv")
products = pd.read_csv("inputs/products.csv")

merged = sales.merge(regions, on="region", how="left", validate="many_to_one", indicator=True)
unmatched = int((merged["_merge"] != "both").sum())
merged = merged.drop(columns="_merge").merge(products, on="product", how="inner")

per_manager = (
    merged.groupby(["manager", "target"], as_index=False)["revenue"].sum()
    .assign(attainment=lambda d: (d["revenue"] / d["target"] * 100).round(1))
    .sort_values("attainment", ascending=False)
)
per_manager["revenue"] = per_manager["revenue"].round(2)
per_manager.to_csv("artifacts/manager_attainment.csv", index=False)

merged["discount"] = (1 - merged["unit_price"] / merged["list_price"]) * 100
per_category = merged.groupby("category")["revenue"].sum().round(2)

print(f"RESULT: rows={len(merged)} unmatched={unmatched}")
for row in per_manager.itertuples(index=False):
    print(f"RESULT: {row.manager} revenue={row.revenue:.2f} target={row.target} attainment={row.attainment}%")
for category, revenue in per_category.items():
    print(f"RESULT: category {category}={revenue:.2f}")
print(f"RESULT: mean discount={merged['discount'].mean():.3f}% max={merged['discount'].max():.3f}%")
