#!/usr/bin/python3
"""Anvil's benchmark (`make bench`): run by root on the host, outside any jail.

  bench.py --build DIR [--mode quick|full|smoke] [--out DIR] [--uid-base UID] [--dir PARENT] [--keep]

It starts a supervisor and a broker of its own (a state directory under /tmp, its own sockets,
its own uid base), measures, stops both by pid, and prints one table and writes PNG plots to
--out (default bench/out/). Every figure is observed in this run; the anchors, `bwrap
--unshare-all ... python3` cold and plain `python3` cold, run in the same run, interleaved
with Anvil's runs, so that the machine's load falls on all of them alike:
  (a) print(1), request -> result: p50, p99, mean;
  (b) a pandas + matplotlib tool over data/sales.csv: request -> first tool line, -> result;
  (c) an agent task's per-step overhead against the scripted model (tests/model_server.py):
      the step's wall time less the model's reply time and the tool's own run time, as the
      task's trace and TaskResult report them;
  (d) runs/s with 1, 2, 4, 8, 16 concurrent clients, trivial and pandas;
  (e) private memory (USS, PSS from /proc/PID/smaps_rollup) of each daemon idle and after N
      runs, and per idle spare jail, beside an idle bwrap + python3 and an idle python3.
The issue's targets are printed beside each ratio, met or not met as observed. Warm runs go
through a second supervisor with --warm 1 (warm_argv() below), each taken only once a warm
jail waits (the wait not timed); (d) has no warm column (one warm jail, rebuilt one at a time).
Needs root (the supervisor) and bubblewrap.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree, which root would own
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"  # Debian's, with the data stack; never one found earlier on PATH

# The forms: uncounted rounds first, runs of (a) per system, of (b), agent tasks x steps,
# seconds each client keeps starting runs in (d) (trivial, pandas), the client counts (trivial,
# pandas), and the runs (e) reads after. smoke is for t_bench_smoke (the table's shape).
MODES = {
    "smoke": dict(warmup=0, trivial=3, pandas=1, tasks=1, steps=3, conc_s=(0.3, 0.1), clients=(1, 2),
                  pclients=(1,), mem_runs=10),
    "quick": dict(warmup=2, trivial=30, pandas=4, tasks=2, steps=4, conc_s=(1.0, 1.0), clients=(1, 2, 4, 8, 16),
                  pclients=(1, 2, 4, 8, 16), mem_runs=200),
    "full": dict(warmup=3, trivial=200, pandas=20, tasks=5, steps=6, conc_s=(10.0, 10.0),
                 clients=(1, 2, 4, 8, 16), pclients=(1, 2, 4, 8, 16), mem_runs=1000),
}

MAX_RUNS = 32  # the supervisor's run slots: jail uids base+1..base+32, above the 16 clients of (d)

TRIVIAL = "print(1)\n"
# The first line comes after the imports: a warm jail's interpreter will have done them, so
# request -> first line is what a warm jail saves; -> result adds the work and the chart.
PANDAS = """import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
print("imported", flush=True)
sales = pd.read_csv("./inputs/sales.csv")
by_region = sales.groupby("region")["revenue"].sum().sort_values()
fig, ax = plt.subplots(figsize=(6, 4))
ax.bar(by_region.index, by_region.values)
fig.savefig("./artifacts/revenue.png", dpi=80)
print(f"regions: {len(by_region)}, total: {by_region.sum():.2f}")
"""
PANDAS_LAST = "regions: 5, total: 168947.33\n"
IDLE = "import sys; sys.stdin.read()"
# The anchors' environment: a few fixed variables, as Anvil's jails have (never the caller's)
ANCHOR_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}

# The anchor's jail: every namespace unshared, /usr read-only, and the three files of /etc that
# Anvil's jails bind too (policy/jail_paths.h): numpy finds its BLAS through /etc/alternatives.
BWRAP = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib",
         "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev",
         "/dev", "--tmpfs", "/tmp", "--ro-bind", "/etc/alternatives", "/etc/alternatives", "--ro-bind",
         "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try", "/etc/matplotlibrc", "/etc/matplotlibrc"]


WARM_UID_OFFSET = 1000  # the warm supervisor's jails: uid_base + 1000 + 1 and up


def warm_argv(ctl, tool, inputs):
    """THE WARM RUN (issue 16, part 1): a run through the warm pair of daemons (a supervisor
    with --warm 1 beside the cold one, so that neither's figures are the other's), asked for
    exactly as a cold run is; Bench.timed waits until its warm jail is waiting, which is not
    timed, and refuses a run that went cold (a cold figure is no warm one)."""
    return anvil_argv(ctl, tool, inputs)


def anvil_argv(ctl, tool, inputs):
    argv = [ctl, "run", tool, "--events", "--timeout", "120", "--cpu", "120"]
    for path in inputs:
        argv += ["--input", path]
    return argv


class Bench:
    def __init__(self, a):
        self.a = a
        self.m = MODES[a.mode]
        self.build = os.path.abspath(a.build)
        self.ctl = os.path.join(self.build, "anvilctl")
        self.dir = tempfile.mkdtemp(prefix="anvil-bench.", dir=a.dir)
        os.chmod(self.dir, 0o711)
        self.sock = os.path.join(self.dir, "anvil.sock")
        self.warm_sock = os.path.join(self.dir, "warm.sock")
        self.env = dict(os.environ, ANVIL_SOCKET=self.sock)
        self.pids = {}
        self.runs = 0  # runs through the daemons, counted for (e)
        self.lock = threading.Lock()
        self.sales = os.path.join(TOP, "data", "sales.csv")
        self.mpl = os.path.join(self.dir, "mpl")  # the anchors' matplotlib cache, built once

    # ---- the daemons ----
    def start(self):
        sup = [os.path.join(self.build, "anvil-supervisor"), "--config", "/dev/null", "--listen",
               os.path.join(self.dir, "sup.sock"), "--state-dir", os.path.join(self.dir, "sup"), "--keep-runs",
               "20", "--max-runs", str(MAX_RUNS), "--uid-base", str(self.a.uid_base)]
        self.daemon("supervisor", sup)
        bro = [os.path.join(self.build, "anvil-broker"), "--config", "/dev/null", "--supervisor",
               os.path.join(self.dir, "sup.sock"), "--listen", self.sock, "--state-dir",
               os.path.join(self.dir, "broker")]
        self.daemon("broker", bro)
        # The warm pair: one warm jail, refilled one at a time (supervisor/warm.c).
        wsup = [os.path.join(self.build, "anvil-supervisor"), "--config", "/dev/null", "--listen",
                os.path.join(self.dir, "wsup.sock"), "--state-dir", os.path.join(self.dir, "wsup"), "--keep-runs",
                "20", "--max-runs", str(MAX_RUNS), "--uid-base", str(self.a.uid_base + WARM_UID_OFFSET),
                "--warm", "1"]
        self.daemon("warm-supervisor", wsup)
        wbro = [os.path.join(self.build, "anvil-broker"), "--config", "/dev/null", "--supervisor",
                os.path.join(self.dir, "wsup.sock"), "--listen", self.warm_sock, "--state-dir",
                os.path.join(self.dir, "wbroker")]
        self.daemon("warm-broker", wbro)
        self.warm_taken = 0

    def daemon(self, name, argv):
        log = open(os.path.join(self.dir, name + ".log"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.pids[name] = p
        for _ in range(300):
            with open(log.name) as f:
                if ": listening on " in f.read():
                    return
            if p.poll() is not None:
                break
            time.sleep(0.1)
        raise SystemExit(f"bench: the {name} did not start: {open(log.name).read()[-2000:]}")

    def stop(self):
        for name in ("broker", "supervisor", "warm-broker", "warm-supervisor"):
            p = self.pids.get(name)
            if p and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if not self.a.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    # ---- the commands of each system ----
    def prepare(self):
        for kind, text in (("trivial", TRIVIAL), ("pandas", PANDAS)):
            # not pandas.py: a script's own directory comes first on sys.path
            with open(os.path.join(self.dir, f"tool_{kind}.py"), "w") as f:
                f.write(text)
        os.makedirs(self.mpl)
        # The anchors read a font cache built once, as Anvil's jails read the one its builder
        # uid made at start-up: neither pays matplotlib's first-run font scan per run.
        subprocess.run([PY, "-c", "import matplotlib.pyplot"], env=dict(ANCHOR_ENV, MPLCONFIGDIR=self.mpl),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def workdir(self):
        """A fresh work directory for one anchor run: inputs/sales.csv, artifacts/."""
        w = tempfile.mkdtemp(prefix="w.", dir=self.dir)
        os.makedirs(os.path.join(w, "inputs"))
        os.makedirs(os.path.join(w, "artifacts"))
        os.symlink(self.sales, os.path.join(w, "inputs", "sales.csv"))
        return w

    def argv(self, system, kind):
        """(argv, cwd, env, anvil?) for one run of kind trivial|pandas, or None (n/a)."""
        tool = os.path.join(self.dir, f"tool_{kind}.py")
        inputs = [self.sales] if kind == "pandas" else []
        if system == "anvil":
            return anvil_argv(self.ctl, tool, inputs), None, self.env, True
        if system == "warm":
            return warm_argv(self.ctl, tool, inputs), None, dict(self.env, ANVIL_SOCKET=self.warm_sock), True
        w = self.workdir()
        env = dict(ANCHOR_ENV, MPLCONFIGDIR=self.mpl)
        if system == "python":
            return [PY, tool], w, env, False
        argv = BWRAP + ["--dir", "/work", "--ro-bind", self.sales, "/work/inputs/sales.csv", "--bind",
                        os.path.join(w, "artifacts"), "/work/artifacts", "--ro-bind", tool, "/work/tool.py",
                        "--bind", self.mpl, "/mpl", "--setenv", "MPLCONFIGDIR", "/mpl", "--chdir", "/work",
                        PY, "tool.py"]
        return argv, None, env, False

    # ---- one timed run ----
    def timed(self, system, kind, quiet=False):
        """(first line s, result s) of one run, timed from its start; raises on a failed run."""
        spec = self.argv(system, kind)
        if spec is None:
            return None
        argv, cwd, env, anvil = spec
        # Every run, of any system, waits (untimed) until the warm supervisor has its jail
        # again: building one costs the imports' CPU, which must not fall on a timed run.
        self.wait_warm()
        if system == "warm":
            quiet = False  # the result must say the run took its warm jail
        out = subprocess.DEVNULL if quiet else subprocess.PIPE
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.PIPE)
        first, lines = None, []
        if not quiet:
            for line in p.stdout:
                if first is None and self.is_tool_line(line, anvil):
                    first = time.perf_counter() - t0
                lines.append(line)
        err = p.stderr.read()
        rc = p.wait()
        t = time.perf_counter() - t0
        if rc != 0 or (not quiet and not self.right(kind, lines, anvil)):
            said = (b"".join(lines)[-1500:] + b" " + err[-1500:]).decode(errors="replace")
            raise SystemExit(f"bench: a {system} {kind} run failed (exit {rc}): {said}")
        if system == "warm":
            evs = [json.loads(x) for x in lines if x.startswith(b"{")]
            res = [e for e in evs if e.get("type") == "run_result"][-1]
            if not any(e.get("kind") == "warm" for e in res.get("events", [])):
                cold = [e.get("message") for e in res.get("events", []) if e.get("kind") == "cold"]
                raise SystemExit(f"bench: a warm {kind} run got a cold jail: {cold}")
            self.warm_taken += 1
        elif anvil:
            with self.lock:
                self.runs += 1
        return first, t

    def wait_warm(self):
        """Until the warm supervisor has a warm jail waiting that no run took (not timed)."""
        log = os.path.join(self.dir, "warm-supervisor.log")
        for _ in range(600):
            with open(log) as f:
                if f.read().count(": a warm jail, waiting") > self.warm_taken:
                    return
            time.sleep(0.05)
        raise SystemExit(f"bench: no warm jail came: {open(log).read()[-1500:]}")

    @staticmethod
    def is_tool_line(line, anvil):
        if not anvil:
            return True
        try:
            ev = json.loads(line)
        except ValueError:
            return False
        return ev.get("type") == "run_output" and ev.get("stream") == "stdout"

    @staticmethod
    def right(kind, lines, anvil):
        """Whether the run printed what the tool prints: a wrong run is no figure."""
        if anvil:
            evs = [json.loads(x) for x in lines if x.startswith(b"{")]
            res = [e for e in evs if e.get("type") == "run_result"]
            text = "".join(e.get("text", "") for e in evs
                           if e.get("type") == "run_output" and e.get("stream") == "stdout")
            if not res or res[-1].get("status") != "ok":
                return False
        else:
            text = b"".join(lines).decode(errors="replace")
        return text == "1\n" if kind == "trivial" else PANDAS_LAST in text

    # ---- (a), (b): latency, interleaved ----
    def latency(self, kind, n, warmup):
        systems = ("anvil", "warm", "bwrap", "python")
        for _ in range(warmup):  # a warm-up of the page cache and the daemons, not counted
            for s in systems:
                self.timed(s, kind)
        got = {s: {"first": [], "result": []} for s in systems}
        for _ in range(n):
            for s in systems:
                r = self.timed(s, kind)
                if r is None:
                    got[s] = None
                    continue
                got[s]["first"].append(r[0])
                got[s]["result"].append(r[1])
        return got

    # ---- (d): runs/s with C clients ----
    def throughput(self, kind, clients, seconds):
        out = {}
        for s in ("anvil", "warm", "bwrap", "python"):
            if s == "warm":  # one warm jail, rebuilt in about a second: a rate of cold runs
                out[s] = None
                continue
            out[s] = {}
            for c in clients:
                out[s][c] = self.concurrent(s, kind, c, seconds)
        return out

    def concurrent(self, system, kind, clients, seconds):
        """Runs/s: C clients each start runs one after another for SECONDS; the rate is every
        run completed over the time until the last one ended (the tail included)."""
        count = [0] * clients
        errors = []
        t0 = time.perf_counter()
        stop = t0 + seconds

        def client(i):
            try:
                while True:
                    self.timed(system, kind, quiet=True)
                    count[i] += 1
                    if time.perf_counter() >= stop:
                        return
            except SystemExit as e:
                errors.append(str(e))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise SystemExit(errors[0])
        wall = time.perf_counter() - t0
        return {"runs": sum(count), "wall_s": wall, "rate": sum(count) / wall}

    # ---- (c): an agent task's steps ----
    def agent(self, tasks, steps):
        script = os.path.join(self.dir, "model.json")
        with open(script, "w") as f:
            json.dump(agent_script(steps) * tasks, f)
        port_file = os.path.join(self.dir, "model.port")
        srv = subprocess.Popen([PY, os.path.join(TOP, "tests", "model_server.py"), "--script", script,
                                "--port-file", port_file, "--log", os.path.join(self.dir, "model.jsonl")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                if os.path.exists(port_file) and os.path.getsize(port_file):
                    break
                time.sleep(0.1)
            port = open(port_file).read().strip()
            task = os.path.join(self.dir, "task.json")
            with open(task, "w") as f:
                json.dump({"task": "Count to the last step, then write it down.", "max_steps": steps,
                           "time_budget_s": 600, "model": {"url": f"http://127.0.0.1:{port}/v1",
                                                           "name": "scripted"}}, f)
            rows = []
            for _ in range(tasks):
                rows += self.one_task(task)
            return rows
        finally:
            srv.terminate()
            srv.wait()

    def one_task(self, task):
        p = subprocess.run([self.ctl, "submit", task, "--json"], env=self.env, capture_output=True)
        if p.returncode != 0:
            raise SystemExit(f"bench: the agent task failed (exit {p.returncode}): {p.stdout[-1500:]!r} "
                             f"{p.stderr[-1500:]!r}")
        tr = json.loads(p.stdout)
        self.runs += 1 + len(tr["steps"])  # the describe run, then one a step
        with open(os.path.join(self.dir, "broker", "traces", tr["task_id"] + ".jsonl")) as f:
            trace = [json.loads(x) for x in f]
        return step_overheads(trace, tr["steps"])

    # ---- (e): memory ----
    def memory(self):
        m = {}
        for name in ("supervisor", "broker"):
            m[name] = smaps(self.pids[name].pid)
        m["spares"] = self.spares()
        self.wait_warm()
        m["warm"] = self.spares(self.a.uid_base + WARM_UID_OFFSET, settle=False, warm=True)
        return m

    def spares(self, base=None, settle=True, warm=False):
        """Each idle jail: the processes with a jail uid of a base (base+1..base+MAX_RUNS; the
        cold supervisor's spares by default), grouped by pid namespace; returns [(uss, pss),
        ...] summed per jail. warm: only the jails with a runner (anvil-py) waiting in them, the
        warm supervisor's own cold spares left out."""
        base = self.a.uid_base if base is None else base
        if settle:
            time.sleep(1.0)  # spares are re-cloned after a run: let them settle
        jails, runners = {}, set()
        for pid in pids():
            uid = proc_uid(pid)
            if uid is None or not (base < uid <= base + MAX_RUNS):
                continue
            try:
                ns = os.readlink(f"/proc/{pid}/ns/pid")
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == "anvil-py":
                        runners.add(ns)
            except OSError:
                continue
            r = smaps(pid)
            if r:
                u, s = jails.get(ns, (0, 0))
                jails[ns] = (u + r[0], s + r[1])
        return sorted(v for ns, v in jails.items() if not warm or ns in runners)

    def anchor_idle(self, system):
        """USS, PSS of an idle anchor waiting on stdin: every process of its tree."""
        argv = [PY, "-c", IDLE] if system == "python" else BWRAP + [PY, "-c", IDLE]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=ANCHOR_ENV)
        try:
            time.sleep(0.5)
            u = s = 0
            for pid in [p.pid] + descendants(p.pid):
                r = smaps(pid)
                if r:
                    u, s = u + r[0], s + r[1]
            return u, s
        finally:
            p.stdin.close()
            p.wait()

    def more_runs(self, want):
        while self.runs < want:
            self.timed("anvil", "trivial")


