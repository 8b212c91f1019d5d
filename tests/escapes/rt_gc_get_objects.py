# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: gc.get_objects (introspection denied by policy)
# attempt: find os._wrap_close (and through it os.system) among every object the collector tracks, by a computed name
import gc

for o in getattr(gc, "get_" + "objects")():
    if getattr(o, "__name__", "") == "_wrap_close":
        print("ESCAPED: found", o)
        break
