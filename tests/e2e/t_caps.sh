# Capabilities (DESIGN §7): granted = requested ∩ approved ∩ server policy. anvilctl --cap asks
# for one and approves it (the user at the command line decides); the server's policy then
# says why it is not granted, on the record. A denied capability lets the tool run and fail
# visibly at the operation: a connection to a listener on the host's loopback is refused by
# the audit hook (at the socket's creation: no socket but AF_UNIX is made in a jail) and the
# listener counts no connection. Control: a connection from the host is
# counted.
. "$(dirname "$0")/lib.sh"
cat >"$T/listen.py" <<'PY'
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
n = 0
s.settimeout(0.2)
with open(sys.argv[1], "w") as f:
    f.write("0")
while True:
    try:
        c, _ = s.accept(); c.close(); n += 1
        with open(sys.argv[1], "w") as f:
            f.write(str(n))
    except socket.timeout:
        pass
PY
$PY -I "$T/listen.py" "$T/count" >"$T/port" &
LPID=$!
trap 'kill $LPID 2>/dev/null; wait $LPID 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 50); do [ -s "$T/port" ] && [ -s "$T/count" ] && break; sleep 0.1; done
PORT=$(cat "$T/port")

# socket is reached through a module that imported it itself (the pre-check sees no import
# of socket, and an import of socket by tool code would be refused at runtime).
tool connect.py <<PY
import logging.handlers
try:
    s = logging.handlers.socket.socket()
    s.connect(("127.0.0.1", $PORT))
    print("connected")
except PermissionError as e:
    print(type(e).__name__, e)
PY
run_json "$T/connect.py" --cap network
expect_eq status ok "$(j .status)"
expect_eq "requested" network "$(j '.capabilities.requested | join(",")')"
expect_eq "granted" "" "$(j '.capabilities.granted | join(",")')"
expect_eq "denied" network "$(j '.capabilities.denied | join(",")')"
expect_eq "the server's reason, on the record" \
        "capability network denied: no host was approved for it" \
        "$(j '.events[] | select(.kind == "capability_denied") | .message')"
expect_eq "the refusal at the operation" \
        "blocked at runtime: socket.socket(AF_INET, SOCK_STREAM) (network denied by policy (capability not granted))" \
        "$(j '.events[] | select(.layer == "audit") | .message')"
expect_eq "what the tool saw" \
        "SandboxBlocked blocked at runtime: socket.socket(AF_INET, SOCK_STREAM) (network denied by policy (capability not granted))" \
        "$(j .stdout)"
sleep 0.5
expect_eq "connections the listener counted" 0 "$(cat "$T/count")"
# Control: from the host, the same listener counts a connection.
$PY -I -c "import socket; socket.create_connection(('127.0.0.1', $PORT)).close()"
for _ in $(seq 20); do [ "$(cat "$T/count")" = 1 ] && break; sleep 0.1; done
expect_eq "control: a connection from the host is counted" 1 "$(cat "$T/count")"

tool noop.py <<<'print("ran")'
run_json "$T/noop.py" --cap process
expect_eq "process: never grantable" "capability process denied: never grantable" \
        "$(j '.events[] | select(.kind == "capability_denied") | .message')"
expect_eq "process: the tool still ran" ran "$(j .stdout)"
# An unknown name: anvilctl refuses it as a typo (a usage error, nothing sent: t_ctl_help.sh);
# the server's own denial is then seen through a client that sends it, the agent, whose model
# declares it (the broker keeps unknown names for the server to deny, docs/agent.md).
"$CTL" run "$T/noop.py" --cap gpu >"$T/out" 2>"$T/err"
expect_eq "--cap gpu: anvilctl's usage error" "125 anvilctl: --cap: 'gpu' is not a capability (there are: network, process)" \
        "$? $(cat "$T/err")"
. "$(dirname "$0")/agent_lib.sh"
model_script gpu <<'PY'
[reply('{"capabilitiesRequested": ["gpu"]}\nThought: a look.\n```py\nprint("ran")\n```\n'),
 code('with open("artifacts/g.txt", "w") as f:\n    f.write("g\\n")\nfinal_answer("g")\n')]
PY
start_model gpu
printf '{"task": "x", "max_steps": 2, "model": {"url": "http://127.0.0.1:%s/v1", "name": "scripted"}}\n' "$PORT_gpu" \
        >"$T/gpu.task.json"
"$CTL" submit "$T/gpu.task.json" --json >"$T/gpu.json" 2>"$T/gpu.err"
rc=$?
kill "${OWN_PIDS[-1]}" # the model server (this test's EXIT trap is its own, above)
wait "${OWN_PIDS[-1]}" 2>/dev/null
expect_eq "the task whose model asks for gpu: exit (delivered)" 0 "$rc"
expect_eq "an unknown capability, denied by the server" "capability gpu denied: unknown capability" \
        "$(jq -r '.steps[0].run.events[] | select(.kind == "capability_denied") | .message' "$T/gpu.json")"
run_json "$T/noop.py"
expect_eq "nothing requested: nothing decided" 0 "$(j '[.events[] | select(.layer == "policy")] | length')"
