# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: write path '../leak.npy' outside ALLOWED_WRITE_PATHS (./artifacts)
# host-untouched: /leak.npy
# attempt: numpy.save to ../leak.npy, above the working directory
import numpy as np

np.save("../leak.npy", np.arange(3))
print("ESCAPED: wrote ../leak.npy")
