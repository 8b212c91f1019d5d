# Legit tool: smoothed daily revenue with rolling windows and an exponential average.
# Covers: daily reindexing with asfreq, rolling(7).mean(), rolling('30D').sum() on a
#   DatetimeIndex, rolling().std(), expanding().max(), ewm(span=14), shift and pct_change.
# Proof: RESULT lines (peak 7-day average, its date, 30-day sums) equal the host run's;
#   artifacts/daily_rolling.csv has the same bytes.
# inputs: sales.csv
import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
sales["date"] = pd.to_datetime(sales["date"], format="%Y-%m-%d")

daily = sales.groupby("date")["revenue"].sum().asfreq("D", fill_value=0.0).to_frame("revenue")
daily["avg7"] = daily["revenue"].rolling(window=7, min_periods=7).mean()
daily["sum30"] = daily["revenue"].rolling("30D").sum()
daily["std7"] = daily["revenue"].rolling(7).std()
daily["running_max"] = daily["revenue"].expanding().max()
daily["ewm14"] = daily["revenue"].ewm(span=14, adjust=False).mean()
daily["week_change"] = daily["avg7"].pct_change(periods=7)
daily.round(4).to_csv("artifacts/daily_rolling.csv", date_format="%Y-%m-%d")

peak = daily["avg7"].idxmax()
print(f"RESULT: days={len(daily)} zero days={int((daily['revenue'] == 0).sum())}")
print(f"RESULT: peak avg7={daily['avg7'].max():.2f} on {peak:%Y-%m-%d}")
print(f"RESULT: max sum30={daily['sum30'].max():.2f} last sum30={daily['sum30'].iloc[-1]:.2f}")
print(f"RESULT: last ewm14={daily['ewm14'].iloc[-1]:.4f} mean std7={daily['std7'].mean():.4f}")
print(f"RESULT: running max={daily['running_max'].iloc[-1]:.2f}")
