# Legit tool: the plainest pickle use: pickle.dumps/loads of the tool's own dict and of a
# dataclass instance, pickle.dump/load through a file under ./artifacts, and a pandas
# DataFrame cached with to_pickle/read_pickle.
# Covers: pickle of dict/list/tuple/str/float/int, of a dataclass defined in the tool
#   (find_class('__main__', 'Summary')), DataFrame.to_pickle and pd.read_pickle (pandas'
#   and numpy's reconstructors).
# Proof: RESULT lines (equality after each round trip) equal the host run's; artifacts
#   summary.pkl and frame.pkl have the host's bytes.
# inputs: sales.csv
import pickle
from dataclasses import dataclass

import pandas as pd


@dataclass
class Summary:
    region: str
    orders: int
    revenue: float


sales = pd.read_csv("inputs/sales.csv")
by_region = sales.groupby("region").agg(orders=("revenue", "size"), revenue=("revenue", "sum")).round(2)
data = {"rows": len(sales), "regions": list(by_region.index), "totals": by_region["revenue"].to_dict()}
summaries = [Summary(r, int(row.orders), float(row.revenue)) for r, row in by_region.iterrows()]

data_back = pickle.loads(pickle.dumps(data))
summary_back = pickle.loads(pickle.dumps(summaries[0]))
with open("artifacts/summary.pkl", "wb") as f:
    pickle.dump({"data": data, "summaries": summaries}, f, protocol=4)
with open("artifacts/summary.pkl", "rb") as f:
    from_file = pickle.load(f)

by_region.to_pickle("artifacts/frame.pkl", protocol=4)
frame_back = pd.read_pickle("artifacts/frame.pkl")

print(f"RESULT: dict equal={data_back == data} rows={data_back['rows']}")
print(f"RESULT: dataclass equal={summary_back == summaries[0]} value={summary_back}")
print(f"RESULT: file equal={from_file == {'data': data, 'summaries': summaries}} n={len(from_file['summaries'])}")
print(f"RESULT: frame equal={frame_back.equals(by_region)} total={frame_back['revenue'].sum():.2f}")
