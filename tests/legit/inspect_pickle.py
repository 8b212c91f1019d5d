# Legit tool: self-describing report code: inspect.signature and inspect.getsource of the
# tool's own function, and pickle.dumps/loads (and dump/load to a file under ./artifacts)
# of the tool's own data: a dict, a list of tuples and a dataclass instance.
# Covers: inspect.signature (parameters, defaults, annotations, bind), inspect.getsource of
#   a function defined in the tool, inspect.isfunction/isclass/getdoc/getmembers on the
#   tool's class, pickle with protocol 4 and 5, a dataclass of __main__ round-tripped,
#   copy.deepcopy, shelve-free persistence to artifacts/state.pkl.
# Proof: RESULT lines (signature text, source line count and first line, round-tripped
#   objects) equal the host run's; artifacts/state.pkl has the host's bytes.
# inputs: sales.csv
import copy
import inspect
import pickle
from dataclasses import dataclass, field

import pandas as pd


@dataclass
class Snapshot:
    """Totals of one region at the end of the year."""
    region: str
    revenue: float
    products: list = field(default_factory=list)


def summarize(df: pd.DataFrame, by: str = "region", top: int = 3, *, digits: int = 2) -> dict:
    """Revenue per group, largest first."""
    totals = df.groupby(by)["revenue"].sum().round(digits)
    return totals.nlargest(top).to_dict()


sales = pd.read_csv("inputs/sales.csv")
sig = inspect.signature(summarize)
bound = sig.bind(sales, top=2)
bound.apply_defaults()
source = inspect.getsource(summarize)
result = summarize(*bound.args, **bound.kwargs)

snapshots = [
    Snapshot(region, round(float(g["revenue"].sum()), 2), sorted(g["product"].unique()))
    for region, g in sales.groupby("region")
]
state = {"totals": result, "pairs": [(s.region, s.revenue) for s in snapshots], "snapshots": snapshots}
blob = pickle.dumps(state, protocol=4)
back = pickle.loads(blob)
blob5 = pickle.dumps(snapshots[0], protocol=5)
with open("artifacts/state.pkl", "wb") as f:
    pickle.dump(state, f, protocol=4)
with open("artifacts/state.pkl", "rb") as f:
    from_file = pickle.load(f)
clone = copy.deepcopy(snapshots)
clone[0].products.append("Extra")

members = [name for name, _ in inspect.getmembers(Snapshot) if not name.startswith("_")]
print(f"RESULT: signature={sig}")
print(f"RESULT: params={[(p.name, p.kind.name, p.default if p.default is not inspect.Parameter.empty else '-') for p in sig.parameters.values()]}")
print(f"RESULT: return={sig.return_annotation.__name__} bound={sorted(bound.arguments)[1:]}")
print(f"RESULT: source lines={len(source.splitlines())} first={source.splitlines()[0]!r}")
print(f"RESULT: doc={inspect.getdoc(summarize)!r} isfunction={inspect.isfunction(summarize)} isclass={inspect.isclass(Snapshot)}")
print(f"RESULT: result={result}")
print(f"RESULT: round trip equal={back == state} file equal={from_file == state} dataclass={pickle.loads(blob5)}")
print(f"RESULT: deepcopy independent={snapshots[0].products != clone[0].products} members={members} pickle size={len(blob)}")