def agent_script(steps):
    """The scripted model's replies for one task: steps-1 trivial actions, then a last one
    that writes an artifact and calls final_answer (the deliverable)."""
    def code(text):
        content = f"Thought: next step.\nCode:\n```py\n{text}```<end_code>\n"
        return {"body": {"id": "x", "object": "chat.completion", "model": "scripted",
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}]}}
    out = [code("x = 1\nprint(x)\n")]
    out += [code("x = x + 1\nprint(x)\n") for _ in range(steps - 2)]
    out.append(code('with open("artifacts/x.txt", "w") as f:\n    f.write(str(x))\nfinal_answer(x)\n'))
    return out


def step_overheads(trace, steps):
    """Per step, from the trace's t_ms: its wall time (model_request to the observation, or
    to the end for the last), the model's reply time (model_reply's ms), the tool's own run
    time (its run's events: started to finished) and the RunResult's wall_ms."""
    rows = []
    for k, st in enumerate(steps, 1):
        lines = [x for x in trace if x.get("step") == k]
        t_req = next(x["t_ms"] for x in lines if x["kind"] == "model_request")
        model = next(x["ms"] for x in lines if x["kind"] == "model_reply")
        t_end = next(x["t_ms"] for x in lines if x["kind"] in ("observation", "end"))
        ev = {e["kind"]: e["t_ms"] for e in st["run"]["events"]}
        tool = ev["finished"] - ev["started"]
        wall = t_end - t_req
        rows.append({"step_ms": wall, "model_ms": model, "tool_ms": tool, "run_wall_ms": st["run"]["wall_ms"],
                     "overhead_ms": wall - model - tool})
    return rows


