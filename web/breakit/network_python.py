# Try to break it: open a network connection, the plain way.
# Fetches a CSV from a web server on the host's loopback with urllib, as a tool that wants
# data from the network would. The pre-check sees `import urllib.request` (a module whose
# purpose is to reach another host) and refuses the tool before any of it runs.
import urllib.request

URL = "http://127.0.0.1:8080/sales.csv"

with urllib.request.urlopen(URL, timeout=5) as reply:
    print(reply.read().decode()[:500])
