# Legit tool: human-readable reports: a Markdown table, an HTML page with string.Template, a
# fixed-width text report with textwrap, an INI settings file with configparser, TOML parsed
# with tomllib, and a DataFrame.to_string report.
# Covers: str.format/format_map and f-string alignment, string.Template.safe_substitute,
#   textwrap.fill/dedent/indent/shorten, html.escape, configparser write and read under
#   ./artifacts, tomllib.loads of an inline document, io.StringIO, DataFrame.to_string(buf=
#   path), Series.to_string, pprint.pformat.
# Proof: RESULT lines equal the host run's; artifacts/report.md, report.html, report.txt,
#   settings.ini and frame.txt have the host's bytes.
# inputs: sales.csv regions.csv
import configparser
import html
import io
import pprint
import string
import textwrap
import tomllib

import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
regions = pd.read_csv("inputs/regions.csv").set_index("region")
totals = sales.groupby("region")["revenue"].sum().round(2).sort_values(ascending=False)

settings = tomllib.loads(textwrap.dedent("""
    [report]
    title = "Sales <2024> & targets"
    currency = "EUR"
    width = 60
    [report.thresholds]
    good = 1.0
    warn = 0.95
"""))["report"]

md = io.StringIO()
md.write(f"# {settings['title']}\n\n| Region | Manager | Revenue | vs target |\n|---|---|---:|---:|\n")
for region, revenue in totals.items():
    ratio = revenue / regions.loc[region, "target"]
    md.write("| {r} | {m} | {v:,.2f} | {p:.1%} |\n".format(r=region, m=regions.loc[region, "manager"], v=revenue, p=ratio))
with open("artifacts/report.md", "w", encoding="utf-8") as f:
    f.write(md.getvalue())

page = string.Template("<html><head><title>$title</title></head><body><h1>$title</h1>$table<p>$missing</p></body></html>\n")
rows = "".join(f"<tr><td>{html.escape(r)}</td><td>{v:,.2f}</td></tr>" for r, v in totals.items())
with open("artifacts/report.html", "w", encoding="utf-8") as f:
    f.write(page.safe_substitute(title=html.escape(settings["title"]), table=f"<table>{rows}</table>"))

width = settings["width"]
intro = ("This report lists the revenue of each region in 2024 against the target its manager agreed, "
         "with the share of the target reached; regions below the warning threshold are flagged.")
lines = [textwrap.fill(intro, width=width), ""]
for region, revenue in totals.items():
    flag = "" if revenue / regions.loc[region, "target"] >= settings["thresholds"]["warn"] else "  <- below"
    lines.append(f"{region:<10}{revenue:>15,.2f} {settings['currency']}{flag}")
text = "\n".join(lines) + "\n"
with open("artifacts/report.txt", "w") as f:
    f.write(text)

cfg = configparser.ConfigParser()
cfg["report"] = {"title": settings["title"], "width": str(width), "output": "artifacts/report.txt"}
cfg["paths"] = {"input": "./inputs/sales.csv", "url": "https://example.com/docs"}
with open("artifacts/settings.ini", "w") as f:
    cfg.write(f)
cfg2 = configparser.ConfigParser()
cfg2.read("artifacts/settings.ini")

sales.groupby(["region", "product"])["units"].sum().unstack().to_string("artifacts/frame.txt")

print(f"RESULT: title={settings['title']} thresholds={settings['thresholds']}")
print(f"RESULT: md lines={md.getvalue().count(chr(10))} html escaped={'&lt;2024&gt;' in page.safe_substitute(title=html.escape(settings['title']))}")
print(f"RESULT: text lines={text.count(chr(10))} flagged={text.count('<- below')}")
print(f"RESULT: ini sections={cfg2.sections()} width={cfg2.getint('report', 'width')} input={cfg2['paths']['input']}")
print(f"RESULT: shortened={textwrap.shorten(intro, width=40)!r}")
quoted = textwrap.indent("a\nb", "> ")
print(f"RESULT: indented={quoted!r}")
print(f"RESULT: pprint={pprint.pformat(totals.to_dict(), width=200, sort_dicts=True)}")
