# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)
# attempt: pathlib.Path(path built at run time).read_text(): pathlib's open is judged as the tool's
import pathlib

p = pathlib.Path("/".join(["", "etc", "passwd"]))
print("ESCAPED:", p.read_text()[:40])
