# Legit tool: data-quality warnings raised with warnings.warn and handled with
# warnings.catch_warnings, including warnings pandas itself raises.
# Covers: a Warning subclass, warnings.warn with stacklevel, warnings.catch_warnings(record=
#   True) with simplefilter('always'), filterwarnings('ignore', category=...), turning a
#   warning into an error with simplefilter('error') inside catch_warnings, pandas'
#   SettingWithCopyWarning caught by category, warnings.showwarning-free output to stderr.
# Proof: RESULT lines (warnings recorded, their categories and messages) equal the host run's.
# inputs: sales.csv
import warnings

import pandas as pd


class DataQualityWarning(UserWarning):
    pass


def check_prices(df):
    cheap = df[df["unit_price"] < 5]
    if len(cheap):
        warnings.warn(f"{len(cheap)} sales below 5.00 (e.g. {cheap.iloc[0]['product']})", DataQualityWarning,
                      stacklevel=2)
    if df["units"].max() > 50:
        warnings.warn("very large orders present", DataQualityWarning, stacklevel=2)
    return len(cheap)


sales = pd.read_csv("inputs/sales.csv")

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    n_cheap = check_prices(sales)
    subset = sales[sales["region"] == "North"]
    subset["flag"] = subset["units"] > 10  # pandas: SettingWithCopyWarning
    warnings.warn("deprecated option used", DeprecationWarning)

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", category=DataQualityWarning)
    check_prices(sales)  # silenced

escalated = None
with warnings.catch_warnings():
    warnings.simplefilter("error", DataQualityWarning)
    try:
        check_prices(sales)
    except DataQualityWarning as exc:
        escalated = str(exc)

# Outside any catch_warnings: printed on stderr by the default machinery, and the tool goes on.
warnings.warn("shown on stderr once", RuntimeWarning)

print(f"RESULT: cheap={n_cheap} caught={len(caught)}")
for w in caught:
    print(f"RESULT: {w.category.__name__}: {str(w.message).splitlines()[0]}")
print(f"RESULT: escalated={escalated}")
