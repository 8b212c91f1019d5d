# The Python client (clients/python/anvil_client, docs/python.md) and its smolagents executor,
# against the suite's real broker and supervisor: tests/python/test_client.py (unittest) runs
# a tool ok with its artifacts saved and checked, a blocked one with its refusal verbatim, a
# failed one (results, not exceptions), a refused request and a sandbox failure (exceptions
# with Anvil's message and field), inputs by fd (a file only root may read, through a broker
# that runs as another uid; a file removed after it was opened, which no path reaches; a pipe
# refused), the live event iterator, cancel, an unreachable socket,
# the probe (compared with anvilctl's), a task against a scripted model (tests/model_server.py
# over real HTTP) and one cancelled, and the decoder and the artifacts' checks against frames
# no broker sends.
# tests/python/test_smolagents.py calls AnvilExecutor as smolagents' CodeAgent does
# (smolagents is not installable here): send_variables, send_tools, steps with state carried,
# an error step and a blocked step (their logs and messages), final_answer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
"$PY" -c 'import msgpack' 2>/dev/null || fail "python3-msgpack is not installed (make deps installs it)"

# The task's script: two actions, a variable carried, an artifact, a final answer.
model_script pytask <<'PY'
[code('import csv\ntotal = sum(int(r["amount"]) for r in csv.DictReader(open("inputs/sales.csv")))\nprint(total)\n'),
 code('open("artifacts/total.txt", "w").write(f"{total}\\n")\nfinal_answer({"total": total})\n')]
PY
start_model pytask
model_script pyslow <<'PY'
[dict(code('final_answer(1)\n'), delay_s=30)]
PY
start_model pyslow

# A supervisor whose jails apply no Landlock though its runners are told to expect it (the
# test build's --test-skip-landlock), behind a broker of this test's own: each run there is
# refused by the runner before the tool's first line, a sandbox failure.
start_sup skipll 1153000000 --test-skip-landlock --test-no-python-layers --spares 1 --max-runs 2
"$ANVIL_BUILD/anvil-broker" --config /dev/null --supervisor "$T/skipll.sock" --listen "$T/skipbro.sock" \
        --state-dir "$T/skipbro" >"$T/skipbro.log" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 100); do [ -S "$T/skipbro.sock" ] && break; sleep 0.1; done
[ -S "$T/skipbro.sock" ] || fail "the broker of the Landlock-less supervisor did not start: $(cat "$T/skipbro.log")"

# A broker that is not root (uid 65533), on a supervisor of this test's own (as root, in both
# passes, as t_peercred's) that allows it: a file only root may read is one that broker cannot
# open by its path; the client, as root, opens it and passes the fd.
mkdir -p "$T/lowbro" && chown 65533:65534 "$T/lowbro"
"$ANVIL_BUILD/anvil-supervisor" --config /dev/null --listen "$T/lowsup.sock" --state-dir "$T/lowsup" \
        --socket-group 65534 --allow-uid 65533 --spares 1 --max-runs 2 \
        --uid-base $((ANVIL_E2E_UID_BASE + 1154000000)) >"$T/lowsup.log" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 100); do grep -q ": listening on " "$T/lowsup.log" && break; sleep 0.1; done
grep -q ": listening on " "$T/lowsup.log" || fail "the supervisor lowsup did not start: $(cat "$T/lowsup.log")"
# (setpriv execs the broker: the background job's pid is the broker's, which cleanup stops)
(exec setpriv --reuid=65533 --regid=65534 --clear-groups -- "$ANVIL_BUILD/anvil-broker" --config /dev/null \
        --supervisor "$T/lowsup.sock" --listen "$T/lowbro/anvil.sock" --state-dir "$T/lowbro/state") \
        >"$T/lowbro.log" 2>&1 &
OWN_PIDS+=("$!")
for _ in $(seq 100); do [ -S "$T/lowbro/anvil.sock" ] && break; sleep 0.1; done
[ -S "$T/lowbro/anvil.sock" ] || fail "the broker as uid 65533 did not start: $(cat "$T/lowbro.log")"
mkdir -m 700 "$T/private"
printf 'a,b\n3,4\n' >"$T/private/only-root.csv"
chmod 600 "$T/private/only-root.csv"
# The control: the broker's uid cannot read it.
as_uid 65533 cat "$T/private/only-root.csv" >/dev/null 2>"$T/cat.err" && fail "control: uid 65533 read the private file"
expect_match "control: the broker's uid cannot read the file" "Permission denied" "$(cat "$T/cat.err")"

export PYTHONDONTWRITEBYTECODE=1 # nothing written into the source tree
export TMPDIR="$T"               # the tests' temporary files and sockets go with $T
for t in test_client test_smolagents; do
        ANVIL_CTL="$CTL" MODEL_URL="http://127.0.0.1:$PORT_pytask/v1" SLOW_MODEL_URL="http://127.0.0.1:$PORT_pyslow/v1" \
                SANDBOX_FAILED_SOCKET="$T/skipbro.sock" LOW_BROKER_SOCKET="$T/lowbro/anvil.sock" \
                PRIVATE_FILE="$T/private/only-root.csv" \
                timeout 120 "$PY" "$TOP/tests/python/$t.py" >"$T/$t.out" 2>&1
        rc=$?
        cat "$T/$t.out"
        [ "$rc" = 0 ] || fail "tests/python/$t.py exited $rc"
        tail -1 "$T/$t.out" | grep -qx 'OK' || fail "tests/python/$t.py did not end OK"
        echo "ok: tests/python/$t.py: $(grep -E '^Ran [0-9]+ tests' "$T/$t.out")"
done
expect_serving
