# A tool that prints 1 GiB: stdout is capped at 1 MiB and marked truncated, the count of what
# it wrote is exact, and the daemons keep serving.
. "$(dirname "$0")/lib.sh"
tool flood.py <<'PY'
import sys
chunk = "x" * (1024 * 1024)
for _ in range(1024):
    sys.stdout.write(chunk)
PY
run_json "$T/flood.py" --timeout 60
expect_eq status ok "$(j .status)"
expect_eq stdout_truncated true "$(j .stdout_truncated)"
expect_eq "stdout kept" 1048576 "$(j '.stdout | length')"
expect_eq stdout_bytes 1073741824 "$(j .stdout_bytes)"
expect_match "truncation event" '^stdout truncated: kept the first 1048576 of 1073741824 bytes$' \
        "$(j '.events[] | select(.kind == "truncated") | .message')"
expect_serving
