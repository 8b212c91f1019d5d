# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: read path 'inputs/../../etc/passwd' outside ALLOWED_READ_PATHS (./inputs, ./artifacts)
# attempt: pandas.read_csv of a path that starts in inputs/ and climbs out with ../
import pandas as pd

df = pd.read_csv("inputs/../../etc/passwd", sep=":", header=None)
print("ESCAPED:", df.shape)
