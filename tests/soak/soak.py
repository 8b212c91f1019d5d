#!/usr/bin/python3
"""The soak (issue 9, deliverable 6): many runs of a mixed set from concurrent clients
through the broker, against a supervisor and a broker started here (a state directory and a
uid base of their own), then the checks that nothing leaked and every result was right.

  soak.py --build DIR --uid-base UID [--runs 500] [--clients 16] [--warmup N] [--max-runs N]
          [--keep-runs 50] [--sup-opts '--spares 0'] [--dir PARENT] [--as-user USER] [--keep]

The mix, in a fixed shuffled order: tools that end well, pandas over data/sales.csv writing
a CSV and a chart, escape attempts (tests/escapes, examples/escapes) refused with the
message their header (or t_escapes.sh) states, timeouts, memory kills, tools writing
artifacts, tools that fail. Each client runs `anvilctl run ... --json` one after another,
and tries again after a "busy" refusal (all run slots in use, with --max-runs below the
clients), counting it.

First a warm-up (by default 2 runs a client, at least a tenth of --runs), then the measured
runs. At idle after each, the figures of both daemons are read: fds (/proc/PID/fd), RSS
(VmRSS), mounts (their /proc/PID/mountinfo and ours); after the measured runs:
  - fds back to the warm-up's baseline (waited for up to 30 s: spares are re-cloned), the
    namespaces the supervisor holds apart (it holds its spares', when it managed to open
    them), each of which must be one a child of its own is in;
  - RSS within the tolerance of the warm-up's (--rss-tolerance-pct of it plus
    --rss-tolerance-mib): growth past a warm-up is a leak, the warm-up's own is the heap
    finding its size;
  - no cgroup below the supervisor's bases without a live spare in it;
  - no new mount below the soak's directory or with one of its uids, in any mount table;
  - at most --keep-runs run directories;
  - no zombie child of either daemon;
  - every result right for its kind, and stored in the broker's results/.
A daemon that dies during the soak is reported at once, with its exit, the last lines of its
log and the kernel's last word on it, and the soak fails. Exit 0 when every check passed.
--as-user: the supervisor runs as that user (the rootless pass); the broker as the caller.
"""
import argparse
import hashlib
import json
import os
import queue
import random
import re
import signal
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"

TOOLS = {
    "ok.py": "print(sum(i * i for i in range(1000)))\n",
    "fail.py": "raise ValueError('soak failure')\n",
    "sleep.py": "import time\nprint('sleeping', flush=True)\ntime.sleep(60)\n",
    "hog.py": "chunks = []\nwhile True:\n    chunks.append(b'x' * (8 * 1024 * 1024))\n",
    "arts.py": (
        "import os\n"
        "os.makedirs('artifacts/sub')\n"
        "open('artifacts/a.txt', 'w').write('soak a\\n')\n"
        "open('artifacts/sub/b.bin', 'wb').write(bytes(range(256)) * 16)\n"
        "print('wrote 2')\n"
    ),
}
ARTS = {"a.txt": b"soak a\n", "sub/b.bin": bytes(range(256)) * 16}
# examples/escapes, as tests/e2e/t_escapes.sh expects them.
EXAMPLE_ESCAPES = {
    "net_connect.py": ("blocked", "precheck", "blocked: import socket (network denied by policy)"),
    "fork.py": ("blocked", "precheck", "blocked: os.fork (process creation denied by policy)"),
    "write_outside.py": ("blocked", "precheck",
                         "blocked: write path './artifacts/../outside.txt' outside ALLOWED_WRITE_PATHS (./artifacts)"),
    "read_passwd.py": ("ok", "audit", "blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)"),
}
# One cycle of the mix: ten runs.
CYCLE = ["ok", "pandas", "escape", "ok", "timeout", "escape", "memory", "artifacts", "failure", "escape"]
LONG = ["--timeout", "120", "--cpu", "60"]  # no legitimate run may be cut by the load


