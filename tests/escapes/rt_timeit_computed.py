# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: import ctypes (native code denied by policy)
# attempt: let timeit compile and run a string that imports ctypes (its frames are named <timeit-src>, not <tool>), timeit's function fetched by a computed name
import timeit

getattr(timeit, "time" + "it")("import ctypes", number=1)
print("ESCAPED: ctypes imported through timeit")
