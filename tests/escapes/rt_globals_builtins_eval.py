# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: compile (dynamic code execution denied by policy)
# attempt: globals()['__buil' + 'tins__'] (a string key, not the name) to get eval, then eval source
b = globals()["__buil" + "tins__"]
ev = getattr(b, "lave"[::-1])
print("ESCAPED:", ev("__import__('os').getpid()"))
