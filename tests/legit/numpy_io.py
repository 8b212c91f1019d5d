# Legit tool: reading the CSV with numpy itself (genfromtxt with names, loadtxt with usecols),
# memory-mapped arrays under ./artifacts (np.memmap, np.load(mmap_mode='r')) and the mmap
# module over the input to count product names.
# Covers: np.genfromtxt('inputs/sales.csv', delimiter=',', names=True, dtype=None,
#   encoding='utf-8'), structured arrays, np.loadtxt(usecols=..., skiprows=1), np.memmap
#   create/flush/reopen, np.save then np.load(mmap_mode='r'), mmap.mmap of ./inputs/sales.csv
#   (read-only, ACCESS_READ) with find/count, np.unique with counts.
# Proof: RESULT lines equal the host run's; the .dat and .npy files have the host's bytes.
# inputs: sales.csv
import mmap

import numpy as np

table = np.genfromtxt("inputs/sales.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
units, revenue = np.loadtxt("./inputs/sales.csv", delimiter=",", skiprows=1, usecols=(3, 5), unpack=True)
assert np.array_equal(table["units"], units.astype(int))

products, counts = np.unique(table["product"], return_counts=True)
by_region = {str(r): round(float(table["revenue"][table["region"] == r].sum()), 2) for r in np.unique(table["region"])}

mm = np.memmap("artifacts/revenue.dat", dtype="float64", mode="w+", shape=revenue.shape)
mm[:] = revenue
mm.flush()
del mm
again = np.memmap("artifacts/revenue.dat", dtype="float64", mode="r", shape=revenue.shape)
np.save("artifacts/units.npy", units)
lazy = np.load("artifacts/units.npy", mmap_mode="r")

with open("inputs/sales.csv", "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
    first_chair = m.find(b"Office Chair")
    header_end = m.find(b"\n")
    chairs = 0
    pos = m.find(b",Office Chair,")
    while pos != -1:
        chairs += 1
        pos = m.find(b",Office Chair,", pos + 1)
    size = m.size()

print(f"RESULT: rows={len(table)} fields={list(table.dtype.names)}")
print(f"RESULT: products={dict(zip(products.tolist(), counts.tolist()))}")
print(f"RESULT: by region={by_region}")
print(f"RESULT: memmap sum={float(again.sum()):.2f} lazy units={int(lazy.sum())} mmap kind={type(lazy).__name__}")
print(f"RESULT: mmap size={size} header end={header_end} first chair at={first_chair} chairs={chairs}")
