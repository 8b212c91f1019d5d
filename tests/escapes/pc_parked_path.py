# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: read path '/etc/shadow' outside ALLOWED_READ_PATHS (./inputs, ./artifacts)
# attempt: an absolute path parked in a variable first, opened later through the variable
SECRETS = "/etc/shadow"

data = open(SECRETS).read()
print("ESCAPED:", data[:20])
