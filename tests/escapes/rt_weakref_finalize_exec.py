# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: compile (dynamic code execution denied by policy)
# expect-stdout: main thread carried on
# attempt: weakref.finalize(obj, exec, source): exec called from weakref's frame when obj goes
import builtins
import weakref


class Box:
    pass


b = Box()
weakref.finalize(b, getattr(builtins, "ex" + "ec"), "print('ESCAPED: exec ran as a finalizer')")
del b
print("main thread carried on")
