# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: attribute gi_frame (introspection denied by policy)
# attempt: a generator's frame by a reversed attribute name
def gen():
    yield 1


frame = getattr(gen(), "emarf_ig"[::-1])
print("ESCAPED:", frame)
