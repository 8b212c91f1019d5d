# A secret planted in both daemons' environment (ANVIL_TEST_SECRET=$ANVIL_E2E_SECRET) never
# reaches the tool: not in os.environ, not in /proc/self/environ or the jail's pid 1's
# /proc/1/environ, not in any /proc/*/environ or /proc/*/cmdline the tool can find, not in
# a file under /etc, /tmp, /work, /anvil; and the tool's environment is exactly the
# eight fixed variables. Control: the secret IS in both daemons' /proc/PID/environ on the host.
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"

[ -n "${ANVIL_E2E_SECRET:-}" ] || fail "ANVIL_E2E_SECRET is not set (run through tests/run.sh)"
for pid in "$ANVIL_E2E_SUP_PID" "$ANVIL_E2E_BRO_PID"; do
        tr '\0' '\n' <"/proc/$pid/environ" | grep -qxF "ANVIL_TEST_SECRET=$ANVIL_E2E_SECRET" ||
                fail "control: the secret is not in /proc/$pid/environ ($(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-60))"
        echo "ok: control: the secret is in /proc/$pid/environ ($(basename "$(readlink "/proc/$pid/exe")"))"
done

tool env.py <<'PY'
import os
for k in sorted(os.environ):
    print(f"ENV {k}={os.environ[k]}")
def show(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"FILE {path} ERR {type(e).__name__}: {e}")
        return
    print(f"FILE {path} OK {len(data)} bytes")
    print("DATA " + data.replace(b"\0", b" ").decode("utf-8", "replace"))
show("/proc/self/environ")
show("/proc/1/environ")
for pid in sorted(os.listdir("/proc")):
    if pid.isdigit():
        for what in ("environ", "cmdline"):
            show(f"/proc/{pid}/{what}")
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                show(f"/proc/{pid}/task/{tid}/environ")
        except OSError:
            pass
# Everything readable in the small trees the jail has of its own.
n = 0
for top in ["/etc", "/tmp", "/work", "/anvil"]:
    for root, dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(root, name)
            try:
                with open(p, "rb") as f:
                    data = f.read(16 * 1024 * 1024)
            except OSError:
                continue
            n += 1
            if b"anvil-e2e-secret" in data or b"ANVIL_TEST_SECRET" in data:
                print(f"FOUND in {p}")
                for line in data.decode("utf-8", "replace").splitlines():
                    if "anvil-e2e-secret" in line or "ANVIL_TEST_SECRET" in line:
                        print(f"LEAKED {line[:200]}")
print(f"SCANNED {n} files")
PY
bare_json "$T/env.py"
expect_eq status ok "$(j .status)"

# The environment, verbatim (sorted by name, as the tool printed it).
expect_eq "the tool's os.environ" "ENV HOME=/tmp
ENV LANG=C.UTF-8
ENV MPLBACKEND=Agg
ENV MPLCONFIGDIR=/tmp/matplotlib
ENV OPENBLAS_NUM_THREADS=1
ENV PATH=/usr/bin:/bin
ENV TMPDIR=/tmp
ENV TZ=UTC" "$(j .stdout | grep '^ENV ')"

# /proc/self/environ and the jail's pid 1: unreadable or empty.
for p in /proc/self/environ /proc/1/environ; do
        line=$(j .stdout | grep -m1 -F "FILE $p ") || fail "no result for $p"
        echo "    $line"
        [[ "$line" == "FILE $p ERR "* || "$line" == "FILE $p OK 0 bytes" ]] || fail "$p was readable in the jail: $line"
        echo "ok: $p: unreadable or empty"
done
echo "the jail's processes, as the tool saw them:"
j .stdout | grep -E '^FILE /proc/[0-9]+/cmdline' | sed 's/^/    /'
expect_eq "files under /etc /tmp /work /anvil that hold the secret" none "$(j .stdout | grep "^FOUND" || echo none)"
expect_match "the scan read files" '^SCANNED [1-9][0-9]* files$' "$(j .stdout | grep '^SCANNED')"

# Nowhere in the whole result: stdout, stderr, events.
if grep -qF "$ANVIL_E2E_SECRET" "$T/result.json"; then
        fail "the secret is in the run's result"
fi
if grep -qF ANVIL_TEST_SECRET "$T/result.json"; then
        fail "the secret's variable name is in the run's result"
fi
echo "ok: the secret is nowhere in the result ($(wc -c <"$T/result.json") bytes)"
# Control: the same tool and checks, with the secret planted in the jail as an input file:
# the scan finds it, and so does the check on the result.
printf '%s\n' "$ANVIL_E2E_SECRET" >"$T/plant.txt"
bare_json "$T/env.py" --input "$T/plant.txt"
expect_eq "control: the scan finds a planted secret" "FOUND in /work/inputs/plant.txt" "$(j .stdout | grep '^FOUND')"
expect_eq "control: the tool prints what it found" "LEAKED $ANVIL_E2E_SECRET" "$(j .stdout | grep '^LEAKED')"
grep -qF "$ANVIL_E2E_SECRET" "$T/result.json" || fail "control: the secret in the tool's output is not found in the result"
echo "ok: control: the check on the result finds it too"
