# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: compile (dynamic code execution denied by policy)
# attempt: eval of a base64-decoded string, with eval itself fetched from builtins by a base64-decoded name
# eval of source text compiles it first: CPython's 'compile' audit event is the one refused.
import base64
import builtins

ev = getattr(builtins, base64.b64decode(b"ZXZhbA==").decode())
src = base64.b64decode(b"X19pbXBvcnRfXygnb3MnKS5zeXN0ZW0oJ2lkJyk=").decode()
print("ESCAPED:", ev(src))
