# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: compile (dynamic code execution denied by policy)
# expect-stdout: main thread carried on
# attempt: threading.Thread(target=exec, args=(source,)): the thread's only frames are threading's, none of the tool's
import builtins
import threading

run = getattr(builtins, "ex" + "ec")
t = threading.Thread(target=run, args=("print('ESCAPED: exec ran in a thread')",))
t.start()
t.join()
print("main thread carried on")