def escapes():
    """(path, status, layer, message) for each escape attempt."""
    out = []
    d = os.path.join(TOP, "tests", "escapes")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".py"):
            continue
        h = {}
        with open(os.path.join(d, name)) as f:
            for line in f:
                m = re.match(r"^# ([a-z-]+): (.*?)\s*$", line)
                if not m:
                    break
                h[m.group(1)] = m.group(2)
        if {"expect-status", "expect-layer", "expect-message"} <= h.keys():
            out.append((os.path.join(d, name), h["expect-status"], h["expect-layer"], h["expect-message"]))
    for name, (st, layer, msg) in EXAMPLE_ESCAPES.items():
        out.append((os.path.join(TOP, "examples", "escapes", name), st, layer, msg))
    return out


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def reference_csv(work):
    """The example's CSV as Debian's python3 writes it on the host, or None."""
    d = os.path.join(work, "reference")
    os.makedirs(os.path.join(d, "inputs"))
    os.makedirs(os.path.join(d, "artifacts"))
    shutil.copy(os.path.join(TOP, "data", "sales.csv"), os.path.join(d, "inputs"))
    r = subprocess.run([PY, os.path.join(TOP, "examples", "revenue_by_region.py")], cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    if r.returncode != 0:
        return None
    with open(os.path.join(d, "artifacts", "revenue_by_region.csv"), "rb") as f:
        return sha256(f.read())


class Job:
    def __init__(self, kind, argv, check):
        self.kind, self.argv, self.check = kind, argv, check


# Host copies checked, and results whose run directory retention had already removed when
# the client read them (a run that ends after --keep-runs runs started later than it).
HOST_COPIES = {"checked": 0, "pruned": 0}
HOST_COPIES_LOCK = threading.Lock()


def make_jobs(n, work, seed, esc, ref_csv):
    tools = os.path.join(work, "tools")
    t = lambda name: os.path.join(tools, name)

    def artifacts_ok(res, want):
        errs = []
        got = {a["path"]: a for a in res.get("artifacts") or []}
        if sorted(got) != sorted(want):
            return ["artifacts %s, expected %s" % (sorted(got), sorted(want))]
        rundir = os.path.dirname(res.get("artifacts_dir") or "")
        present = os.path.isdir(rundir)
        with HOST_COPIES_LOCK:
            HOST_COPIES["checked" if present else "pruned"] += 1
        for path, sha in want.items():
            if sha and got[path]["sha256"] != sha:
                errs.append("artifact %s: sha256 %s, expected %s" % (path, got[path]["sha256"], sha))
            if not present:
                continue
            host = os.path.join(res.get("artifacts_dir") or "", path)
            try:
                with open(host, "rb") as f:
                    if sha256(f.read()) != got[path]["sha256"]:
                        errs.append("the host copy of %s is not what was listed" % path)
            except OSError as e:
                if not os.path.isdir(rundir):  # retention removed it meanwhile
                    with HOST_COPIES_LOCK:
                        HOST_COPIES["checked"] -= 1
                        HOST_COPIES["pruned"] += 1
                    return errs
                errs.append("the host copy of %s: %s" % (path, e))
        return errs

    def status(res, st, **fields):
        errs = [] if res.get("status") == st else ["status %s, expected %s" % (res.get("status"), st)]
        for k, v in fields.items():
            got = res.get(k)
            if (v.match(got or "") is None) if hasattr(v, "match") else got != v:
                errs.append("%s is %r, expected %r" % (k, got, getattr(v, "pattern", v)))
        return errs

    def escape_check(st, layer, msg):
        def check(res):
            errs = status(res, st)
            if not any(e.get("layer") == layer and e.get("kind") == "blocked" and e.get("message") == msg
                       for e in res.get("events") or []):
                errs.append("no %s refusal '%s'" % (layer, msg))
            if any(line.startswith("ESCAPED") for line in (res.get("stdout") or "").splitlines()):
                errs.append("the attempt got through: %s" % res.get("stdout")[:200])
            return errs
        return check

    pandas_want = {"revenue_by_region.csv": ref_csv, "revenue_by_region.png": None}
    kinds = {
        "ok": lambda: Job("ok", [t("ok.py")] + LONG,
                          lambda r: status(r, "ok", exit_code=0, stdout="332833500\n")),
        "pandas": lambda: Job("pandas", [os.path.join(TOP, "examples", "revenue_by_region.py"), "--input",
                                         os.path.join(TOP, "data", "sales.csv")] + LONG,
                              lambda r: status(r, "ok", exit_code=0) + artifacts_ok(r, pandas_want)),
        "timeout": lambda: Job("timeout", [t("sleep.py"), "--timeout", "2"],
                               lambda r: status(r, "killed", killed="killed: timeout")),
        "memory": lambda: Job("memory", [t("hog.py"), "--memory", "100"] + LONG,
                              lambda r: status(r, "killed", killed=re.compile(
                                  r"^killed: memory \(peak [0-9.]+ MB > 100 MB cap\)$"))),
        "artifacts": lambda: Job("artifacts", [t("arts.py")] + LONG,
                                 lambda r: status(r, "ok", stdout="wrote 2\n") +
                                 artifacts_ok(r, {p: sha256(d) for p, d in ARTS.items()})),
        "failure": lambda: Job("failure", [t("fail.py")] + LONG,
                               lambda r: status(r, "error", exit_code=1) +
                               ([] if "ValueError: soak failure" in (r.get("stderr") or "") else
                                ["stderr has no 'ValueError: soak failure'"])),
    }
    rng = random.Random(seed)
    order = [CYCLE[i % len(CYCLE)] for i in range(n)]
    rng.shuffle(order)
    jobs, k = [], 0
    for kind in order:
        if kind == "escape":
            path, st, layer, msg = esc[k % len(esc)]
            k += 1
            jobs.append(Job("escape", [path] + LONG, escape_check(st, layer, msg)))
        else:
            jobs.append(kinds[kind]())
    return jobs


# ---- the daemons ----

class Daemon:
    def __init__(self, name, argv, log, wrap=()):
        self.name, self.log = name, log
        self.proc = subprocess.Popen(list(wrap) + argv, stdout=open(log, "ab"), stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid
        DAEMONS.append(self)

    def alive(self):
        return self.proc.poll() is None

    def fds(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    NS = ("mnt", "net", "ipc", "pid")

    def held_ns(self):
        """The namespaces it holds fds of ("mnt:[4026532...]"), and those of them that no child
        of its own is in: the supervisor holds its spares' (and live runs') namespaces, and
        whether it has opened them yet varies, so they are counted apart, each accounted for."""
        held = []
        d = "/proc/%d/fd" % self.pid
        for fd in os.listdir(d):
            try:
                t = os.readlink(os.path.join(d, fd))
            except OSError:
                continue
            if t.split(":")[0] in self.NS:
                held.append(t)
        live = set()
        for p in os.listdir("/proc"):
            try:
                if not p.isdigit() or int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1]) != self.pid:
                    continue
                for ns in self.NS:
                    live.add(os.readlink("/proc/%s/ns/%s" % (p, ns)))
            except (OSError, IndexError, ValueError):
                continue
        return held, [t for t in held if t not in live]

    def fd_kinds(self):
        """What its fds are, by kind: "socket", "pipe", "anon_inode:[pidfd]", a path."""
        kinds = {}
        d = "/proc/%d/fd" % self.pid
        for fd in os.listdir(d):
            try:
                k = re.sub(r":\[\d+\]$", "", os.readlink(os.path.join(d, fd)))
            except OSError:
                continue
            kinds[k] = kinds.get(k, 0) + 1
        return kinds

    def rss_kib(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def how_it_ended(self):
        rc = self.proc.returncode
        if rc is None:
            return "still running"
        if rc < 0:
            return "killed by signal %d (%s)" % (-rc, signal.Signals(-rc).name)
        return "exited with status %d" % rc

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait_for(what, pred, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return "(%s)" % e


def kernel_says(pid):
    """The kernel log's lines about pid (a segfault's), where it can be read."""
    r = subprocess.run(["dmesg"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return [line for line in r.stdout.splitlines() if "[%d]" % pid in line][-5:]


# ---- what is read at idle ----

def mounts(pid, work, uids):
    """The mounts of pid's table that are the soak's: below its directory, or of its uids."""
    out = set()
    with open("/proc/%s/mountinfo" % pid) as f:
        for line in f:
            fields = line.split()
            point = fields[4]
            opts = " ".join(fields[fields.index("-") + 1:])
            ids = {int(x) for x in re.findall(r"\b[ug]id=(\d+)", opts)}
            if point.startswith(work) or ids & uids:
                out.add(line.strip())
    return out


def count_mounts(pid):
    with open("/proc/%s/mountinfo" % pid) as f:
        return sum(1 for _ in f)


def cgroups(log):
    """Run cgroups below the bases the supervisor's log names, and those with no live spare."""
    bases = set(re.findall(r": cgroup base \([a-z]+\): (.*)$", open(log, errors="replace").read(), re.M))
    found, empty = [], []
    for b in bases:
        if not os.path.isdir(b):
            continue
        for e in os.listdir(b):
            p = os.path.join(b, e)
            if not os.path.isdir(p):
                continue
            found.append(p)
            try:
                procs = open(os.path.join(p, "cgroup.procs")).read().split()
            except OSError:
                procs = []
            if not procs:
                empty.append(p)
    return found, empty


def zombies(pid):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % p).read()
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2:].split()
        if rest[0] == "Z" and int(rest[1]) == pid:
            out.append(int(p))
    return out


def settle(daemons, timeout=30):
    """Waits until every daemon's fd count, those of held namespaces apart, has held still for
    2 s: the runs' teardowns done, the spares cloned again. Returns {name: fds}."""
    end, last, still = time.time() + timeout, None, 0
    while time.time() < end:
        now = {d.name: d.fds() - len(d.held_ns()[0]) for d in daemons if d.alive()}
        still = still + 1 if now == last else 0
        last = now
        if still >= 8:
            break
        time.sleep(0.25)
    return last


def snapshot(daemons, work, uids):
    fds = settle(daemons)
    return {
        "fds": fds,
        "ns": {d.name: d.held_ns() for d in daemons if d.alive()},
        "fd_kinds": {d.name: d.fd_kinds() for d in daemons if d.alive()},
        "rss": {d.name: d.rss_kib() for d in daemons if d.alive()},
        "mounts": {d.name: mounts(d.pid, work, uids) for d in daemons if d.alive()} | {"self": mounts("self", work, uids)},
        "mount_count": count_mounts("self"),
    }


# ---- controls: each check sees what it looks for ----

def controls(work, uid, jobs):
    """Real kernel objects of each kind the checks look for, made here and checked for:
    a zombie, a mount of the soak's (a tmpfs below its directory, with its uid), an empty
    cgroup-like directory below a base a log names, a namespace held by a process none of
    whose children is in it, a daemon killed by SIGSEGV, and for each kind of run a result
    that is not right. Returns what did not see its object."""
    bad = []
    p = subprocess.Popen([PY, "-c", "import os, time\nif os.fork() == 0: os._exit(0)\ntime.sleep(30)"])
    if not wait_for("a zombie", lambda: zombies(p.pid), 5):
        bad.append("the zombie check did not see a zombie child")
    p.kill()
    p.wait()
    if os.geteuid() == 0:
        mnt = os.path.join(work, "control-mount")
        os.mkdir(mnt)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,uid=%d" % uid, "tmpfs", mnt], check=True)
        try:
            if not any(" %s " % mnt in m for m in mounts("self", work, {uid})):
                bad.append("the mount check did not see a tmpfs mounted below the soak's directory")
        finally:
            subprocess.run(["umount", mnt], check=True)
        os.rmdir(mnt)
    base = os.path.join(work, "control-cgroup")
    os.makedirs(os.path.join(base, "j1"))
    log = os.path.join(work, "control.log")
    with open(log, "w") as f:
        f.write("anvil-supervisor: info: cgroup base (memory): %s\n" % base)
    if cgroups(log)[1] != [os.path.join(base, "j1")]:
        bad.append("the cgroup check did not see an empty cgroup")
    shutil.rmtree(base)
    os.unlink(log)
    d = Daemon("control", [PY, "-c", "import os, time\nfd = os.open('/proc/self/ns/net', os.O_RDONLY)\n"
                                      "print('held', flush=True)\ntime.sleep(30)"], os.path.join(work, "control-ns.log"))
    DAEMONS.remove(d)
    wait_for("the fd", lambda: "held" in open(d.log).read(), 10)
    if len(d.held_ns()[1]) != 1:
        bad.append("the namespace check did not see a namespace held that no child is in: %s" % (d.held_ns(),))
    d.stop()
    d = Daemon("control", ["sleep", "30"], os.path.join(work, "control-daemon.log"))
    DAEMONS.remove(d)
    d.proc.send_signal(signal.SIGSEGV)
    d.proc.wait()
    if d.alive() or d.how_it_ended() != "killed by signal 11 (SIGSEGV)":
        bad.append("a daemon's death was not seen: %s" % d.how_it_ended())
    seen = set()
    for j in jobs:
        if j.kind in seen:
            continue
        seen.add(j.kind)
        if not j.check({"status": "bogus", "events": [], "artifacts": []}):
            bad.append("a wrong result for the kind %s passed its check" % j.kind)
    return bad


# ---- the runs ----

def run_all(jobs, clients, ctl, env, daemons, results, phase):
    q = queue.Queue()
    for i, j in enumerate(jobs):
        q.put((i, j))
    stop = threading.Event()

    def client():
        while not stop.is_set():
            try:
                i, job = q.get_nowait()
            except queue.Empty:
                return
            t0 = time.time()
            busy = 0
            while True:
                p = subprocess.run([ctl, "run"] + job.argv + ["--json"], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, errors="replace")
                # All run slots in use (--max-runs below the clients): the client tries again,
                # as a real one would; each refusal is counted.
                if p.returncode != 123 or "anvilctl: busy:" not in p.stderr or busy >= 2000 or stop.is_set():
                    break
                busy += 1
                time.sleep(0.02)
            dt = time.time() - t0
            rec = {"phase": phase, "kind": job.kind, "rc": p.returncode, "latency": dt, "errors": [],
                   "tool": os.path.basename(job.argv[0]), "busy": busy}
            # A result came whatever the tool did (anvilctl exits with the tool's status, 120
            # blocked, 121 or 124 killed); 122, 123, 125 and 126 are Anvil's, with no result.
            if p.returncode not in (122, 123, 125, 126):
                try:
                    res = json.loads(p.stdout)
                    rec["run_id"], rec["status"] = res.get("run_id"), res.get("status")
                    rec["errors"] = job.check(res)
                except ValueError as e:
                    rec["errors"] = ["not JSON: %s" % e]
            else:
                rec["errors"] = ["anvilctl exited %d: %s" % (p.returncode, p.stderr.strip()[-300:])]
            results.append(rec)

    def watch():
        while not stop.is_set():
            if any(not d.alive() for d in daemons):
                stop.set()
                return
            time.sleep(0.2)

    ths = [threading.Thread(target=client) for _ in range(clients)]
    w = threading.Thread(target=watch)
    t0 = time.time()
    for th in ths:
        th.start()
    w.start()
    for th in ths:
        th.join()
    wall = time.time() - t0
    stop.set()
    w.join()
    return wall


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p * len(xs) + 0.5)) - 1))] if xs else 0.0


