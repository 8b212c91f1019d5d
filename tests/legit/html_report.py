# Legit tool: a self-contained HTML report: charts rendered into memory (savefig to BytesIO)
# and embedded as base64, a pandas Styler table (rendered by jinja2), a jinja2 template,
# and the page's table read back with pd.read_html (lxml).
# Covers: fig.savefig(io.BytesIO(), format='png'), base64 data URIs, DataFrame.style with
#   format/highlight_max/set_caption and Styler.to_html (jinja2 compiles its templates:
#   library code, must not be refused), jinja2.Environment/Template.render with a loop and
#   a filter, html.escape, writing the page under ./artifacts, pd.read_html of it.
# Proof: RESULT lines (sizes of the embedded image, rows read back, headers) equal the host
#   run's; artifacts/report.html has the host's bytes (PNG bytes in it included: same
#   matplotlib, same fonts).
# inputs: sales.csv regions.csv
import base64
import io

import matplotlib

matplotlib.use("Agg")
import jinja2
import matplotlib.pyplot as plt
import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
regions = pd.read_csv("inputs/regions.csv")
table = (
    sales.groupby("region").agg(orders=("revenue", "size"), units=("units", "sum"), revenue=("revenue", "sum"))
    .join(regions.set_index("region")).reset_index()
)
table["attainment"] = table["revenue"] / table["target"]

fig, ax = plt.subplots(figsize=(6, 3), dpi=80)
ax.bar(table["region"], table["revenue"])
ax.set_title("Revenue by region")
buf = io.BytesIO()
fig.savefig(buf, format="png")
plt.close(fig)
png = buf.getvalue()
data_uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")

styled = (
    table[["region", "manager", "orders", "revenue", "attainment"]].style
    .format({"revenue": "{:,.2f}", "attainment": "{:.1%}"})
    .highlight_max(subset=["revenue"], color="#d4edda")
    .set_caption("Regions, 2024")
    .hide(axis="index")
)
styled_html = styled.to_html(table_uuid="regions")

env = jinja2.Environment(autoescape=True)
env.filters["money"] = lambda v: f"{v:,.2f}"
page = env.from_string(
    """<!doctype html>
<html><head><meta charset="utf-8"><title>{{ title }}</title></head>
<body>
<h1>{{ title }}</h1>
<img alt="chart" src="{{ chart }}">
{{ styled | safe }}
<ul>{% for r in rows %}<li>{{ r.region }}: {{ r.revenue | money }} ({{ r.manager }})</li>{% endfor %}</ul>
<table id="plain"><thead><tr><th>region</th><th>orders</th></tr></thead><tbody>
{% for r in rows %}<tr><td>{{ r.region }}</td><td>{{ r.orders }}</td></tr>
{% endfor %}</tbody></table>
</body></html>
"""
).render(title="Sales <report> & targets", chart=data_uri, styled=styled_html, rows=table.to_dict(orient="records"))
with open("artifacts/report.html", "w", encoding="utf-8") as f:
    f.write(page)

tables = pd.read_html("artifacts/report.html", attrs={"id": "plain"})
all_tables = pd.read_html("artifacts/report.html")

print(f"RESULT: png magic={png[:4]!r} embedded={len(data_uri) > 1000}")
print(f"RESULT: styled has caption={'Regions, 2024' in styled_html} highlighted={styled_html.count('#d4edda') > 0}")
print(f"RESULT: escaped title={'Sales &lt;report&gt; &amp; targets' in page}")
print(f"RESULT: plain table={tables[0].to_dict(orient='list')}")
print(f"RESULT: tables in page={len(all_tables)} first columns={list(all_tables[0].columns)}")
