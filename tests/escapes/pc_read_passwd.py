# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: read path '/etc/passwd' outside ALLOWED_READ_PATHS (./inputs, ./artifacts)
# attempt: open('/etc/passwd') with a literal path
with open("/etc/passwd") as f:
    print("ESCAPED:", f.readline())
