# The benchmark cannot rot (issue 16): `make bench`'s program, bench/bench.py, in its tiny form
# (BENCH=smoke: a few runs of each figure), against daemons of its own (a uid base of its own,
# its state below this test's directory), as root. Checked: it ends 0; the table has every
# section and row in order, each figure a number where one is measured (the warm runs' too,
# through a supervisor of its own with --warm 1), "n/a" where none is (a warm rate under
# concurrent clients), each target with "met" or "not met" (or n/a); figures.json holds
# the counts the table states; every plot is a valid PNG (signature, every chunk's CRC, IHDR
# first, IEND last, the image data inflating to the size IHDR says); the daemons it started
# are gone and its state directory removed. The checker's control: a table with a row taken
# out, or a figure that is not a number, and a PNG with one byte changed, each fail it. Not a
# timed test: the figures are not judged here.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "the benchmark starts a root supervisor"

BASE=$((ANVIL_E2E_UID_BASE + 945000000))
mkdir -p "$T/state"

# As anyone but root it says it needs root, and starts nothing.
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups -- "$PY" "$TOP/bench/bench.py" --build "$ANVIL_BUILD" \
        --mode smoke --out "$T/nobody" --dir /nonexistent >"$T/nobody.out" 2>&1 || rc=$?
expect_eq "the bench as nobody: exit" 1 "$rc"
grep -qx "bench: needs root (it starts a supervisor, which builds the jails)" "$T/nobody.out" ||
        fail "the bench as nobody: $(cat "$T/nobody.out")"
echo "ok: as nobody, the bench says it needs root"

t0=$(date +%s)
"$PY" "$TOP/bench/bench.py" --build "$ANVIL_BUILD" --mode smoke --out "$T/out" --uid-base "$BASE" \
        --dir "$T/state" >"$T/table.txt" 2>"$T/bench.err" ||
        fail "the bench failed: $(tail -20 "$T/bench.err") $(tail -5 "$T/table.txt")"
echo "ok: BENCH=smoke ran in $(($(date +%s) - t0)) s"
cat "$T/table.txt"

# check.py TABLE OUT: the table's shape, figures.json's counts and every PNG; exit 1 naming
# the first thing wrong.
cat >"$T/check.py" <<'PY'
import json, re, struct, sys, zlib
table, out = sys.argv[1], sys.argv[2]
N = r"\d+\.\d"
NUMS = rf" +{N} +{N} +{N}"
NA = r" +n/a \(one warm jail, rebuilt in about a second: most runs would be cold\)"
MET = r"(met|not met)"
lat = lambda t, tcold, twarm: [
    rf"  anvil cold{NUMS} +\d+\.\d\dx +\d+\.\d\dx  {tcold}$",
    rf"  anvil warm{NUMS} +\d+\.\d\dx +\d+\.\d\dx  {twarm}$",
    rf"  bwrap --unshare-all python3 cold{NUMS} *$",
    rf"  python3 cold{NUMS} *$"]
conc = lambda n, target: [
    r"  runs/s with N clients" + r" +\d+" * n + r"   \(runs\)$",
    rf"  anvil cold(?: +{N}){{{n}}}   \(\d+\)$", rf"  anvil warm{NA}$",
    rf"  bwrap --unshare-all python3 cold(?: +{N}){{{n}}}   \(\d+\)$",
    rf"  python3 cold(?: +{N}){{{n}}}   \(\d+\)$",
    rf"  anvil cold best {N} runs/s, \d+\.\d\dx bwrap's best; target: >= {target} runs/s: {MET}$"]
want = [
    r"Anvil bench \(smoke\), \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: nproc \d+, kernel \S+, CPU .+$",
    r"load average \d+\.\d\d at the start, \d+\.\d\d at the end; \d+ s in all \(a \d+ s, b \d+ s, c \d+ s, "
    r"d \d+ s, e \d+ s\)\. Every figure observed in this run\.$",
    r"\(a\) print\(1\), request -> result \(3 runs each, interleaved\)$",
    *lat("a", rf"target: cold <= 1\.5x bwrap: {MET}", rf"target: warm <= 0\.6x bwrap: {MET}"),
    r"\(b\) pandas \+ matplotlib over data/sales\.csv \(1 run each\), request -> first tool line$",
    *lat("b", "", rf"target: warm <= 1/40 of bwrap: {MET}"),
    r"    request -> result$",
    *lat("b", "", rf"target: warm <= 0\.25x bwrap: {MET}"),
    r"\(c\) agent task, per step, against the scripted model \(1 task x 3 steps = 3 steps\)$",
    *[rf"  {w}{NUMS}$" for w in (r"step wall time +", r"the model's reply +", r"the tool's own run +",
                                 r"the run's wall_ms +", r"overhead: step - model - tool +")],
    rf"  anchors: n/a \(no agent loop\); target: overhead p50 <= 50 ms: {MET}$",
    r"\(d\) concurrent clients, print\(1\) \(each client starts runs for 0\.3 s\)$", *conc(2, 100),
    r"    pandas \+ matplotlib \(each client starts runs for 0\.1 s\)$", *conc(1, 20),
    r"\(e\) private memory, MiB \(USS = Private_Clean \+ Private_Dirty; PSS\), from /proc/PID/smaps_rollup$",
    rf"  anvil-supervisor +{N}(?: +{N}){{5}}$", rf"  anvil-broker +{N}(?: +{N}){{5}}$",
    rf"  per idle spare jail +{N} +{N}   \(mean of [12] spares, after the runs\)$",
    rf"  per idle warm jail +{N} +{N}   \(its runner has imported the data stack\)$",
    rf"  idle bwrap --unshare-all python3 +{N} +{N}   \(reading its stdin\)$",
    rf"  idle python3 +{N} +{N}   \(reading its stdin\)$",
    rf"  target: <= 30 MiB private per idle warm jail: {MET}$",
    r"  target: daemons' memory flat over 1000 runs \(USS growth after the warm-up <= 1 MiB \+ 5%\): "
    r"not judged \(\d+ runs; BENCH=full runs 1000\)$",
    r"plots and figures\.json written to .*/$"]
