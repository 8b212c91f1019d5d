# The runner's fast end (runner/exit.c, issue 16): no Py_FinalizeEx, yet what the tool wrote is
# complete, cold and warm. The tool writes files it never closes (text, binary, a large
# buffer, gzip, pandas' to_csv and matplotlib's savefig into open handles; some held by its
# globals, some only by a garbage cycle, one by a frozen object), registers atexit and
# weakref.finalize handlers, logs to a file, and leaves a non-daemon thread that writes after
# the tool's last line. Each file is checked whole. Control: a supervisor of the test build
# whose runners end without any of it (--test-no-exit-flush) gets every one of them
# incomplete, so none of the checks would pass without the fast end.
. "$(dirname "$0")/lib.sh"
start_sup fl 970000000 --warm 1 --spares 0 --max-runs 2
start_sup nf 971000000 --warm 1 --spares 0 --max-runs 2 --test-no-exit-flush
grep -q "TEST MODE: runners end without joining threads, atexit or flushing files" "$T/nf.log" ||
        fail "the control supervisor does not say it is in test mode"
# warm_now NAME: until that supervisor's latest word on its warm jails is that one is waiting
warm_now() {
        for _ in $(seq 300); do
                grep -E ': a warm jail, waiting|: a warm jail taken for|warm jail: ended' "$T/$1.log" | tail -1 |
                        grep -q ': a warm jail, waiting' && return
                sleep 0.1
        done
        fail "no warm jail waiting in $1: $(tail -5 "$T/$1.log")"
}
jail_kind() { j '[.events[] | select(.layer == "supervisor" and (.kind == "warm" or .kind == "cold")) | .kind] | .[0] // "cold"'; }

tool writes.py <<'PY'
import atexit, gc, gzip, logging, threading, time, weakref
gc.disable()  # no collection during the run: the cycle below is left to the end
import pandas as pd
import matplotlib.pyplot as plt
# text, buffered by TextIOWrapper and BufferedWriter, held by a global
text = open("artifacts/text.txt", "w")
for i in range(20000):
    text.write(f"{i}\n")
text.write("END\n")
# binary, held only by a garbage cycle (freed by no refcount, only a collection would)
class Holder:
    pass
h = Holder()
h.me = h
h.f = open("artifacts/binary.dat", "wb")
for _ in range(40):
    h.f.write(bytes(range(256)))
del h
# a buffer larger than what is written: nothing reaches the file before its end
big = open("artifacts/bigbuf.txt", "w", buffering=1 << 20)
big.write("x" * 100000 + "\nEND\n")
# gzip over a file: complete only once closed (the trailer); held by a module's attribute
gz = gzip.open("artifacts/data.gz", "wt")
gz.write("compressed line\n" * 5000)
logging._anvil_test_gz = gz
del gz
# pandas to an open handle, matplotlib to a file object
df = pd.DataFrame({"n": range(5000), "sq": [i * i for i in range(5000)]})
csv = open("artifacts/frame.csv", "w")
df.to_csv(csv, index=False)
png = gzip.open("artifacts/plot.png.gz", "wb")  # savefig flushes; only close ends a gzip
plt.plot(range(100), [i * i for i in range(100)])
plt.savefig(png, format="png")
# a file only a frozen object holds (gc.freeze hides it from gc.get_objects)
frozen = Holder()
frozen.me = frozen
frozen.f = open("artifacts/frozen.txt", "w")
frozen.f.write("frozen " * 1000 + "END\n")
del frozen
gc.freeze()
# atexit, weakref.finalize, logging's own shutdown
atexit.register(lambda: open("artifacts/atexit.txt", "w").write("atexit ran\n"))
class Obj:
    pass
keep = Obj()
weakref.finalize(keep, lambda: open("artifacts/finalize.txt", "w").write("finalize ran\n"))
logging.basicConfig(filename="artifacts/log.txt", level=logging.INFO)
logging.info("logged line")
# a non-daemon thread that writes after the tool's last line (joined before the variables
# are collected, vars.c, and again at the end, for a process the tool forked)
def late():
    time.sleep(2)
    global late_file  # left open: complete only once the end closes it
    late_file = open("artifacts/thread.txt", "w")
    late_file.write("thread wrote at exit\n")
threading.Thread(target=late).start()
print("tool done")
PY

