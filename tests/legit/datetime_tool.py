# Legit tool: date arithmetic on the sales dates with datetime, calendar and zoneinfo.
# Covers: datetime.strptime with '%Y-%m-%d' and '%Y/%m/%d', date.fromisoformat, timedelta
#   arithmetic, isocalendar weeks, weekday names, calendar.monthrange and month_name,
#   timezone-aware datetimes (timezone.utc, fixed offsets, zoneinfo from tzdata),
#   strftime formats, sorting and gaps between sale days.
# Proof: RESULT lines (day counts, longest gap, ISO weeks, converted times) equal the host
#   run's.
# inputs: sales.csv
import calendar
import csv
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

with open("inputs/sales.csv", newline="") as f:
    days = sorted({date.fromisoformat(r["date"]) for r in csv.DictReader(f)})

first, last = days[0], days[-1]
gaps = [(b - a, a, b) for a, b in zip(days, days[1:])]
longest, gap_start, gap_end = max(gaps)
weeks = Counter(d.isocalendar().week for d in days)
weekday_names = Counter(calendar.day_name[d.weekday()] for d in days)
slash = datetime.strptime("2024/01/05", "%Y/%m/%d").date()
iso = datetime.strptime("2024-02-29", "%Y-%m-%d")
end_of_feb = date(2024, 2, calendar.monthrange(2024, 2)[1])
closing = datetime.combine(last, time(17, 30), tzinfo=ZoneInfo("Europe/Berlin"))
closing_utc = closing.astimezone(timezone.utc)
closing_ny = closing.astimezone(ZoneInfo("America/New_York"))
fixed = datetime(2024, 6, 1, 12, tzinfo=timezone(timedelta(hours=5, minutes=30)))
quarters = Counter((d.month - 1) // 3 + 1 for d in days)
business_days = sum(1 for i in range((last - first).days + 1) if (first + timedelta(days=i)).weekday() < 5)

print(f"RESULT: sale days={len(days)} first={first} last={last} span={(last - first).days}")
print(f"RESULT: longest gap={longest.days} days from {gap_start:%d %b} to {gap_end:%d %b}")
print(f"RESULT: busiest iso week={weeks.most_common(1)[0]} weeks={len(weeks)}")
print(f"RESULT: weekdays={sorted(weekday_names.items())}")
print(f"RESULT: slash={slash} iso={iso:%A %d %B %Y} leap={calendar.isleap(2024)} end of feb={end_of_feb}")
print(f"RESULT: closing={closing.isoformat()} utc={closing_utc:%H:%M %Z} ny={closing_ny:%H:%M %Z}")
print(f"RESULT: fixed={fixed.isoformat()} utc={fixed.astimezone(timezone.utc):%Y-%m-%dT%H:%M}")
print(f"RESULT: quarters={sorted(quarters.items())} business days={business_days}")
print(f"RESULT: month names={[calendar.month_abbr[m] for m in sorted({d.month for d in days})]}")
