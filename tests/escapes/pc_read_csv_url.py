# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: open URL 'http://127.0.0.1:9/sales.csv' (network denied by policy (capability not granted))
# attempt: pd.read_csv of a URL literal: a network attempt, not a path outside the read roots
import pandas as pd

print("ESCAPED: fetched", pd.read_csv("http://127.0.0.1:9/sales.csv"))
