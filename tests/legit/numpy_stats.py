# Legit tool: descriptive statistics with numpy and a least-squares price model
# (np.linalg.lstsq), with the arrays kept in artifacts via np.save / np.load / np.savez.
# Covers: columns loaded through pandas .to_numpy(), mean/median/std/percentile,
#   np.corrcoef, np.linalg.lstsq on a design matrix, np.polyfit, np.save and np.load of an
#   .npy under ./artifacts, np.savez_compressed and np.load of the .npz.
# Proof: RESULT lines (moments, percentiles, fitted coefficients, residual) equal the host
#   run's; the .npy and .npz files have the host's bytes.
# inputs: sales.csv
import os

import numpy as np
import pandas as pd

sales = pd.read_csv("./inputs/sales.csv")
units = sales["units"].to_numpy(dtype=np.float64)
price = sales["unit_price"].to_numpy(dtype=np.float64)
revenue = sales["revenue"].to_numpy(dtype=np.float64)

stats = np.array([revenue.mean(), np.median(revenue), revenue.std(ddof=1), revenue.min(), revenue.max()])
p10, p50, p90 = np.percentile(revenue, [10, 50, 90])
corr = np.corrcoef(units, revenue)[0, 1]

# revenue ~ a * units + b * (units * price) + c: b should be 1 and a, c near 0.
X = np.column_stack([units, units * price, np.ones_like(units)])
coef, residuals, rank, sv = np.linalg.lstsq(X, revenue, rcond=None)
slope, intercept = np.polyfit(units, revenue, deg=1)

np.save("artifacts/revenue.npy", revenue)
np.save(os.path.join("artifacts", "design.npy"), X)
np.savez_compressed("./artifacts/model.npz", coef=coef, stats=stats)

back = np.load("artifacts/revenue.npy")
assert np.array_equal(back, revenue)
with np.load("./artifacts/model.npz") as z:
    assert np.allclose(z["coef"], coef)
    saved_keys = sorted(z.files)

print(f"RESULT: mean={stats[0]:.4f} median={stats[1]:.2f} std={stats[2]:.4f} min={stats[3]:.2f} max={stats[4]:.2f}")
print(f"RESULT: p10={p10:.2f} p50={p50:.2f} p90={p90:.2f}")
print(f"RESULT: corr(units, revenue)={corr:.6f}")
print(f"RESULT: lstsq coef=[{coef[0]:.6f}, {coef[1]:.6f}, {coef[2]:.6f}] rank={rank} residual~0={float(residuals[0]) < 1e-6}")
print(f"RESULT: polyfit slope={slope:.4f} intercept={intercept:.4f}")
print(f"RESULT: reloaded={back.shape} keys={saved_keys}")
