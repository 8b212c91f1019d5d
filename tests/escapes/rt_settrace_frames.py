# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: sys.settrace (introspection denied by policy)
# attempt: get frame objects (and their f_globals) handed over by a trace function
import sys

seen = []
getattr(sys, "set" + "trace")(lambda frame, event, arg: seen.append(frame))
print("ESCAPED: traced", len(seen))
