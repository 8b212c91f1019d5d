# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: attribute gi_frame (introspection denied by policy)
# attempt: a generator's gi_frame, then f_back to the caller's frame
def gen():
    yield 1


g = gen()
print("ESCAPED:", g.gi_frame.f_back)
