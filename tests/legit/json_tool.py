# Legit tool: a JSON summary of the sales (nested dicts and lists), written under
# ./artifacts, read back and queried; JSON Lines output as well.
# Covers: json.dump with indent/sort_keys/ensure_ascii, json.load, json.dumps/loads with a
#   custom default= for dates and Decimals and an object_hook, JSON Lines writing and reading,
#   pandas DataFrame.to_json(orient='records') and pd.read_json of it.
# Proof: RESULT lines (keys, totals read back, record count) equal the host run's;
#   artifacts/summary.json, artifacts/orders.jsonl and artifacts/records.json have the host's
#   bytes.
# inputs: sales.csv
import datetime as dt
import json
from decimal import Decimal

import pandas as pd

sales = pd.read_csv("inputs/sales.csv")

summary = {
    "source": "inputs/sales.csv",
    "generated_for": dt.date(2024, 12, 31),
    "rows": len(sales),
    "total_revenue": Decimal(str(round(sales["revenue"].sum(), 2))),
    "regions": {
        region: {"orders": int(len(g)), "units": int(g["units"].sum()),
                 "top_product": g.groupby("product")["revenue"].sum().idxmax()}
        for region, g in sales.groupby("region")
    },
    "products": sorted(sales["product"].unique().tolist()),
}


def encode(obj):
    if isinstance(obj, (dt.date, dt.datetime)):
        return obj.isoformat()
    if isinstance(obj, Decimal):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


with open("artifacts/summary.json", "w", encoding="utf-8") as f:
    json.dump(summary, f, indent=2, sort_keys=True, default=encode)
    f.write("\n")

with open("artifacts/summary.json", encoding="utf-8") as f:
    loaded = json.load(f, parse_float=Decimal, object_hook=lambda d: {k: v for k, v in d.items()})

with open("artifacts/orders.jsonl", "w", encoding="utf-8") as f:
    for rec in sales.head(25).to_dict(orient="records"):
        f.write(json.dumps(rec, separators=(",", ":")) + "\n")
with open("artifacts/orders.jsonl", encoding="utf-8") as f:
    lines = [json.loads(line) for line in f]

sales.tail(10).to_json("artifacts/records.json", orient="records", indent=1)
records = pd.read_json("artifacts/records.json", orient="records")

text = json.dumps({"path": "a/b/c", "url": "https://example.com/docs", "unicode": "Chloé"}, ensure_ascii=True)
print(f"RESULT: keys={sorted(loaded)}")
print(f"RESULT: total={loaded['total_revenue']} rows={loaded['rows']} date={loaded['generated_for']}")
print(f"RESULT: North={loaded['regions']['North']}")
print(f"RESULT: jsonl={len(lines)} units={sum(r['units'] for r in lines)} records={len(records)}")
print(f"RESULT: escaped={text}")
