# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: read path '/etc/passwd' outside ALLOWED_READ_PATHS (./inputs, ./artifacts)
# attempt: pd.read_csv of a file:// URL: the path it names, judged as a path
import pandas as pd

print("ESCAPED: read", pd.read_csv("file:///etc/passwd"))
