# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)
# attempt: the canned read attempt: /etc/passwd built at run time, opened by the tool's own code
path = "/".join(["", "etc", "pass" + "wd"])
with open(path) as f:
    print("ESCAPED:", f.readline())