def main():
    ap = argparse.ArgumentParser(description="Anvil's soak")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--uid-base", type=int, required=True)
    ap.add_argument("--max-runs", type=int, help="the supervisor's --max-runs (default: its own, 32)")
    ap.add_argument("--keep-runs", type=int, default=50)
    ap.add_argument("--sup-opts", default="", help="more options for the supervisor, e.g. '--spares 0'")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--as-user")
    ap.add_argument("--keep", action="store_true", help="keep the soak's directory")
    ap.add_argument("--rss-tolerance-pct", type=float, default=25.0)
    ap.add_argument("--rss-tolerance-mib", type=float, default=8.0)
    ap.add_argument("--seed", type=int, default=9)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    warmup = a.warmup if a.warmup is not None else max(2 * a.clients, a.runs // 10)

    work = tempfile.mkdtemp(prefix="anvil-soak.", dir=a.dir)
    os.chmod(work, 0o755)
    wrap = []
    if a.as_user:
        shutil.chown(work, a.as_user, a.as_user)
        wrap = ["setpriv", "--reuid=" + a.as_user, "--regid=" + a.as_user, "--clear-groups", "--"]
    os.makedirs(os.path.join(work, "tools"))
    for name, text in TOOLS.items():
        with open(os.path.join(work, "tools", name), "w") as f:
            f.write(text)
    esc = escapes()
    ref = reference_csv(work)
    jobs_warm = make_jobs(warmup, work, a.seed + 1, esc, ref)
    jobs = make_jobs(a.runs, work, a.seed, esc, ref)

    bad = controls(work, a.uid_base, jobs)
    if bad:
        for b in bad:
            print("soak: FAIL: control: " + b)
        return 1
    print("soak: controls: a zombie, a mount of the soak's, an empty cgroup, a namespace held for no child, a "
          "daemon's SIGSEGV and a wrong result of each kind are each seen by their check", flush=True)

    sup_sock, bro_sock = os.path.join(work, "sup.sock"), os.path.join(work, "anvil.sock")
    sup_log, bro_log = os.path.join(work, "supervisor.log"), os.path.join(work, "broker.log")
    sup_args = [os.path.join(build, "anvil-supervisor"), "--config", "/dev/null", "--listen", sup_sock, "--state-dir",
                os.path.join(work, "sup"), "--uid-base", str(a.uid_base), "--keep-runs", str(a.keep_runs)]
    if a.max_runs:
        sup_args += ["--max-runs", str(a.max_runs)]
    sup_args += shlex.split(a.sup_opts)
    daemons, problems = [], []

    def fail_now(msg):
        print("soak: FAIL: " + msg, flush=True)
        for d in daemons:
            d.stop()
        print("soak: the daemons' logs are kept in " + work)
        sys.exit(1)

    def died():
        for d in daemons:
            if not d.alive():
                kern = kernel_says(d.pid)
                fail_now("the %s (pid %d) died during the soak: %s, after %d results.\n"
                         "  the last lines of its log (%s):\n%s%s" %
                         (d.name, d.pid, d.how_it_ended(), len(results), d.log,
                          "".join("    " + line + "\n" for line in tail(d.log).splitlines()),
                          "  the kernel's log:\n" + "".join("    %s\n" % k for k in kern) if kern else ""))

    sup = Daemon("supervisor", sup_args, sup_log, wrap)
    daemons.append(sup)
    if not wait_for("supervisor", lambda: "listening on" in open(sup_log, errors="replace").read() or
                    not sup.alive(), 30) or not sup.alive():
        fail_now("the supervisor did not start:\n" + tail(sup_log))
    bro = Daemon("broker", [os.path.join(build, "anvil-broker"), "--config", "/dev/null", "--supervisor", sup_sock, "--listen", bro_sock,
                            "--state-dir", os.path.join(work, "broker")], bro_log)
    daemons.append(bro)
    if not wait_for("broker", lambda: os.path.exists(bro_sock) or not bro.alive(), 30) or not bro.alive():
        fail_now("the broker did not start:\n" + tail(bro_log))

    env = dict(os.environ, ANVIL_SOCKET=bro_sock)
    ctl = os.path.join(build, "anvilctl")
    ids = set(range(a.uid_base, a.uid_base + 300))
    results = []
    run_all(jobs_warm, a.clients, ctl, env, daemons, results, "warm-up")
    died()
    base = snapshot(daemons, work, ids)
    died()
    wall = run_all(jobs, a.clients, ctl, env, daemons, results, "soak")
    died()
    after = snapshot(daemons, work, ids)
    died()

    # Results, each right for its kind and stored.
    stored = 0
    for r in results:
        for e in r["errors"]:
            problems.append("%s run %s (%s %s): %s" % (r["phase"], r.get("run_id", "-"), r["kind"], r["tool"], e))
        if r.get("run_id"):
            p = os.path.join(work, "broker", "results", r["run_id"] + ".json")
            try:
                with open(p) as f:
                    s = json.load(f)
                if s.get("run_id") != r["run_id"] or s.get("status") != r.get("status"):
                    problems.append("run %s: the stored result says %s, the client got %s" %
                                    (r["run_id"], s.get("status"), r.get("status")))
                else:
                    stored += 1
            except (OSError, ValueError) as e:
                problems.append("run %s: not stored in the broker's results/: %s" % (r["run_id"], e))
    # fds: back to the warm-up's baseline (the held namespaces apart), and every namespace
    # held one a child of the daemon's is in.
    for d in daemons:
        for t in after["ns"][d.name][1]:
            problems.append("%s: holds an fd of the namespace %s, which none of its children is in" % (d.name, t))
        if after["fds"].get(d.name) != base["fds"].get(d.name):
            b, n = base["fd_kinds"].get(d.name, {}), after["fd_kinds"].get(d.name, {})
            diff = ", ".join("%s %d -> %d" % (k, b.get(k, 0), n.get(k, 0))
                             for k in sorted(set(b) | set(n)) if b.get(k, 0) != n.get(k, 0) and k not in Daemon.NS)
            problems.append("%s: %s fds after the soak, %s after the warm-up (%s)" %
                            (d.name, after["fds"].get(d.name), base["fds"].get(d.name), diff))
    # RSS: flat after the warm-up.
    rss_lines = []
    for d in daemons:
        b, n = base["rss"][d.name], after["rss"][d.name]
        limit = b * (1 + a.rss_tolerance_pct / 100) + a.rss_tolerance_mib * 1024
        rss_lines.append("%s pid %d: RSS %.1f MiB after the warm-up, %.1f MiB after the soak (%+.1f%%, limit %.1f MiB)" %
                         (d.name, d.pid, b / 1024, n / 1024, (n - b) * 100.0 / b if b else 0, limit / 1024))
        if n > limit:
            problems.append("%s: RSS grew from %d KiB to %d KiB, over the tolerance (%d KiB)" % (d.name, b, n, limit))
    # Mounts.
    new_mounts = {k: sorted(after["mounts"].get(k, set()) - base["mounts"].get(k, set())) for k in after["mounts"]}
    for k, v in new_mounts.items():
        for m in v:
            problems.append("a new mount of the soak's in %s's mount table: %s" % (k, m))
    # cgroups: only the spares'.
    found, empty = cgroups(sup_log)
    for p in empty:
        problems.append("a cgroup with no process in it (a run's, left): %s" % p)
    # Run directories: retention.
    runs_dir = os.path.join(work, "sup", "runs")
    n_dirs = len([e for e in os.listdir(runs_dir) if not e.startswith(".")]) if os.path.isdir(runs_dir) else 0
    if n_dirs > a.keep_runs:
        problems.append("%d run directories, over --keep-runs %d" % (n_dirs, a.keep_runs))
    # Zombies.
    z = {}
    for d in daemons:
        wait_for("no zombies", lambda: not zombies(d.pid), 5)
        z[d.name] = zombies(d.pid)
        for p in z[d.name]:
            problems.append("a zombie child of the %s: pid %d" % (d.name, p))

    soak = [r for r in results if r["phase"] == "soak"]
    kinds = {}
    for r in soak:
        k = kinds.setdefault(r["kind"], [0, 0])
        k[0] += 1
        k[1] += 0 if r["errors"] else 1
    lat = [r["latency"] for r in soak]
    print("soak: %d runs (after a warm-up of %d) from %d clients; supervisor --max-runs %s, --keep-runs %d%s" %
          (len(soak), len(results) - len(soak), a.clients, a.max_runs or "32 (its default)", a.keep_runs,
           ", as " + a.as_user if a.as_user else ""))
    print("  kinds: " + ", ".join("%s %d (%d right)" % (k, v[0], v[1]) for k, v in sorted(kinds.items())))
    print("  wall %.1f s, %.2f runs/s; latency p50 %.2f s, p95 %.2f s, max %.2f s" %
          (wall, len(soak) / wall if wall else 0, pct(lat, 0.5), pct(lat, 0.95), max(lat) if lat else 0))
    for d in daemons:
        nb, na = len(base["ns"][d.name][0]), len(after["ns"][d.name][0])
        print("  %s pid %d: fds %s after the warm-up, %s after the soak%s" %
              (d.name, d.pid, base["fds"].get(d.name), after["fds"].get(d.name),
               " (besides %d and %d of its spares' namespaces, none of another's)" % (nb, na) if nb or na else ""))
    for line in rss_lines:
        print("  " + line)
    print("  cgroups below the supervisor's bases: %d, each with a process in it (spares): %d" %
          (len(found), len(found) - len(empty)))
    print("  new mounts of the soak's (below %s or of its uids): %d; the host's mount table: %d then %d entries" %
          (work, sum(len(v) for v in new_mounts.values()), base["mount_count"], after["mount_count"]))
    print("  run directories kept: %d (--keep-runs %d); zombies: %d" % (n_dirs, a.keep_runs, sum(len(v) for v in z.values())))
    print("  artifacts' host copies checked for %d runs (%d runs' directories already removed by retention)" %
          (HOST_COPIES["checked"], HOST_COPIES["pruned"]))
    busy = sum(r["busy"] for r in results)
    print("  results: %d of %d right for their kind, %d stored in the broker's results/; %d refusals "
          "'busy' (tried again)" % (sum(1 for r in results if not r["errors"]), len(results), stored, busy))
    for d in daemons:
        d.stop()
    if problems:
        for p in problems[:50]:
            print("soak: FAIL: " + p)
        if len(problems) > 50:
            print("soak: FAIL: and %d more" % (len(problems) - 50))
        print("soak: the daemons' logs are kept in " + work)
        return 1
    print("soak: PASS")
    if not a.keep:
        for _ in range(10):  # what the daemons' last children leave as they go
            try:
                shutil.rmtree(work)
                break
            except OSError as e:
                why = e
                time.sleep(0.5)
        else:
            print("soak: could not remove %s: %s" % (work, why))
    return 0


DAEMONS = []  # every daemon started, stopped whatever happens


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        for d in DAEMONS:
            d.stop()
    sys.exit(rc)
