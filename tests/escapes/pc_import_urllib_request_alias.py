# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: urllib.request.urlopen (network denied by policy)
# attempt: urllib.request under an alias, then the alias's urlopen on 127.0.0.1 (the call is resolved through the alias)
import urllib.request as u

print("ESCAPED:", u.urlopen("http://127.0.0.1:8080/", timeout=2).status)
