# Legit tool: statistical tests on the sales with scipy (installed with Debian's data stack):
# t-test, linear regression, correlation, a chi-square test of independence, a curve fit
# and an interpolation.
# Covers: scipy.stats.ttest_ind (Welch), linregress, pearsonr, spearmanr, chi2_contingency
#   on a pandas crosstab, describe, scipy.optimize.curve_fit of a linear trend,
#   scipy.interpolate.interp1d, numpy and pandas together with scipy.
# Proof: RESULT lines (statistics rounded to 6 digits) equal the host run's.
# inputs: sales.csv
import numpy as np
import pandas as pd
from scipy import interpolate, optimize, stats

sales = pd.read_csv("inputs/sales.csv", parse_dates=["date"])
north = sales.loc[sales["region"] == "North", "revenue"]
south = sales.loc[sales["region"] == "South", "revenue"]
t = stats.ttest_ind(north, south, equal_var=False)
reg = stats.linregress(sales["units"], sales["revenue"])
r, p = stats.pearsonr(sales["units"], sales["unit_price"])
rho, p_rho = stats.spearmanr(sales["units"], sales["revenue"])
chi2, p_chi, dof, _expected = stats.chi2_contingency(pd.crosstab(sales["region"], sales["product"]))
desc = stats.describe(sales["revenue"])

monthly = sales.groupby(sales["date"].dt.month)["revenue"].sum()
params, _cov = optimize.curve_fit(lambda x, a, b: a * x + b, monthly.index.to_numpy(float), monthly.to_numpy())
f = interpolate.interp1d(monthly.index.to_numpy(float), monthly.to_numpy(), kind="linear")

print(f"RESULT: welch t={t.statistic:.6f} p={t.pvalue:.6f}")
print(f"RESULT: linregress slope={reg.slope:.6f} intercept={reg.intercept:.6f} r={reg.rvalue:.6f}")
print(f"RESULT: pearson={r:.6f} p={p:.6f} spearman={rho:.6f}")
print(f"RESULT: chi2={chi2:.6f} p={p_chi:.6f} dof={dof}")
print(f"RESULT: describe n={desc.nobs} mean={desc.mean:.6f} skew={desc.skewness:.6f}")
print(f"RESULT: trend a={params[0]:.4f} b={params[1]:.4f} mid-june={float(f(6.5)):.4f}")
print(f"RESULT: numpy agrees={np.isclose(reg.slope, np.polyfit(sales['units'], sales['revenue'], 1)[0])}")
