# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: attribute __builtins__ (introspection denied by policy)
# attempt: eval taken out of __builtins__ by a computed key
fn = __builtins__.__dict__["ev" + "al"]
print("ESCAPED:", fn("1 + 1"))
