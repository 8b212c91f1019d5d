# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: attribute __globals__ (introspection denied by policy)
# attempt: a function's __globals__ to reach __builtins__ and eval
def helper():
    return 0


ev = helper.__globals__["__builtins__"]
print("ESCAPED:", ev)
