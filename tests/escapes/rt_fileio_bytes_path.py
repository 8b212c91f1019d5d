# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)
# attempt: io.FileIO on a bytes path made from a list of byte values
import io

p = bytes([47, 101, 116, 99, 47, 112, 97, 115, 115, 119, 100])
print("ESCAPED:", io.FileIO(p).read(40))
