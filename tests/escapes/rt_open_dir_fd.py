# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('sales.csv', 'w') (write outside ALLOWED_WRITE_PATHS)
# attempt: os.open('sales.csv', O_WRONLY, dir_fd=<the inputs>) from inside ./artifacts, where
#   the name from the cwd would be writable: the "open" event carries no dir_fd, so Anvil's
#   os.open names the directory for it
import os

os.chdir("artifacts")
d = os.open("../inputs", os.O_RDONLY | os.O_DIRECTORY)
fd = os.open("sales.csv", os.O_WRONLY | os.O_TRUNC, dir_fd=d)
os.write(fd, b"overwritten\n")
print("ESCAPED: overwrote an input")
