# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: attribute __subclasses__ (introspection denied by policy)
# attempt: the classic walk from () to object's subclasses, to find os._wrap_close and its globals
for cls in ().__class__.__bases__[0].__subclasses__():
    if cls.__name__ == "_wrap_close":
        print("ESCAPED:", cls.__init__.__globals__["system"])
