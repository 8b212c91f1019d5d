# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: compile (dynamic code execution denied by policy)
# attempt: contextlib.ExitStack().callback(exec, source): exec called from contextlib's frames at the with's end
import builtins
import contextlib

with contextlib.ExitStack() as stack:
    stack.callback(getattr(builtins, "ex" + "ec"), "print('ESCAPED: exec ran as a callback')")
