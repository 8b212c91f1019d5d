# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)
# attempt: open() with an opener (whose own "open" event Anvil passes over) whose opener
#   reads /etc/passwd with io.FileIO: the opener's own opens are judged
import io

def sneaky(path, flags):
    return io.FileIO("/etc/" + "passwd", "r", closefd=False).fileno()

with open("artifacts/x.txt", "w", opener=sneaky) as f:
    print("ESCAPED:", f)
