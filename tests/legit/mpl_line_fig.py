# Legit tool: monthly revenue line chart per region, object-oriented matplotlib, saved with
# fig.savefig(Path('artifacts') / 'x.png').
# Covers: plt.subplots, ax.plot with markers per region, legend, grid, date formatting,
#   fig.savefig with a pathlib Path built with '/', fig.savefig of a second figure with a
#   str of a Path, Path.exists and stat of what was saved.
# Proof: RESULT lines (lines drawn, points per line, y range) equal the host run's; the PNGs
#   are PNGs within 1% of the host's size.
# inputs: sales.csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import pandas as pd

out = Path("artifacts")
sales = pd.read_csv(Path("inputs") / "sales.csv", parse_dates=["date"])
monthly = (
    sales.set_index("date").groupby("region")["revenue"].resample("MS").sum().unstack(level=0)
)

fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
for region in monthly.columns:
    ax.plot(monthly.index, monthly[region], marker="o", linewidth=1.5, label=region)
ax.xaxis.set_major_formatter(mdates.DateFormatter("%b"))
ax.set_title("Monthly revenue per region, 2024")
ax.set_ylabel("Revenue")
ax.grid(True, alpha=0.3)
ax.legend(ncol=5, fontsize="small", loc="upper center")
fig.tight_layout()
line_png = out / "monthly_lines.png"
fig.savefig(line_png)

fig2, ax2 = plt.subplots(figsize=(8, 3), dpi=100)
cumulative = monthly.sum(axis=1).cumsum()
ax2.fill_between(cumulative.index, cumulative.values, alpha=0.4)
ax2.plot(cumulative.index, cumulative.values)
ax2.set_title("Cumulative revenue")
fig2.savefig(str(out / "cumulative.png"), bbox_inches="tight")
plt.close(fig)
plt.close(fig2)

ymin, ymax = ax.get_ylim()
print(f"RESULT: lines={len(ax.get_lines())} points={[len(l.get_xdata()) for l in ax.get_lines()]}")
print(f"RESULT: labels={[t.get_text() for t in ax.get_legend().get_texts()]}")
print(f"RESULT: saved={line_png.exists()} {(out / 'cumulative.png').is_file()} nonempty={line_png.stat().st_size > 1000}")
print(f"RESULT: year total={cumulative.iloc[-1]:.2f}")
