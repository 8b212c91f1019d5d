# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: compile (dynamic code execution denied by policy)
# attempt: exec of a string handed to a ThreadPoolExecutor worker through functools.partial: exec compiles it first, with no frame of the tool's
import builtins
import functools
from concurrent.futures import ThreadPoolExecutor

run = functools.partial(getattr(builtins, "ex" + "ec"), "print('ESCAPED: exec ran')")
with ThreadPoolExecutor(max_workers=1) as pool:
    pool.submit(run).result()
