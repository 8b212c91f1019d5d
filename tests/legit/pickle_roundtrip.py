# Legit tool: caching intermediate results with pickle: the tool's own dict, list of tuples,
# a dataclass and an Enum defined in the tool, and a pandas DataFrame (to_pickle/read_pickle),
# each written under ./artifacts and read back.
# Covers: pickle.dumps/loads (protocols 2, 4, 5 and the default), pickle.dump/load through
#   files under ./artifacts, a dataclass and an Enum of __main__ round-tripped (find_class of
#   the tool's own classes, numpy's and pandas' reconstructors, datetime, Decimal, set and
#   frozenset), DataFrame.to_pickle and pd.read_pickle, np.save/np.load with allow_pickle of an
#   object array, copy.deepcopy of the same objects.
# Proof: RESULT lines (objects equal after each round trip, what they hold) equal the host
#   run's; the .pkl and .npy files have the host's bytes, but state.pkl, which holds sets
#   of strings: their order follows string hashes, randomized in every process.
# inputs: sales.csv
# varying artifacts: state.pkl
import copy
import datetime as dt
import enum
import pickle
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@dataclass
class RegionTotal:
    region: str
    revenue: Decimal
    level: Level
    best_day: dt.date
    products: set = field(default_factory=set)


sales = pd.read_csv("inputs/sales.csv", parse_dates=["date"])
totals = []
for region, g in sales.groupby("region"):
    revenue = Decimal(str(round(g["revenue"].sum(), 2)))
    best = g.groupby("date")["revenue"].sum().idxmax().date()
    totals.append(RegionTotal(region, revenue, Level.HIGH if revenue > 30000 else Level.LOW, best, set(g["product"])))

state = {
    "version": 1,
    "regions": totals,
    "pairs": [(t.region, float(t.revenue)) for t in totals],
    "tags": frozenset({"2024", "sales"}),
    "created": dt.datetime(2024, 12, 31, 23, 59),
}

results = {}
for proto in (2, 4, 5, pickle.DEFAULT_PROTOCOL):
    results[proto] = pickle.loads(pickle.dumps(state, protocol=proto)) == state

with open("artifacts/state.pkl", "wb") as f:
    pickle.dump(state, f, protocol=4)
with open("artifacts/state.pkl", "rb") as f:
    loaded = pickle.load(f)

monthly = sales.set_index("date").resample("MS")["revenue"].sum().round(2).to_frame()
monthly["region_count"] = sales.groupby(sales["date"].dt.to_period("M"))["region"].nunique().values
monthly.to_pickle("artifacts/monthly.pkl", protocol=4)
frame_back = pd.read_pickle("artifacts/monthly.pkl")

objects = np.empty(len(totals), dtype=object)
objects[:] = [(t.region, t.level.name) for t in totals]
np.save("artifacts/objects.npy", objects, allow_pickle=True)
objects_back = np.load("artifacts/objects.npy", allow_pickle=True)

print(f"RESULT: protocols equal={results}")
first = loaded["regions"][0]
print(f"RESULT: file equal={loaded == state} first={first.region} {first.revenue!r} {first.level} {first.best_day!r} {sorted(first.products)}")
print(f"RESULT: levels={[(t.region, t.level.name) for t in loaded['regions']]} same enum={loaded['regions'][0].level is Level.LOW or loaded['regions'][0].level is Level.HIGH}")
print(f"RESULT: frame equal={frame_back.equals(monthly)} index={frame_back.index[0]:%Y-%m} sum={frame_back['revenue'].sum():.2f}")
print(f"RESULT: objects={objects_back.tolist()}")
print(f"RESULT: deepcopy equal={copy.deepcopy(state) == state}")
