# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: read path '/etc/passwd' outside ALLOWED_READ_PATHS (./inputs, ./artifacts)
# host-untouched: {artifacts}/p
# attempt: os.symlink('/etc/passwd', 'artifacts/p'), so the artifact listing would follow it on the host
import os

os.symlink("/etc/passwd", "artifacts/p")
print("ESCAPED: made artifacts/p")
