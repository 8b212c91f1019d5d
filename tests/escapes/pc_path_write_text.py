# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: write path '/etc/cron.d/anvil-escape-canary' outside ALLOWED_WRITE_PATHS (./artifacts)
# host-untouched: /etc/cron.d/anvil-escape-canary
# attempt: pathlib.Path('/etc/cron.d/...').write_text(...) to plant a cron job
from pathlib import Path

Path("/etc/cron.d/anvil-escape-canary").write_text("* * * * * root id > /tmp/anvil-escape-canary\n")
print("ESCAPED: planted a cron job")
