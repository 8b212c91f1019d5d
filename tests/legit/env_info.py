# Legit tool: the "environment" preamble many generated tools print: Python and library
# versions, platform, working directory, CPU count, the inputs available, and a run-time
# clock, then a one-line check of the data.
# Covers: sys.version_info, platform.python_version/system/machine/architecture/platform()
#   (platform reads the interpreter binary for libc_ver: library code), importlib.metadata.
#   version('pandas'), np.__version__, os.getcwd, Path.cwd, Path('inputs').resolve(),
#   os.cpu_count, os.environ.get with defaults, time.time/perf_counter, resource-free.
# Proof: RESULT lines (the same interpreter, libraries and layout on both sides) equal the
#   host run's.
# inputs: sales.csv
import importlib.metadata
import os
import platform
import sys
import time
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

started = time.time()
t0 = time.perf_counter()
sales = pd.read_csv("inputs/sales.csv")

print(f"RESULT: python={platform.python_version()} major.minor={sys.version_info[:2]} impl={platform.python_implementation()}")
print(f"RESULT: system={platform.system()} machine={platform.machine()} arch={platform.architecture()[0]}")
print(f"RESULT: platform has linux={'Linux' in platform.platform()} libc={platform.libc_ver()[0]}")
print(f"RESULT: pandas={pd.__version__} meta={importlib.metadata.version('pandas')} numpy={np.__version__} mpl={matplotlib.__version__}")
print(f"RESULT: cwd={os.getcwd()} Path.cwd={Path.cwd()} inputs={Path('inputs').resolve()} artifacts={Path('artifacts').absolute()}")
print(f"RESULT: cpus>0={(os.cpu_count() or 0) > 0} backend={matplotlib.get_backend()} tz={os.environ.get('TZ', 'unset')}")
print(f"RESULT: rows={len(sales)} clock ok={time.time() >= started and time.perf_counter() >= t0}")
