# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)
# host-untouched: {artifacts}/passwd
# attempt: shutil.copy of /etc/passwd (built at run time) into artifacts/: shutil's read is judged as the tool's
import shutil

shutil.copy("/".join(["", "etc", "passwd"]), "artifacts/passwd")
print("ESCAPED: copied /etc/passwd into artifacts")
