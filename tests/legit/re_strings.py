# Legit tool: text handling with strings that contain slashes but are not paths: dates like
# '2024/01/05', URLs, "a/b" dict keys and a df['a/b'] column, regexes and f-strings.
# Covers: re.compile/match/findall/sub/split with groups and named groups, re.VERBOSE,
#   str.split('/'), a dict keyed "a/b", a DataFrame column named 'a/b' and 'units/order',
#   urllib.parse (no network), string formatting specs in f-strings (!r, :>10, :,.2f, =).
# Proof: RESULT lines (parsed dates, URL parts, ratios) equal the host run's;
#   artifacts/ratios.csv (with its 'a/b' style header) has the host's bytes.
# inputs: sales.csv
import re
from urllib.parse import urljoin, urlparse

import pandas as pd

DATE = re.compile(r"^(?P<y>\d{4})[/-](?P<m>\d{2})[/-](?P<d>\d{2})$")
slashed = ["2024/01/05", "2024/12/31", "2024-06-15", "05/01/2024"]
parsed = []
for s in slashed:
    m = DATE.match(s)
    parsed.append(f"{m['y']}.{m['m']}.{m['d']}" if m else f"unparsed:{s}")

docs = "https://example.com/docs"
url = urlparse(urljoin(docs + "/", "api/v2/items?id=7#top"))
links = re.findall(r"https?://[^\s/]+(?:/[\w.-]+)*", f"see {docs} and http://example.org/a/b.html for /etc/hosts")

ratios = {"a/b": 3 / 4, "units/order": None, "revenue/unit": None}
sales = pd.read_csv("inputs/sales.csv")
sales["a/b"] = sales["units"] / sales["unit_price"]
sales["units/order"] = sales["units"]
ratios["units/order"] = round(sales["units/order"].mean(), 4)
ratios["revenue/unit"] = round(sales["revenue"].sum() / sales["units"].sum(), 4)
sales[["date", "a/b", "units/order"]].head(20).round(6).to_csv("artifacts/ratios.csv", index=False)

pattern = re.compile(
    r"""(?P<product>[A-Z][a-z]+(?:\ [A-Z][a-z]+)?)   # product name, one or two words
        \s*/\s*(?P<region>North|South|East|West|Central)""",
    re.VERBOSE,
)
text = "Desk Lamp / North, Pen Set/East, Keyboard /  Central, nothing / Nowhere"
pairs = [(m.group("product"), m.group("region")) for m in pattern.finditer(text)]
cleaned = re.sub(r"\s*/\s*", "/", text)
path_like = "reports/2024/q1/summary.txt".split("/")
total = sales["revenue"].sum()

print(f"RESULT: parsed={parsed}")
print(f"RESULT: url host={url.netloc} path={url.path} query={url.query} fragment={url.fragment}")
print(f"RESULT: links={links}")
print(f"RESULT: ratios={ratios}")
print(f"RESULT: a/b mean={sales['a/b'].mean():.6f} max={sales['a/b'].max():.6f}")
print(f"RESULT: pairs={pairs}")
print(f"RESULT: cleaned={cleaned!r}")
print(f"RESULT: parts={path_like} depth={len(path_like)}")
print(f"RESULT: {total=:,.2f} {'right':>8}|{'left':<6}|{42:05d}|{0.1234:.1%}")
