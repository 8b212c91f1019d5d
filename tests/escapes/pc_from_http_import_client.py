# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: import http.client (network denied by policy)
# attempt: reach http.client through its harmless parent package (from http import client)
from http import client

conn = client.HTTPConnection("127.0.0.1", 8080, timeout=2)
conn.request("GET", "/")
print("ESCAPED:", conn.getresponse().status)
