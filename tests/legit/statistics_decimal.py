# Legit tool: exact money arithmetic with decimal and fractions, and descriptive statistics
# with the statistics module, over ./inputs/sales.csv read with csv.
# Covers: Decimal with a local context (getcontext, localcontext, ROUND_HALF_EVEN and
#   ROUND_HALF_UP), quantize, Fraction, statistics.mean/fmean/median/median_grouped/mode/
#   multimode/stdev/pvariance/quantiles/correlation/linear_regression (3.10+), math.fsum.
# Proof: RESULT lines (exact total equals 168947.33, statistics) equal the host run's.
# inputs: sales.csv
import csv
import math
import statistics
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, getcontext, localcontext
from fractions import Fraction

getcontext().prec = 28
with open("inputs/sales.csv", newline="") as f:
    rows = list(csv.DictReader(f))

revenue = [Decimal(r["revenue"]) for r in rows]
total = sum(revenue, Decimal("0"))
exact = all(Decimal(r["units"]) * Decimal(r["unit_price"]) == Decimal(r["revenue"]) for r in rows)
vat = (total * Decimal("0.19")).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
with localcontext() as ctx:
    ctx.rounding = ROUND_HALF_EVEN
    ctx.prec = 6
    rounded = +total
avg = (total / len(revenue)).quantize(Decimal("0.0001"))
share = Fraction(sum(int(r["units"]) for r in rows if r["region"] == "North"), sum(int(r["units"]) for r in rows))

floats = [float(r["revenue"]) for r in rows]
units = [int(r["units"]) for r in rows]
prices = [float(r["unit_price"]) for r in rows]
q = statistics.quantiles(floats, n=4)
slope, intercept = statistics.linear_regression(units, floats)

print(f"RESULT: total={total} exact={exact} vat={vat} rounded={rounded} avg={avg}")
print(f"RESULT: fsum={math.fsum(floats):.2f} float sum differs={sum(floats) != float(total)}")
print(f"RESULT: north share={share} ({float(share):.4%})")
print(f"RESULT: mean={statistics.mean(floats):.6f} fmean={statistics.fmean(floats):.6f} median={statistics.median(floats)}")
print(f"RESULT: median_grouped={statistics.median_grouped(units)} mode={statistics.mode(units)} multimode={statistics.multimode(units)}")
print(f"RESULT: stdev={statistics.stdev(floats):.6f} pvariance={statistics.pvariance(floats):.4f}")
print(f"RESULT: quartiles={[round(x, 2) for x in q]}")
print(f"RESULT: corr(units,price)={statistics.correlation(units, prices):.6f} slope={slope:.4f} intercept={intercept:.4f}")
