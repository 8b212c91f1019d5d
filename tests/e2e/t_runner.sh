# The runner (anvil-py): the tool runs as __main__ from a code object named <tool>, with
# stdin on /dev/null, only fds 0-3, no bytecode written, and matplotlib's font cache the
# supervisor built, read-only; and the jail as the tool sees it.
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"
tool inside.py <<'PY'
import os, sys, socket
print("name", __name__)
print("code", sys._getframe().f_code.co_filename)
print("stdin", repr(sys.stdin.read()))
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
print("fds", [f for f in fds if f <= 3], len(fds) - 1)  # the listing holds one more
print("dont_write_bytecode", sys.dont_write_bytecode)
with open("/tmp/helper_mod.py", "w") as f:
    f.write("VALUE = 42\n")
sys.path.insert(0, "/tmp")
import helper_mod
print("imported", helper_mod.VALUE, "pycache", os.path.exists("/tmp/__pycache__"))
print("cwd", os.getcwd(), "uid", os.getuid(), "gid", os.getgid(), "host", socket.gethostname())
print("pid", os.getpid(), "ppid", os.getppid())
status = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
print("caps", status["CapEff"].strip(), status["CapBnd"].strip(), "nnp", status["NoNewPrivs"].strip())
print("net", sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]))
PY
bare_json "$T/inside.py"
expect_eq status ok "$(j .status)"
out=$(j .stdout)
line() { grep "^$1 " <<<"$out"; }
expect_eq "__name__" "name __main__" "$(line name)"
expect_eq "code object's file name" "code <tool>" "$(line code)"
expect_eq "stdin" "stdin ''" "$(line stdin)"
expect_eq "open fds" "fds [0, 1, 2, 3] 4" "$(line fds)"
expect_eq "bytecode off" "dont_write_bytecode True" "$(line dont_write_bytecode)"
expect_eq "no __pycache__ written" "imported 42 pycache False" "$(line imported)"
expect_eq "who and where" "cwd /work uid 1000 gid 1000 host anvil" "$(line cwd)"
expect_eq "pid namespace: the runner is pid 2, under pid 1" "pid 2 ppid 1" "$(line pid)"
expect_eq "capabilities and no_new_privs" "caps 0000000000000000 0000000000000000 nnp 1" "$(line caps)"
expect_eq "network interfaces" "net ['lo']" "$(line net)"
# Control: the same import on the host writes bytecode, so the check above can fail.
mkdir -p "$T/host"
# -I: the environment (PYTHONDONTWRITEBYTECODE, say) must not decide the control either.
( cd "$T/host" && printf 'VALUE = 42\n' >helper_mod.py && $PY -I -c 'import sys; sys.path.insert(0, "."); import helper_mod' )
[ -d "$T/host/__pycache__" ] || fail "control: the host's python3 wrote no __pycache__"
echo "ok: control: the host's python3 writes __pycache__"

tool mpl.py <<'PY'
import hashlib, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
d = matplotlib.get_cachedir()
print("cachedir", d)
for name in sorted(os.listdir(d)):
    p = os.path.join(d, name)
    print("file", name, os.access(p, os.W_OK), hashlib.sha256(open(p, "rb").read()).hexdigest())
plt.plot([1, 2, 3])
plt.savefig("artifacts/plot.png")
PY
run_json "$T/mpl.py"
expect_eq "matplotlib run" ok "$(j .status)"
expect_eq "cache directory" "cachedir /tmp/matplotlib" "$(j .stdout | grep '^cachedir')"
cache=$(ls "$ANVIL_E2E_STATE"/sup/mplcache/fontlist-*.json)
want="file $(basename "$cache") False $(sha256sum "$cache" | cut -d' ' -f1)"
expect_eq "the supervisor's font cache, read-only" "$want" "$(j .stdout | grep '^file')"
expect_eq "no cache rebuilt, nothing on stderr" "" "$(j .stderr)"
expect_eq "the chart" "plot.png" "$(j '.artifacts[].path')"
