# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: shutil.rmtree('/work/inputs') (write outside ALLOWED_WRITE_PATHS)
# attempt: shutil.rmtree of the user's inputs directory, the path built at run time
import shutil

shutil.rmtree("/".join(["", "work", "inputs"]))
print("ESCAPED: inputs removed")
