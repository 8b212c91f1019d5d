# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: inspect.stack (introspection denied by policy)
# attempt: inspect.stack() to walk the caller frames
import inspect

print("ESCAPED:", [fi.function for fi in inspect.stack()])
