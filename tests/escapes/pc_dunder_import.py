# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: __import__ (dynamic code execution denied by policy)
# attempt: __import__('os').system(...) without an import statement
__import__("os").system("echo ESCAPED: __import__")
