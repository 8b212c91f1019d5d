#!/usr/bin/env python3
"""Deterministic generator for data/sales.csv, Anvil's sample input.

    python3 data/gen_sales.py > data/sales.csv      # (re)generate
    python3 data/gen_sales.py --check data/sales.csv  # exit 1 if the file differs

Standard library only. The output depends on nothing but SEED and the tables
below: a seeded random.Random, integer arithmetic in cents, "\\n" line endings,
UTF-8 written as bytes, so it is byte-identical on every run and platform.
"""

import argparse
import csv
import datetime
import io
import random
import sys

SEED = 20240101
ROWS = 500
YEAR = 2024

REGIONS = ["North", "South", "East", "West", "Central"]
# product -> list price in cents; the sold price varies a little around it
PRODUCTS = {
    "Notebook": 450,
    "Pen Set": 1299,
    "Desk Lamp": 3450,
    "Keyboard": 4999,
    "Monitor Stand": 7425,
    "Office Chair": 18900,
}
# some regions sell more than others, so the per-region totals differ clearly
REGION_WEIGHTS = [30, 18, 24, 16, 12]


def cents(value):
    """Format an integer number of cents as a decimal with two places."""
    sign = "-" if value < 0 else ""
    whole, frac = divmod(abs(value), 100)
    return "%s%d.%02d" % (sign, whole, frac)


def rows():
    rng = random.Random(SEED)
    start = datetime.date(YEAR, 1, 1)
    days = (datetime.date(YEAR + 1, 1, 1) - start).days
    names = list(PRODUCTS)
    out = []
    for _ in range(ROWS):
        day = start + datetime.timedelta(days=rng.randrange(days))
        region = rng.choices(REGIONS, weights=REGION_WEIGHTS)[0]
        product = names[rng.randrange(len(names))]
        list_price = PRODUCTS[product]
        # cheap things sell in larger quantities
        max_units = 60 if list_price < 2000 else 12 if list_price < 10000 else 4
        units = rng.randint(1, max_units)
        # discount of 0-15% (most often none), never a fraction of a cent
        discount = rng.choice([0, 0, 0, 5, 10, 15])
        price = list_price * (100 - discount) // 100
        out.append((day.isoformat(), region, product, units, price, units * price))
    out.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
    return out


def render():
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["date", "region", "product", "units", "unit_price", "revenue"])
    for day, region, product, units, price, revenue in rows():
        # revenue is exactly units * unit_price; round(units * unit_price, 2)
        # on the floats gives the same value (asserted below).
        assert round(units * (price / 100), 2) == revenue / 100
        w.writerow([day, region, product, units, cents(price), cents(revenue)])
    return buf.getvalue().encode("utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", metavar="FILE",
                    help="compare FILE with what would be generated; exit 1 if it differs")
    args = ap.parse_args(argv)
    data = render()
    if args.check:
        try:
            with open(args.check, "rb") as f:
                have = f.read()
        except OSError as e:
            print("gen_sales: %s" % e, file=sys.stderr)
            return 2
        if have != data:
            print("gen_sales: %s differs from the generated data; "
                  "regenerate with: python3 data/gen_sales.py > %s"
                  % (args.check, args.check), file=sys.stderr)
            return 1
        return 0
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
