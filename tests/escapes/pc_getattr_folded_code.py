# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: attribute __code__ (introspection denied by policy)
# attempt: getattr(f, '__co' + 'de__'): a concatenation of literals is folded and judged as '__code__'
def helper():
    return 0


code = getattr(helper, "__co" + "de__")
print("ESCAPED:", code)
