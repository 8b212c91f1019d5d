"""The benchmark's table and plots (bench/bench.py's figures): run by root on the host, with
bench.py, after the daemons are stopped. Every figure printed is one bench.py observed; the
targets are issue 16's, printed beside the ratio they judge, met or not met as observed, or
n/a where the figure does not exist yet. The plots are matplotlib (Agg) PNG files."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# (d) has no warm figure: the bench's warm supervisor has one warm jail (--warm 1), rebuilt one at
# a time in about a second of imports (supervisor/warm.c), so concurrent clients would mostly
# time cold jails under the warm name.
NA_WARM = "n/a (one warm jail, rebuilt in about a second: most runs would be cold)"
NAMES = {"anvil": "anvil cold", "warm": "anvil warm", "bwrap": "bwrap --unshare-all python3 cold",
         "python": "python3 cold"}
ORDER = ("anvil", "warm", "bwrap", "python")
FLAT_RUNS = 1000  # the target's "flat over 1000 runs"


def pct(xs, p):
    """The p-th percentile by nearest rank (p99 of fewer than 100 runs is their slowest)."""
    s = sorted(xs)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def mean(xs):
    return sum(xs) / len(xs)


def count(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def verdict(ok, target):
    return f"{target}: {'met' if ok else 'not met'}"


def ratio(x, y):
    return f"{x / y:5.2f}x" if y else "  n/a"


def latency_rows(out, title, got, key, targets):
    """Rows of p50/p99/mean ms and the ratios of p50 to the anchors'; targets: {system:
    (max ratio to bwrap's p50, its words)}."""
    out.write(f"{title}\n")
    out.write(f"  {'':34} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}  {'p50/bwrap':>9} {'p50/python':>10}  target\n")
    b50 = pct(got["bwrap"][key], 50)
    p50 = pct(got["python"][key], 50)
    for s in ORDER:
        tgt = targets.get(s)
        if got[s] is None:
            words = f"{tgt[1]}: n/a" if tgt else ""
            out.write(f"  {NAMES[s]:34} {NA_WARM:>47}  {words}\n")
            continue
        xs = [x * 1000 for x in got[s][key]]
        m50 = pct(xs, 50)
        words = verdict(m50 / (b50 * 1000) <= tgt[0], tgt[1]) if tgt else ""
        r = f"{ratio(m50, b50 * 1000):>9} {ratio(m50, p50 * 1000):>10}" if s in ("anvil", "warm") else " " * 20
        out.write(f"  {NAMES[s]:34} {m50:8.1f} {pct(xs, 99):8.1f} {mean(xs):8.1f}  {r}  {words}\n")


def agent_rows(out, rows, fig):
    c = fig["counts"]
    out.write(f"(c) agent task, per step, against the scripted model ({count(c['tasks'], 'task')} x "
              f"{c['steps']} steps = {len(rows)} steps)\n")
    out.write(f"  {'':34} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}\n")
    for key, words in (("step_ms", "step wall time"), ("model_ms", "the model's reply"),
                       ("tool_ms", "the tool's own run"), ("run_wall_ms", "the run's wall_ms"),
                       ("overhead_ms", "overhead: step - model - tool")):
        xs = [r[key] for r in rows]
        out.write(f"  {words:34} {pct(xs, 50):8.1f} {pct(xs, 99):8.1f} {mean(xs):8.1f}\n")
    ov = pct([r["overhead_ms"] for r in rows], 50)
    out.write(f"  anchors: n/a (no agent loop); {verdict(ov <= 50, 'target: overhead p50 <= 50 ms')}\n")


def conc_rows(out, title, got, clients, target):
    out.write(f"{title}\n")
    out.write(f"  {'runs/s with N clients':34}" + "".join(f" {c:>7}" for c in clients) + "   (runs)\n")
    for s in ORDER:
        if got[s] is None:
            out.write(f"  {NAMES[s]:34} {NA_WARM}\n")
            continue
        runs = sum(got[s][c]["runs"] for c in clients)
        out.write(f"  {NAMES[s]:34}" + "".join(f" {got[s][c]['rate']:7.1f}" for c in clients) + f"   ({runs})\n")
    best = max(got["anvil"][c]["rate"] for c in clients)
    b = max(got["bwrap"][c]["rate"] for c in clients)
    out.write(f"  anvil cold best {best:.1f} runs/s, {best / b:.2f}x bwrap's best; "
              f"{verdict(best >= target, f'target: >= {target} runs/s')}\n")


def mib(kib):
    return kib / 1024


def memory_rows(out, fig):
    n = fig["runs_after"]
    out.write("(e) private memory, MiB (USS = Private_Clean + Private_Dirty; PSS), from /proc/PID/smaps_rollup\n")
    out.write(f"  {'':34} {'at start':>15} {'after warm-up':>15} {'after N runs':>15}   (N = {n})\n")
    out.write(f"  {'':34}" + f" {'USS':>7} {'PSS':>7}" * 3 + "\n")
    flat = True
    for d in ("supervisor", "broker"):
        cells = []
        for k in ("mem_start", "mem_warmup", "mem_after"):
            u, s = fig[k][d] or (0, 0)
            cells.append(f"{mib(u):7.1f} {mib(s):7.1f}")
        out.write(f"  {'anvil-' + d:34} " + " ".join(cells) + "\n")
        w, a = fig["mem_warmup"][d][0], fig["mem_after"][d][0]
        flat = flat and a - w <= 1024 + 0.05 * w
    sp = fig["mem_after"]["spares"]
    if sp:
        out.write(f"  {'per idle spare jail':34} {mib(mean([x[0] for x in sp])):7.1f} "
                  f"{mib(mean([x[1] for x in sp])):7.1f}   (mean of {len(sp)} spares, after the runs)\n")
    else:
        out.write(f"  {'per idle spare jail':34} none found\n")
    wj = fig["mem_after"].get("warm") or []
    if wj:
        out.write(f"  {'per idle warm jail':34} {mib(mean([x[0] for x in wj])):7.1f} "
                  f"{mib(mean([x[1] for x in wj])):7.1f}   (its runner has imported the data stack)\n")
    else:
        out.write(f"  {'per idle warm jail':34} none found\n")
    for s in ("bwrap", "python"):
        u, p = fig["anchor_mem"][s]
        what = "idle bwrap --unshare-all python3" if s == "bwrap" else "idle python3"
        out.write(f"  {what:34} {mib(u):7.1f} {mib(p):7.1f}   (reading its stdin)\n")
    if wj:
        out.write(f"  {verdict(mib(mean([x[0] for x in wj])) <= 30, 'target: <= 30 MiB private per idle warm jail')}\n")
    else:
        out.write("  target: <= 30 MiB private per idle warm jail: n/a\n")
    words = "target: daemons' memory flat over 1000 runs (USS growth after the warm-up <= 1 MiB + 5%)"
    if n >= FLAT_RUNS:
        out.write(f"  {verdict(flat, words)}\n")
    else:
        out.write(f"  {words}: not judged ({n} runs; BENCH=full runs {FLAT_RUNS})\n")


def table(fig, out):
    m, c = fig["machine"], fig["counts"]
    out.write(f"Anvil bench ({fig['mode']}), {m['date']}: nproc {m['nproc']}, kernel {m['kernel']}, "
              f"CPU {m['cpu']}\n")
    out.write(f"load average {m['load'][0]:.2f} at the start, {m['load_end'][0]:.2f} at the end; "
              f"{fig['elapsed_s']:.0f} s in all (" + ", ".join(f"{k} {v:.0f} s" for k, v in fig["stage_s"].items())
              + "). Every figure observed in this run.\n\n")
    latency_rows(out, f"(a) print(1), request -> result ({count(c['trivial'], 'run')} each, interleaved)",
                 fig["trivial"], "result", {"anvil": (1.5, "target: cold <= 1.5x bwrap"),
                            "warm": (0.6, "target: warm <= 0.6x bwrap")})
    out.write("\n")
    latency_rows(out, f"(b) pandas + matplotlib over data/sales.csv ({count(c['pandas'], 'run')} each), "
                 "request -> first tool line", fig["pandas"], "first",
                 {"warm": (1 / 40, "target: warm <= 1/40 of bwrap")})
    latency_rows(out, "    request -> result", fig["pandas"], "result",
                 {"warm": (0.25, "target: warm <= 0.25x bwrap")})
    out.write("\n")
    agent_rows(out, fig["agent"], fig)
    out.write("\n")
    s = c["conc_s"]
    conc_rows(out, f"(d) concurrent clients, print(1) (each client starts runs for {s[0]} s)", fig["conc_trivial"],
              c["clients"], 100)
    conc_rows(out, f"    pandas + matplotlib (each client starts runs for {s[1]} s)", fig["conc_pandas"],
              c["pclients"], 20)
    out.write("\n")
    memory_rows(out, fig)


def plots(fig, d):
    """One PNG a figure into D: latency_trivial, pandas, agent_steps, throughput, memory."""
    stamp = f"{fig['machine']['date']}, nproc {fig['machine']['nproc']}, {fig['mode']}"
    live = [s for s in ORDER if fig["trivial"][s] is not None]

    f, ax = plt.subplots(figsize=(8, 4.5))
    ax.boxplot([[x * 1000 for x in fig["trivial"][s]["result"]] for s in live], labels=[NAMES[s] for s in live])
    ax.set_ylabel("request -> result, ms")
    ax.set_title(f"(a) print(1) ({stamp})", fontsize=9)
    ax.tick_params(axis="x", labelsize=7)
    save(f, d, "latency_trivial.png")

    f, ax = plt.subplots(figsize=(8, 4.5))
    live = [s for s in ORDER if fig["pandas"][s] is not None]
    xs = range(len(live))
    ax.bar([x - 0.2 for x in xs], [pct(fig["pandas"][s]["first"], 50) * 1000 for s in live], 0.4,
           label="-> first tool line (p50)")
    ax.bar([x + 0.2 for x in xs], [pct(fig["pandas"][s]["result"], 50) * 1000 for s in live], 0.4,
           label="-> result (p50)")
    ax.set_xticks(list(xs), [NAMES[s] for s in live], fontsize=7)
    ax.set_ylabel("ms")
    ax.legend()
    ax.set_title(f"(b) pandas + matplotlib over sales.csv ({stamp})", fontsize=9)
    save(f, d, "pandas.png")

    f, ax = plt.subplots(figsize=(8, 4.5))
    rows = fig["agent"]
    xs = range(1, len(rows) + 1)
    bottom = [0] * len(rows)
    for key, label in (("model_ms", "model's reply"), ("tool_ms", "tool's own run"), ("overhead_ms", "overhead")):
        v = [r[key] for r in rows]
        ax.bar(list(xs), v, bottom=bottom, label=label)
        bottom = [a + b for a, b in zip(bottom, v)]
    ax.axhline(50, color="grey", linestyle=":", label="target overhead 50 ms")
    ax.set_xlabel("step (all tasks in order)")
    ax.set_ylabel("ms")
    ax.legend()
    ax.set_title(f"(c) agent step against the scripted model ({stamp})", fontsize=9)
    save(f, d, "agent_steps.png")

    f, axes = plt.subplots(1, 2, figsize=(10, 4.5))
    for ax, key, title in ((axes[0], "conc_trivial", "print(1)"), (axes[1], "conc_pandas", "pandas + matplotlib")):
        for s in ORDER:
            g = fig[key][s]
            if g is None:
                continue
            cs = sorted(g, key=int)
            ax.plot([int(c) for c in cs], [g[c]["rate"] for c in cs], marker="o", label=NAMES[s])
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrent clients")
        ax.set_ylabel("runs/s")
        ax.set_title(f"(d) {title}", fontsize=9)
        ax.legend(fontsize=7)
    f.suptitle(f"{stamp}; anvil warm: {NA_WARM}", fontsize=9)
    save(f, d, "throughput.png")

    f, ax = plt.subplots(figsize=(8, 4.5))
    items = [("supervisor idle", fig["mem_warmup"]["supervisor"]), ("supervisor after", fig["mem_after"]["supervisor"]),
             ("broker idle", fig["mem_warmup"]["broker"]), ("broker after", fig["mem_after"]["broker"])]
    sp = fig["mem_after"]["spares"]
    if sp:
        items.append(("idle spare jail", (mean([x[0] for x in sp]), mean([x[1] for x in sp]))))
    wj = fig["mem_after"].get("warm") or []
    if wj:
        items.append(("idle warm jail", (mean([x[0] for x in wj]), mean([x[1] for x in wj]))))
    items += [("idle bwrap+python3", fig["anchor_mem"]["bwrap"]), ("idle python3", fig["anchor_mem"]["python"])]
    xs = range(len(items))
    ax.bar([x - 0.2 for x in xs], [mib(v[0]) for _, v in items], 0.4, label="USS")
    ax.bar([x + 0.2 for x in xs], [mib(v[1]) for _, v in items], 0.4, label="PSS")
    ax.set_xticks(list(xs), [n for n, _ in items], fontsize=7, rotation=20)
    ax.set_ylabel("MiB")
    ax.legend()
    ax.set_title(f"(e) private memory, after {fig['runs_after']} runs ({stamp})", fontsize=9)
    save(f, d, "memory.png")


def save(f, d, name):
    f.tight_layout()
    f.savefig(f"{d}/{name}", dpi=90)
    plt.close(f)