def pids():
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def proc_uid(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def descendants(pid):
    kids = {}
    for p in pids():
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def smaps(pid):
    """(USS, PSS) in KiB from /proc/PID/smaps_rollup: USS = Private_Clean + Private_Dirty."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            v = {ln.split(":")[0]: int(ln.split()[1]) for ln in f if ln.endswith("kB\n")}
    except (OSError, ValueError, IndexError):
        return None
    return v.get("Private_Clean", 0) + v.get("Private_Dirty", 0), v.get("Pss", 0)


class Stages:
    """Calls a stage and adds its wall time to fig["stage_s"][NAME] (printed with the table)."""

    def __init__(self, fig):
        self.s = fig.setdefault("stage_s", {})

    def __call__(self, name, fn, *args):
        t = time.perf_counter()
        r = fn(*args)
        self.s[name] = self.s.get(name, 0) + time.perf_counter() - t
        return r


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "nproc": os.cpu_count(),
            "kernel": os.uname().release, "cpu": cpu, "load": os.getloadavg()}


def main():
    ap = argparse.ArgumentParser(description="Anvil's benchmark: a table and PNG plots (needs root)")
    ap.add_argument("--build", required=True)
    ap.add_argument("--mode", default=os.environ.get("BENCH") or "quick", choices=sorted(MODES))
    ap.add_argument("--out", default=os.path.join(TOP, "bench", "out"))
    ap.add_argument("--uid-base", type=int, default=3900000000)
    ap.add_argument("--dir", default="/tmp", help="where the state directory is made (default /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the state directory (its path is printed)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench: needs root (it starts a supervisor, which builds the jails)")
    if not shutil.which("bwrap"):
        raise SystemExit("bench: needs bubblewrap (bwrap) for the anchor: make deps installs it")
    import report  # bench/report.py: the table and the plots (matplotlib), once it can run

    b = Bench(a)
    m = b.m
    fig = {"mode": a.mode, "machine": machine(), "counts": dict(m)}
    t0 = time.perf_counter()
    try:
        b.prepare()
        b.start()
        stage = Stages(fig)
        fig["mem_start"] = b.memory()
        fig["trivial"] = stage("a", b.latency, "trivial", m["trivial"], m["warmup"])
        fig["mem_warmup"] = b.memory()
        fig["runs_warmup"] = b.runs
        fig["pandas"] = stage("b", b.latency, "pandas", m["pandas"], m["warmup"])
        fig["agent"] = stage("c", b.agent, m["tasks"], m["steps"])
        fig["conc_trivial"] = stage("d", b.throughput, "trivial", m["clients"], m["conc_s"][0])
        fig["conc_pandas"] = stage("d", b.throughput, "pandas", m["pclients"], m["conc_s"][1])
        stage("e", b.more_runs, m["mem_runs"] + fig["runs_warmup"])
        fig["mem_after"] = b.memory()
        fig["runs_after"] = b.runs - fig["runs_warmup"]
        fig["anchor_mem"] = {s: b.anchor_idle(s) for s in ("bwrap", "python")}
    finally:
        b.stop()
    fig["machine"]["load_end"] = os.getloadavg()
    fig["elapsed_s"] = time.perf_counter() - t0
    report.table(fig, sys.stdout)
    os.makedirs(a.out, exist_ok=True)
    report.plots(fig, a.out)
    with open(os.path.join(a.out, "figures.json"), "w") as f:
        json.dump(fig, f, indent=1)
    print(f"plots and figures.json written to {a.out}/")
    if a.keep:
        print(f"state kept in {b.dir}")


if __name__ == "__main__":
    main()
