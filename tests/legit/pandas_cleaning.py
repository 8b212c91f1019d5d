# Legit tool: cleaning and reshaping with pandas: string methods, categoricals, binning,
# missing values, apply/map with lambdas, query and eval expressions, duplicates.
# Covers: .str accessor (upper, contains, replace with regex, split(expand=True)),
#   astype('category'), pd.cut and pd.qcut, fillna/interpolate/dropna on injected gaps,
#   DataFrame.apply(axis=1), Series.map with a dict, DataFrame.query('units > 20 and
#   region == "North"') and DataFrame.eval('value = units * unit_price') (pandas parses these
#   expressions itself: must not be refused), drop_duplicates, rank, nlargest, where/mask,
#   concat, to_csv and to_excel-free to_html output.
# Proof: RESULT lines equal the host run's; artifacts/cleaned.csv and artifacts/table.html
#   have the host's bytes.
# inputs: sales.csv
import numpy as np
import pandas as pd

df = pd.read_csv("./inputs/sales.csv")
df["product_code"] = df["product"].str.upper().str.replace(r"[^A-Z]", "", regex=True).str[:4]
df[["year", "month", "day"]] = df["date"].str.split("-", expand=True).astype(int)
df["region"] = df["region"].astype("category")
df["size"] = pd.cut(df["units"], bins=[0, 5, 20, np.inf], labels=["small", "medium", "large"])
df["price_band"] = pd.qcut(df["unit_price"], q=4, labels=["q1", "q2", "q3", "q4"])

gappy = df["revenue"].copy()
gappy.iloc[::50] = np.nan
filled = gappy.interpolate()
n_missing = int(gappy.isna().sum())

df = df.eval("value = units * unit_price")
assert np.allclose(df["value"], df["revenue"])
north_big = df.query('units > 20 and region == "North"')
threshold = 500
above = df.query("revenue > @threshold")
df["tier"] = df.apply(lambda r: "key" if r["revenue"] > 1000 else ("mid" if r["revenue"] > 200 else "low"), axis=1)
df["region_short"] = df["region"].map({"North": "N", "South": "S", "East": "E", "West": "W", "Central": "C"})
df["rank_in_region"] = df.groupby("region")["revenue"].rank(method="dense", ascending=False).astype(int)
capped = df["revenue"].where(df["revenue"] < 1000, 1000.0)
deduped = df.drop_duplicates(subset=["region", "product"])
combined = pd.concat([df.nlargest(3, "revenue"), df.nsmallest(3, "revenue")])

out = df[["date", "region_short", "product_code", "size", "price_band", "tier", "rank_in_region"]]
out.to_csv("artifacts/cleaned.csv", index=False)
combined[["date", "region", "product", "revenue"]].to_html("artifacts/table.html", index=False)

print(f"RESULT: codes={sorted(df['product_code'].unique())}")
print(f"RESULT: sizes={df['size'].value_counts().sort_index().to_dict()}")
print(f"RESULT: bands={df['price_band'].value_counts().sort_index().to_dict()}")
print(f"RESULT: missing={n_missing} filled sum={filled.sum():.2f}")
print(f"RESULT: north big={len(north_big)} above 500={len(above)}")
print(f"RESULT: tiers={df['tier'].value_counts().to_dict()}")
print(f"RESULT: capped sum={capped.sum():.2f} dedup={len(deduped)} categories={list(df['region'].cat.categories)}")
print(f"RESULT: extremes={combined['revenue'].tolist()}")
