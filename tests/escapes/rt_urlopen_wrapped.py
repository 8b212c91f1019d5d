# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: socket.getaddrinfo (network denied by policy (capability not granted))
# expect-exception: urllib.error.URLError: <urlopen error blocked at runtime: socket.getaddrinfo (network denied by policy (capability not granted))>
# attempt: pandas fetches a URL the pre-check cannot fold; urllib wraps the refusal in URLError, which must still end the run as blocked
import pandas as pd

scheme = bytes([104, 116, 116, 112]).decode()  # "http", which the pre-check cannot fold
url = scheme + "://127.0.0.1:9/sales.csv"
print("ESCAPED: fetched", pd.read_csv(url))
