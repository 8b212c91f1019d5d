# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: read path '/etc/passwd' outside ALLOWED_READ_PATHS (./inputs, ./artifacts)
# host-untouched: {artifacts}/passwd
# attempt: exfiltrate /etc/passwd as an artifact with shutil.copy
import shutil

shutil.copy("/etc/passwd", "artifacts/passwd")
print("ESCAPED: copied /etc/passwd into artifacts")
