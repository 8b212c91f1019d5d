# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('sales.csv', 'w') (write outside ALLOWED_WRITE_PATHS)
# attempt: open('sales.csv', 'w', opener=...) from inside ./artifacts, the opener opening the
#   name through a dir_fd of the inputs: open's own event is passed over, the opener's
#   os.open is judged from the directory its dir_fd names
import os

os.chdir("artifacts")
d = os.open("../inputs", os.O_RDONLY | os.O_DIRECTORY)
with open("sales.csv", "w", opener=lambda p, fl: os.open(p, fl, 0o644, dir_fd=d)) as f:
    f.write("overwritten\n")
print("ESCAPED: overwrote an input")
