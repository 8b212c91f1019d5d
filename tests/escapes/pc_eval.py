# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: eval (dynamic code execution denied by policy)
# attempt: eval a string that imports os and runs a command
print("ESCAPED:", eval("__import__('os').system('id')"))
