# Legit tool: a seeded bootstrap confidence interval of the mean order revenue per region,
# with numpy's Generator and the standard library's random.Random side by side.
# Covers: np.random.default_rng(seed), rng.choice/integers/permutation, vectorised
#   resampling, np.quantile, random.Random(seed).sample/shuffle, a permutation test.
# Proof: RESULT lines (intervals, p-value, sampled ids) equal the host run's (same seeds,
#   same numpy, same Python); artifacts/bootstrap.csv has the host's bytes.
# inputs: sales.csv
import random

import numpy as np
import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
rng = np.random.default_rng(20240101)

rows = []
for region, group in sales.groupby("region"):
    values = group["revenue"].to_numpy()
    idx = rng.integers(0, len(values), size=(2000, len(values)))
    means = values[idx].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    rows.append((region, len(values), values.mean(), lo, hi))
ci = pd.DataFrame(rows, columns=["region", "n", "mean", "lo", "hi"]).round(3)
ci.to_csv("artifacts/bootstrap.csv", index=False)

# Permutation test: is North's mean order larger than South's?
north = sales.loc[sales["region"] == "North", "revenue"].to_numpy()
south = sales.loc[sales["region"] == "South", "revenue"].to_numpy()
observed = north.mean() - south.mean()
pooled = np.concatenate([north, south])
count = 0
for _ in range(1000):
    perm = rng.permutation(pooled)
    if perm[: len(north)].mean() - perm[len(north):].mean() >= observed:
        count += 1

py_rng = random.Random(7)
sample_ids = sorted(py_rng.sample(range(len(sales)), 5))
deck = list(sales["product"].unique())
py_rng.shuffle(deck)

for r in ci.itertuples(index=False):
    print(f"RESULT: {r.region} n={r.n} mean={r.mean:.3f} ci=[{r.lo:.3f}, {r.hi:.3f}]")
print(f"RESULT: observed diff={observed:.4f} p={count / 1000:.3f}")
print(f"RESULT: sample ids={sample_ids} shuffled={deck}")
print(f"RESULT: choice={rng.choice(sales['region'].unique(), size=3).tolist()}")
