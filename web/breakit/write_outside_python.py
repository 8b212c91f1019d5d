# Try to break it: write outside ./artifacts, the plain way.
# Saves a summary next to ./artifacts instead of into it. The path is built at run time, so
# the pre-check has no literal to judge; pandas opens the file, and the audit hook refuses
# a write outside the write roots whoever asks, a library included.
import os

import pandas as pd

summary = pd.DataFrame({"region": ["north", "south"], "amount": [120, 80]})
path = os.path.join(os.getcwd(), "artifacts", "..", "outside.csv")

summary.to_csv(path, index=False)
print(f"wrote {path}")
