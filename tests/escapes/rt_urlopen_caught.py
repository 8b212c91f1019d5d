# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: socket.getaddrinfo (network denied by policy (capability not granted))
# expect-stdout: carried on without the feed
# attempt: the same fetch, its URLError caught and the tool carrying on: the run is ok, the refusal still on the record
import urllib.error

import pandas as pd

scheme = bytes([104, 116, 116, 112]).decode()
try:
    print("ESCAPED: fetched", pd.read_csv(scheme + "://127.0.0.1:9/sales.csv"))
except urllib.error.URLError:
    print("carried on without the feed")
