# A run may ask for its Python layers off (run_request.python_layers_off, anvilctl run
# --python-layers-off), as the probe's runs and anvilctl verify's checks of the kernel layers
# do: no pre-check, no audit hook, and the run says so (event layers_disabled). Both ways:
# the same tools without it are refused by the Python layers; with it, by the kernel's, and
# a legitimate tool runs the same either way.
. "$(dirname "$0")/lib.sh"

# A socket: the pre-check refuses the import; with the layers off, seccomp refuses socket().
tool sock.py <<'PY'
import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    print("ESCAPED: a socket")
except OSError as e:
    print("refused:", e.errno)
PY
run_json "$T/sock.py"
expect_eq "layers on: the first refusal" "precheck: blocked: import socket (network denied by policy)" \
        "$(j '[.events[] | select(.kind == "blocked" and .layer != "runner")][0] | "\(.layer): \(.message)"')"
expect_eq "layers on: no layers_disabled" 0 "$(j '[.events[] | select(.kind == "layers_disabled")] | length')"
run_json "$T/sock.py" --python-layers-off
expect_eq "layers off: the run says so" "test mode: the pre-check and the audit hook are off" \
        "$(j '[.events[] | select(.kind == "layers_disabled")][0].message')"
expect_eq "layers off: refusals of the Python layers" 0 \
        "$(j '[.events[] | select(.kind == "blocked" and (.layer == "precheck" or .layer == "audit"))] | length')"
expect_eq "layers off: seccomp refused it" \
        "blocked at kernel: socket(AF_INET, SOCK_STREAM) (network denied by seccomp)" \
        "$(j '[.events[] | select(.layer == "seccomp" and .kind == "blocked")][0].message')"
expect_eq "layers off: what the tool saw" "refused: 1" "$(j .stdout)"

# A legitimate tool: the same output and status either way.
tool sum.py <<<'import pandas as pd; print(int(pd.Series([1, 2, 3]).sum()))'
run_json "$T/sum.py"
expect_eq "legit, layers on" "ok 6" "$(j '"\(.status) \(.stdout)"')"
run_json "$T/sum.py" --python-layers-off
expect_eq "legit, layers off" "ok 6" "$(j '"\(.status) \(.stdout)"')"
echo "ok: a run's Python layers are off only when it asks, and it says so"