# check: one line a file, "name complete" or "name incomplete (why)", from the artifacts dir
check() {
        "$PY" - "$1" <<'PY'
import gzip, os, sys
d = sys.argv[1]
def read(n, mode="r"):
    p = os.path.join(d, n)
    if not os.path.exists(p):
        return None
    with open(p, mode) as f:
        return f.read()
def say(n, ok, why):
    print(f"{n} complete" if ok else f"{n} incomplete ({why})")
t = read("text.txt")
say("text.txt", t is not None and t.endswith("19999\nEND\n") and t.count("\n") == 20001, f"{len(t or '')} chars")
b = read("binary.dat", "rb")
say("binary.dat", b == bytes(range(256)) * 40, f"{len(b or b'')} bytes")
t = read("bigbuf.txt")
say("bigbuf.txt", t == "x" * 100000 + "\nEND\n", f"{len(t or '')} chars")
try:
    z = gzip.decompress(read("data.gz", "rb") or b"").decode()
except Exception as e:
    z = repr(e)
say("data.gz", z == "compressed line\n" * 5000, z[:60])
c = read("frame.csv")
say("frame.csv", c is not None and c.startswith("n,sq\n") and c.endswith("4999,24990001\n"), f"{len(c or '')} chars")
try:
    p = gzip.decompress(read("plot.png.gz", "rb") or b"")
except Exception as e:
    p = repr(e).encode()
say("plot.png.gz", p.startswith(b"\x89PNG") and p.endswith(b"IEND\xaeB`\x82"), p[:40])
t = read("frozen.txt")
say("frozen.txt", t == "frozen " * 1000 + "END\n", f"{len(t or '')} chars")
for n, want in (("atexit.txt", "atexit ran\n"), ("finalize.txt", "finalize ran\n"),
                ("thread.txt", "thread wrote at exit\n")):
    t = read(n)
    say(n, t == want, "missing" if t is None else repr(t))
t = read("log.txt")
say("log.txt", t == "INFO:root:logged line\n", "missing" if t is None else repr(t))
PY
}
FILES="text.txt binary.dat bigbuf.txt data.gz frame.csv plot.png.gz frozen.txt atexit.txt finalize.txt thread.txt"

# run_kind SUP KIND: the tool through that supervisor, warm or cold (a memory cap under the
# warm jails' default makes it cold), checked to be what was asked
run_kind() {
        local extra=()
        if [ "$2" = warm ]; then warm_now "$1"; else extra=(--memory 400); fi
        ANVIL_SOCKET="$T/$1.sock" run_json "$T/writes.py" "${extra[@]}"
        expect_eq "$1, $2: the run's jail" "$2" "$(jail_kind)"
        expect_eq "$1, $2: the tool's stdout" "tool done" "$(j .stdout)"
}

for kind in cold warm; do
        run_kind fl "$kind"
        expect_eq "fast end, $kind: status" ok "$(j .status)"
        expect_eq "fast end, $kind: exit code" 0 "$(j .exit_code)"
        expect_eq "fast end, $kind: stderr" "" "$(j .stderr)"
        out=$(check "$(j .artifacts_dir)")
        echo "$out" | sed "s/^/  $kind: /"
        n=$(echo "$out" | grep -c ' complete$')
        expect_eq "fast end, $kind: files complete" 11 "$n"
        echo "observed, fast end, $kind: wall $(j .wall_ms) ms"
done

# The control: the same tool, ended without the fast end. Every file the checks judge must be
# incomplete there (log.txt is left out: logging flushes each record as it is written).
for kind in cold warm; do
        run_kind nf "$kind"
        out=$(check "$(j .artifacts_dir)")
        echo "$out" | sed "s/^/  control, $kind: /"
        for f in $FILES; do
                expect_match "control, $kind: $f" "^$f incomplete" "$(echo "$out" | grep "^$f ")"
        done
        echo "observed, control, $kind: wall $(j .wall_ms) ms"
done

# The exit code and Python's own rules survive the fast end: sys.exit(3) after writing an
# unclosed file, an uncaught exception, and an atexit handler that raises (ignored, as Python).
tool code.py <<'PY'
import atexit, sys
f = open("artifacts/a.txt", "w")
f.write("kept\n")
def bad():
    raise ValueError("from atexit")
atexit.register(bad)
sys.exit(3)
PY
ANVIL_SOCKET="$T/fl.sock" run_json "$T/code.py" --memory 400
expect_eq "sys.exit(3): exit code" 3 "$(j .exit_code)"
expect_eq "sys.exit(3): its unclosed file" "kept" "$(cat "$(j .artifacts_dir)/a.txt")"
expect_match "an atexit handler that raises: reported as Python does" "Exception ignored in atexit callback.*ValueError: from atexit" "$(j .stderr | tr '\n' ' ')"
tool raise.py <<<'raise KeyError("x")'
ANVIL_SOCKET="$T/fl.sock" run_json "$T/raise.py" --memory 400
expect_eq "an uncaught exception: exit code" 1 "$(j .exit_code)"
expect_eq "its finished event" "tool finished with exit code 1" "$(j '[.events[] | select(.kind == "finished")][0].message')"
