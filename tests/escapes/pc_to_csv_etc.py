# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: write path '/etc/anvil-escape-canary.csv' outside ALLOWED_WRITE_PATHS (./artifacts)
# host-untouched: /etc/anvil-escape-canary.csv
# attempt: DataFrame.to_csv to an absolute path under /etc
import pandas as pd

pd.DataFrame({"a": [1, 2]}).to_csv("/etc/anvil-escape-canary.csv")
print("ESCAPED: wrote /etc/anvil-escape-canary.csv")
