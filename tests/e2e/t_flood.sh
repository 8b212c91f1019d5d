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

# Texts a tool controls, longer than an event's fields: a 3000-byte path (in the refusal's op;
# a longer one is ENAMETOOLONG before any audit event) and a 20000-byte exception (in its
# message and traceback). The runner cuts each to its field's size, ending "...", so the
# events stay well-formed (before, the supervisor took the long op as a malformed event and
# ended the run with an error).
tool longev.py <<'PY'
try:
    open("/etc/sh" + "a" * 3000)
except BaseException as e:
    print(type(e).__name__)
raise ValueError("v" * 20000)
PY
run_json "$T/longev.py"
expect_eq "long texts: no malformed event" "" "$(j '.events[] | select(.kind == "malformed_event") | .message')"
expect_eq "long texts: the tool went on after its refusal" SandboxBlocked "$(j .stdout | head -1)"
expect_eq "long texts: the refusal's op, cut" "1024 ..." "$(j '.events[] | select(.layer == "audit" and .kind == "blocked") | "\(.op | length) \(.op[-3:])"')"
expect_eq "long texts: the exception's message, cut" "4096 ..." \
        "$(j '.events[] | select(.kind == "exception") | "\(.message | length) \(.message[-3:])"')"
expect_eq "long texts: the exception's traceback, cut" "16384 ..." \
        "$(j '.events[] | select(.kind == "exception") | "\(.traceback | length) \(.traceback[-3:])"')"
expect_serving
