# Legit tool: monthly revenue from dated sales: datetime parsing and resampling by month.
# Covers: pd.read_csv(parse_dates=...), pd.to_datetime with an explicit format, set_index,
#   resample('M'), dt accessor (month name, quarter, weekday), period grouping, to_csv.
# Proof: RESULT lines (12 months, best and worst month, quarter totals) equal the host run's;
#   artifacts/monthly_revenue.csv has the same bytes.
# inputs: sales.csv
import pandas as pd

sales = pd.read_csv("./inputs/sales.csv", parse_dates=["date"])
assert str(sales["date"].dtype) == "datetime64[ns]"
# The same dates, parsed again from text with an explicit format (as a tool might do for
# a column read as strings).
again = pd.to_datetime(sales["date"].dt.strftime("%d/%m/%Y"), format="%d/%m/%Y")
assert (again == sales["date"]).all()

monthly = sales.set_index("date").resample("M")[["units", "revenue"]].sum()
monthly["revenue"] = monthly["revenue"].round(2)
monthly.index = monthly.index.strftime("%Y-%m")
monthly.to_csv("./artifacts/monthly_revenue.csv")

quarters = sales.groupby(sales["date"].dt.to_period("Q"))["revenue"].sum().round(2)
weekdays = sales["date"].dt.day_name().value_counts()

print(f"RESULT: months={len(monthly)} first={monthly.index[0]} last={monthly.index[-1]}")
print(f"RESULT: best month={monthly['revenue'].idxmax()} {monthly['revenue'].max():.2f}")
print(f"RESULT: worst month={monthly['revenue'].idxmin()} {monthly['revenue'].min():.2f}")
for q, value in quarters.items():
    print(f"RESULT: {q}={value:.2f}")
print(f"RESULT: busiest weekday={weekdays.idxmax()} ({weekdays.max()} sales)")
print(f"RESULT: span days={(sales['date'].max() - sales['date'].min()).days}")
