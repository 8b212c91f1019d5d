#!/usr/bin/python3
"""Two builds side by side, in one run: (a) print(1) and (b) the pandas tool, cold and warm,
each build's runs interleaved with the other's and with bwrap's, so that the machine's load
falls on all alike (bench.py's daemons, runs and checks, twice over).

  bench/ab.py --build BEFORE --build AFTER [-n RUNS] [--pandas RUNS] [--uid-base UID]

Before each timed run both builds' warm supervisors have their warm jail waiting (untimed), so
that neither's refill falls on the other's run. Prints the p50s and means in ms. Needs root."""
import argparse
import os
import statistics
import sys
import types

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", action="append", required=True)
    ap.add_argument("-n", type=int, default=30, help="print(1) runs of each (default 30)")
    ap.add_argument("--pandas", type=int, default=6, help="pandas runs of each (default 6)")
    ap.add_argument("--uid-base", type=int, default=3800000000)
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("ab: needs root")
    benches = []
    for i, build in enumerate(a.build):
        ns = types.SimpleNamespace(build=build, mode="quick", dir="/tmp", keep=False,
                                   uid_base=a.uid_base + i * 100000)
        benches.append(bench.Bench(ns))
    try:
        for b in benches:
            b.prepare()
            b.start()
        rows = {}
        for kind, n in (("trivial", a.n), ("pandas", a.pandas)):
            for rnd in range(n + 1):  # the first round is a warm-up, not counted
                for i, b in enumerate(benches):
                    for system in ("anvil", "warm") + (("bwrap",) if i == 0 else ()):
                        for other in benches:
                            if other is not b:
                                other.wait_warm()
                        first, t = b.timed(system, kind)
                        if rnd:
                            name = "bwrap" if system == "bwrap" else f"{a.build[i]} {system}"
                            r = rows.setdefault((kind, name), {"first": [], "result": []})
                            r["first"].append(first)
                            r["result"].append(t)
        print(f"{'tool':8} {'system':40} {'n':>3} {'p50 ms':>8} {'mean ms':>8} {'first p50':>10}")
        for (kind, name), r in rows.items():
            res = [x * 1000 for x in r["result"]]
            fst = [x * 1000 for x in r["first"] if x is not None]
            print(f"{kind:8} {name:40} {len(res):3} {statistics.median(res):8.1f} {statistics.mean(res):8.1f} "
                  f"{statistics.median(fst) if fst else float('nan'):10.1f}")
        print(f"load average at the end: {os.getloadavg()}")
    finally:
        for b in benches:
            b.stop()


if __name__ == "__main__":
    main()
