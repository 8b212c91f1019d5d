# Legit tool: per-product totals with the csv module only (no pandas), reading
# ./inputs/sales.csv and writing a report CSV under ./artifacts.
# Covers: open(..., newline='') for reading, csv.DictReader, csv.Sniffer on the header,
#   type conversion with int/float, csv.DictWriter with QUOTE_NONNUMERIC, csv.writer with a
#   custom dialect (';'), reading the written file back with csv.reader.
# Proof: RESULT lines (rows, per-product units and revenue, header sniffed) equal the host
#   run's; artifacts/product_totals.csv and artifacts/product_totals_semicolon.csv have the
#   host's bytes.
# inputs: sales.csv
import csv

totals = {}
rows = 0
with open("./inputs/sales.csv", newline="", encoding="utf-8") as f:
    sample = f.read(1024)
    f.seek(0)
    has_header = csv.Sniffer().has_header(sample)
    dialect = csv.Sniffer().sniff(sample)
    for row in csv.DictReader(f, dialect=dialect):
        rows += 1
        t = totals.setdefault(row["product"], {"product": row["product"], "orders": 0, "units": 0, "revenue": 0.0})
        t["orders"] += 1
        t["units"] += int(row["units"])
        t["revenue"] += float(row["revenue"])

ordered = sorted(totals.values(), key=lambda t: -t["revenue"])
with open("./artifacts/product_totals.csv", "w", newline="", encoding="utf-8") as out:
    w = csv.DictWriter(out, fieldnames=["product", "orders", "units", "revenue"], quoting=csv.QUOTE_NONNUMERIC)
    w.writeheader()
    for t in ordered:
        w.writerow({**t, "revenue": round(t["revenue"], 2)})

csv.register_dialect("semicolon", delimiter=";", lineterminator="\n")
with open("artifacts/product_totals_semicolon.csv", "w", newline="") as out:
    w = csv.writer(out, dialect="semicolon")
    w.writerow(["product", "units"])
    w.writerows((t["product"], t["units"]) for t in ordered)

with open("artifacts/product_totals_semicolon.csv", newline="") as back:
    read_back = list(csv.reader(back, delimiter=";"))

print(f"RESULT: rows={rows} header={has_header} delimiter={dialect.delimiter!r}")
for t in ordered:
    print(f"RESULT: {t['product']} orders={t['orders']} units={t['units']} revenue={t['revenue']:.2f}")
print(f"RESULT: read back {len(read_back) - 1} rows, first={read_back[1]}")
