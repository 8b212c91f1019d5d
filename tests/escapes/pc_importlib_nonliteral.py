# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: importlib.import_module (dynamic code execution denied by policy)
# attempt: importlib.import_module with a module name joined at run time
import importlib

name = "".join(["so", "ck", "et"])
mod = importlib.import_module(name)
print("ESCAPED:", mod)