lines = open(table).read().split("\n")
i = 0
for w in want:
    while i < len(lines) and not re.match(w, lines[i]):
        i += 1
    if i == len(lines):
        sys.exit(f"the table has no line, in its order, matching {w!r}")
    i += 1
# p50 <= p99 in every row of (a) and (b) that has figures
for ln in lines:
    m = re.match(rf"  (anvil cold|bwrap --unshare-all python3 cold|python3 cold) +({N}) +({N}) +({N})", ln)
    if m and float(m.group(2)) > float(m.group(3)):
        sys.exit(f"p50 over p99: {ln}")
fig = json.load(open(f"{out}/figures.json"))
for k, n in (("trivial", 3), ("pandas", 1)):
    for s in ("anvil", "warm", "bwrap", "python"):
        if len(fig[k][s]["result"]) != n or len(fig[k][s]["first"]) != n:
            sys.exit(f"figures.json: {k} {s}: not {n} runs")
if len(fig["agent"]) != 3:
    sys.exit("figures.json: not 3 agent steps")

def png(path):
    b = open(path, "rb").read()
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: no PNG signature")
    pos, chunks, idat = 8, [], b""
    while pos < len(b):
        if pos + 12 > len(b):
            sys.exit(f"{path}: a chunk cut short at {pos}")
        n, typ = struct.unpack(">I4s", b[pos:pos + 8])
        data, crc = b[pos + 8:pos + 8 + n], b[pos + 8 + n:pos + 12 + n]
        if len(crc) != 4 or struct.unpack(">I", crc)[0] != zlib.crc32(typ + data):
            sys.exit(f"{path}: chunk {typ!r} at {pos}: a bad CRC")
        chunks.append(typ)
        if typ == b"IHDR":
            w, h, depth, ct = struct.unpack(">IIBB", data[:10])
        if typ == b"IDAT":
            idat += data
        pos += 12 + n
    if chunks[0] != b"IHDR" or chunks[-1] != b"IEND" or b"IDAT" not in chunks:
        sys.exit(f"{path}: chunks {chunks}")
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ct] * depth // 8
    if w == 0 or h == 0 or len(zlib.decompress(idat)) != h * (1 + w * bpp):
        sys.exit(f"{path}: the image data is not {w}x{h}")
for name in ("latency_trivial", "pandas", "agent_steps", "throughput", "memory"):
    png(f"{out}/{name}.png")
print("the table, figures.json and the plots are well formed")
PY
"$PY" "$T/check.py" "$T/table.txt" "$T/out" || fail "the bench's output"
echo "ok: the table's shape, figures.json's counts and five valid PNG plots"

# The control: the checker fails a table without its warm row, with a figure that is not a
# number, and a PNG with one byte changed.
cp -r "$T/out" "$T/bad"
grep -v "^  anvil warm" "$T/table.txt" >"$T/bad1.txt"
sed '0,/^  anvil cold /s/^\(  anvil cold *\)[0-9.]*/\1nan/' "$T/table.txt" >"$T/bad2.txt"
for bad in bad1 bad2; do
        cmp -s "$T/$bad.txt" "$T/table.txt" && fail "control $bad: the table was not changed"
        "$PY" "$T/check.py" "$T/$bad.txt" "$T/out" >/dev/null 2>&1 && fail "control $bad: a broken table passed"
done
"$PY" -c '
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0xff
open(p, "wb").write(b)' "$T/bad/memory.png"
"$PY" "$T/check.py" "$T/table.txt" "$T/bad" >"$T/bad3.out" 2>&1 && fail "control: a changed PNG passed"
grep -q "memory.png: " "$T/bad3.out" || fail "control: the changed PNG not named: $(cat "$T/bad3.out")"
echo "ok: control: a table without its warm row, a figure not a number and a changed PNG each fail"

# What it started is gone: no process with one of its jail uids, no state directory left.
# (the warm supervisor's jails are 1000 above the cold one's: bench.py WARM_UID_OFFSET)
left=$(ps -eo uid= | awk -v lo="$BASE" '{ u = $1 < 0 ? $1 + 4294967296 : $1 }
        (u > lo && u <= lo + 32) || (u > lo + 1000 && u <= lo + 1032)' | wc -l)
expect_eq "processes left with the bench's jail uids" 0 "$left"
expect_eq "state directories left" "" "$(ls -A "$T/state")"
echo "ok: the bench's daemons and jails are gone, its state directory removed"
