# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/etc/anvil-escape-canary', 'w') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: /etc/anvil-escape-canary
# attempt: os.open with O_WRONLY|O_CREAT (flags, no mode string) on a path under /etc built at run time
import os

fd = os.open("/".join(["", "etc", "anvil-escape-canary"]), os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"x")
print("ESCAPED: wrote /etc/anvil-escape-canary")
