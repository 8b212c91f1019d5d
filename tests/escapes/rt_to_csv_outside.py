# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('./artifacts/../leak.csv', 'w') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: {rundir}/leak.csv
# attempt: pandas DataFrame.to_csv to a path outside artifacts/ built at run time (pandas' open is refused for the tool)
import pandas as pd

target = "/".join([".", "artifacts", "..", "leak.csv"])
pd.DataFrame({"region": ["north", "south"], "revenue": [1, 2]}).to_csv(target)
print("ESCAPED: wrote", target)
