# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: attribute __code__ (introspection denied by policy)
# attempt: getattr(f, ''.join(['__co', 'de__'])): a name the pre-check cannot fold
def helper():
    return 0


code = getattr(helper, "".join(["__co", "de__"]))
print("ESCAPED:", code)
