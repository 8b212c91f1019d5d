# Legit tool: charts drawn through pandas' plotting API (DataFrame.plot, Series.plot.pie,
# DataFrame.hist, boxplot), saved with ax.figure.savefig and plt.savefig, plus an image
# written with plt.imsave, read back with plt.imread, and a thumbnail made with Pillow.
# Covers: df.plot(kind='bar', stacked=True), df.plot.line(subplots=True, layout=...),
#   Series.plot.pie(autopct=...), df.hist(bins=...), df.boxplot(by=...), ax.figure.savefig,
#   plt.savefig of the current figure, plt.imsave of a normalised array, plt.imread,
#   PIL.Image.open/thumbnail/save under ./artifacts.
# Proof: RESULT lines (bars drawn, axes made, image shapes) equal the host run's; the PNGs are
#   PNGs within 1% of the host's size.
# inputs: sales.csv
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from PIL import Image

sales = pd.read_csv("inputs/sales.csv", parse_dates=["date"])
sales["month"] = sales["date"].dt.month
units = sales.pivot_table(index="month", columns="region", values="units", aggfunc="sum", fill_value=0)

ax = units.plot(kind="bar", stacked=True, figsize=(8, 4), title="Units per month and region")
ax.set_xlabel("month")
ax.figure.savefig("artifacts/pandas_bar.png", dpi=80)
bars = len(ax.patches)
plt.close(ax.figure)

axes = units.plot.line(subplots=True, layout=(3, 2), figsize=(8, 7), sharex=True, legend=True)
plt.savefig("artifacts/pandas_lines.png", dpi=70)
n_axes = axes.size
plt.close("all")

share = sales.groupby("product")["revenue"].sum()
ax = share.plot.pie(autopct="%.0f%%", figsize=(5, 5), ylabel="")
plt.savefig("artifacts/pandas_pie.png", dpi=70)
plt.close("all")

hist_axes = sales[["units", "unit_price", "revenue"]].hist(bins=15, figsize=(9, 3), layout=(1, 3))
plt.savefig("artifacts/pandas_hist.png", dpi=70)
plt.close("all")

box_ax = sales.boxplot(column="revenue", by="region", figsize=(6, 4))
box_ax.figure.savefig("artifacts/pandas_box.png", dpi=70)
plt.close("all")

heat = units.to_numpy(dtype=float)
plt.imsave("artifacts/heat.png", heat / heat.max(), cmap="magma")
back = plt.imread("artifacts/heat.png")
with Image.open("artifacts/pandas_bar.png") as im:
    size = im.size
    im.thumbnail((160, 160))
    im.save("artifacts/pandas_bar_thumb.png")
    thumb = im.size

print(f"RESULT: bars={bars} subplot axes={n_axes} hist axes={hist_axes.size}")
print(f"RESULT: pie labels={[t.get_text() for t in ax.texts if '%' in t.get_text()]}")
print(f"RESULT: heat shape={heat.shape} image shape={back.shape} dtype={back.dtype}")
print(f"RESULT: bar png={size} thumb={thumb}")
