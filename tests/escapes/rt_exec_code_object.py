# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: gc.get_referents (introspection denied by policy)
# attempt: exec of a code object with exec fetched by a reversed name; the code object is sought among a function's gc referents (its __code__ is audited), which is refused first
import builtins
import gc


def payload():
    print("ESCAPED: code object executed")


refs = getattr(gc, "_".join(["get", "referents"]))(payload)
code = [o for o in refs if type(o).__name__ == "code"][0]
getattr(builtins, "cexe"[::-1])(code)
