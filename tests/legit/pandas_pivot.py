# Legit tool: units per region and product as a pivot table, with margins, plus a crosstab.
# Covers: pd.pivot_table (aggfunc sum and mean, margins, fill_value), pd.crosstab,
#   DataFrame.melt back to long form, to_csv and to_json under ./artifacts.
# Proof: RESULT lines (margins, largest cell, melted row count) equal the host run's;
#   artifacts/pivot_units.csv and artifacts/pivot_price.json have the same bytes.
# inputs: sales.csv
import os

import pandas as pd

sales = pd.read_csv(os.path.join("inputs", "sales.csv"))

pivot = pd.pivot_table(sales, values="units", index="region", columns="product",
                       aggfunc="sum", fill_value=0, margins=True, margins_name="Total")
pivot.to_csv(os.path.join("artifacts", "pivot_units.csv"))

prices = sales.pivot_table(index="product", columns="region", values="unit_price", aggfunc="mean").round(2)
prices.to_json("artifacts/pivot_price.json", orient="split", double_precision=2)

counts = pd.crosstab(sales["region"], sales["product"])
inner = pivot.drop(index="Total", columns="Total")
region, product = inner.stack().idxmax()
long_form = inner.reset_index().melt(id_vars="region", var_name="product", value_name="units")

print(f"RESULT: total units={pivot.loc['Total', 'Total']}")
print(f"RESULT: North total={pivot.loc['North', 'Total']} Notebook total={pivot.loc['Total', 'Notebook']}")
print(f"RESULT: largest cell={region}/{product}={inner.loc[region, product]}")
print(f"RESULT: crosstab orders={counts.values.sum()} max={counts.values.max()}")
print(f"RESULT: melted rows={len(long_form)} units={long_form['units'].sum()}")
print(f"RESULT: cheapest chair={prices.loc['Office Chair'].min():.2f}")
