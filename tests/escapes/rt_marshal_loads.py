# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: marshal.loads (dynamic code execution denied by policy)
# attempt: unmarshal a code object from bytes (a saved .pyc's body, say), marshal.loads fetched by a reversed name: refused before the bytes are even parsed
import marshal

blob = bytes.fromhex("e3000000000000000000000000000000")  # the head of a marshalled code object
loads = getattr(marshal, "sdaol"[::-1])
print("ESCAPED:", loads(blob))
