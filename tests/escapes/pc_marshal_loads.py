# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: marshal.loads (dynamic code execution denied by policy)
# attempt: marshal.loads of a blob (a smuggled code object) named directly
import marshal

blob = bytes.fromhex("e9" + "2a000000")
print("ESCAPED:", marshal.loads(blob))
