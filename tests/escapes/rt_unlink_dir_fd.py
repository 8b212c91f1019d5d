# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: os.remove('sales.csv') (write outside ALLOWED_WRITE_PATHS)
# attempt: os.unlink('sales.csv', dir_fd=<the inputs>) from inside ./artifacts, where the same
#   name from the cwd would be ./artifacts/sales.csv, writable: judged from the directory
#   the fd names, not from the cwd
import os

os.chdir("artifacts")
d = os.open("../inputs", os.O_RDONLY | os.O_DIRECTORY)
os.unlink("sales.csv", dir_fd=d)
print("ESCAPED: removed an input")
