"""The Python client (clients/python/anvil_client) against the suite's real daemons.

Run by tests/e2e/t_pyclient.sh with ANVIL_SOCKET (the suite's broker), ANVIL_CTL (anvilctl,
the C client, to compare with) and MODEL_URL (a scripted model server, tests/model_server.py,
whose script is the task below's). Each test makes real runs in real jails; the decoder's
tests speak to a socket of their own that sends what no broker would.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

import msgpack  # noqa: E402

from anvil_client import _schema  # noqa: E402
from anvil_client.client import CAPABILITIES  # noqa: E402

from anvil_client import (Anvil, Artifact, ConnectionLost, IntegrityError, ProtocolError, Refused,  # noqa: E402
                          RunEvent, RunOutput, RunResult, SandboxFailed, TaskEvent, TaskResult, Unreachable)

SOCKET = os.environ["ANVIL_SOCKET"]
CTL = os.environ.get("ANVIL_CTL", "anvilctl")
MODEL_URL = os.environ.get("MODEL_URL")
SLOW_MODEL_URL = os.environ.get("SLOW_MODEL_URL")


class RunTests(unittest.TestCase):
    anvil = Anvil(SOCKET)

    def test_run_ok_artifacts_saved(self):
        code = ("import csv\n"
                "rows = list(csv.DictReader(open('inputs/sales.csv')))\n"
                "total = sum(float(r['amount']) for r in rows)\n"
                "open('artifacts/total.txt', 'w').write(f'{total:.2f}\\n')\n"
                "import os; os.makedirs('artifacts/sub', exist_ok=True)\n"
                "open('artifacts/sub/bytes.bin', 'wb').write(bytes(range(256)) * 2000)\n"
                "print('rows', len(rows))\n")
        r = self.anvil.run(code, inputs={"sales.csv": b"region,amount\nnorth,10.5\nsouth,32\n"},
                           tool_name="total.py")
        self.assertIsInstance(r, RunResult)
        self.assertEqual((r.status, r.exit_code, r.stdout), ("ok", 0, "rows 2\n"))
        self.assertTrue(r.isolation.tier)
        self.assertGreater(r.peak_rss_mb, 0)
        self.assertEqual(sorted(a.path for a in r.artifacts), ["sub/bytes.bin", "total.txt"])
        with tempfile.TemporaryDirectory() as d:
            written = self.anvil.save_artifacts(r, d)
            self.assertEqual(sorted(str(p.relative_to(d)) for p in written), ["sub/bytes.bin", "total.txt"])
            self.assertEqual(Path(d, "total.txt").read_text(), "42.50\n")
            big = Path(d, "sub/bytes.bin").read_bytes()
            self.assertEqual(big, bytes(range(256)) * 2000)  # 512000 bytes: two artifact_data frames and more
            listed = {a.path: a for a in r.artifacts}
            self.assertEqual(hashlib.sha256(big).hexdigest(), listed["sub/bytes.bin"].sha256)
        self.assertEqual(self.anvil.artifact(r.run_id, "total.txt"), b"42.50\n")  # by id: show() first
        # A path the result does not list: the broker's refusal, verbatim.
        with self.assertRaises(Refused) as cm:
            self.anvil.artifact(r, "../total.txt")
        self.assertEqual(cm.exception.code, "bad_request")
        self.assertEqual(cm.exception.message, f"'../total.txt' is not an artifact of run {r.run_id}")
        # The store: listed, and shown as it was sent.
        self.assertIn(r.run_id, [e.id for e in self.anvil.runs(limit=50)])
        entry = next(e for e in self.anvil.runs(limit=50) if e.id == r.run_id)
        self.assertEqual((entry.status, entry.tool), ("ok", "total.py"))
        shown = self.anvil.show(r.run_id)
        self.assertEqual((shown.run_id, shown.stdout, shown.artifacts), (r.run_id, r.stdout, r.artifacts))

    def test_blocked_is_a_result_with_its_refusal(self):
        r = self.anvil.run("import socket\nprint('never')\n")
        self.assertEqual(r.status, "blocked")
        self.assertEqual(r.stdout, "")
        self.assertEqual([(e.layer, e.kind, e.message) for e in r.refusals],
                         [("precheck", "blocked", "blocked: import socket (network denied by policy)"),
                          ("runner", "blocked", "the pre-check refused the tool (1 finding); none of it ran")])
        self.assertEqual((r.refusals[0].line, r.refusals[0].col), (1, 1))
        # The control: the same run without the import runs.
        self.assertEqual(self.anvil.run("print('ran')\n").stdout, "ran\n")

    def test_failed_tool_is_a_result(self):
        r = self.anvil.run("x = 1\nraise ValueError('boom')\n")
        self.assertEqual((r.status, r.exit_code), ("error", 1))
        self.assertIn("ValueError: boom", r.stderr)
        self.assertEqual(r.variables_dict, {"x": 1})

    def test_refused_request_is_an_exception(self):
        with self.assertRaises(Refused) as cm:
            self.anvil.run("print(1)\n", variables={"print": 1})
        e = cm.exception
        self.assertEqual((e.code, e.field, e.message),
                         ("bad_request", "run_request.variables", "variables refused: 'print' shadows a builtin"))
        # The control: variables with names a tool may use are bound.
        r = self.anvil.run("print(total + 1)\n", variables={"total": 41})
        self.assertEqual(r.stdout, "42\n")
        with self.assertRaises(ValueError):  # the client's own check, before anything is sent
            self.anvil.run("print(1)\n", limits={"wall_s": 0})
        with self.assertRaises(Refused) as cm:
            self.anvil.run("print(1)\n", limits={"wall_s": 100000})
        self.assertEqual((cm.exception.code, cm.exception.field), ("bad_request", "run_request.limits.wall_s"))

    @unittest.skipUnless(os.environ.get("SANDBOX_FAILED_SOCKET"), "no Landlock-less supervisor")
    def test_sandbox_failed_is_an_exception(self):
        with self.assertRaises(SandboxFailed) as cm:
            Anvil(os.environ["SANDBOX_FAILED_SOCKET"]).run("print('the tool ran')\n")
        e = cm.exception
        self.assertIsInstance(e, Refused)
        self.assertEqual(e.code, "sandbox_failed")
        self.assertRegex(e.message, r"^refused: landlock not in force \(the jail's root could be listed, though "
                         r"the run spec says ABI [0-9]+ was applied\)$")
        # The control: the same tool where Landlock holds runs.
        self.assertEqual(self.anvil.run("print('the tool ran')\n").stdout, "the tool ran\n")

    def test_caps(self):
        r = self.anvil.run("print(1)\n", caps=["network"])
        self.assertEqual((r.status, r.capabilities.requested, r.capabilities.granted, r.capabilities.denied),
                         ("ok", ["network"], [], ["network"]))
        self.assertIn(("policy", "capability network denied: no host was approved for it"),
                      [(e.layer, e.message) for e in r.events])
        with self.assertRaises(ValueError) as cm:  # a name that is no capability: a typo, refused here
            self.anvil.run("print(1)\n", caps=["gpu"])
        self.assertEqual(str(cm.exception), "caps: 'gpu' is not a capability (there are: network, process)")
        # The control: no capability asked, none in the result.
        self.assertEqual(self.anvil.run("print(1)\n").capabilities.requested, [])

    @unittest.skipUnless(os.environ.get("LOW_BROKER_SOCKET"), "no broker of another uid")
    def test_input_by_fd_the_broker_cannot_read(self):
        # The broker runs as uid 65533, which cannot open this file (t_pyclient.sh shows it);
        # the client (root) opens it and passes the fd.
        low = Anvil(os.environ["LOW_BROKER_SOCKET"])
        r = low.run("print(open('inputs/only-root.csv').read().splitlines()[1])\n",
                    inputs=[os.environ["PRIVATE_FILE"]])
        self.assertEqual((r.status, r.stdout), ("ok", "3,4\n"))
        self.assertEqual(low.hello().role, "broker")

    def test_input_by_fd_no_path_reaches(self):
        # A file no one can open by its path any more: created 0600, opened, then removed.
        # Only the open fd the client passes (SCM_RIGHTS) can carry it to the jail.
        with tempfile.TemporaryDirectory() as d:
            p = Path(d, "secret.csv")
            p.write_text("a,b\n1,2\n")
            os.chmod(p, 0o600)
            f = open(p, "rb")
            os.unlink(p)
            self.assertFalse(p.exists())
            with f:
                r = self.anvil.run("print(open('inputs/gone.csv').read().splitlines()[1])\n",
                                   inputs={"gone.csv": f})
            self.assertEqual((r.status, r.stdout), ("ok", "1,2\n"))
            # And by path: the client opens it and sends the fd; a directory too.
            Path(d, "dir").mkdir()
            Path(d, "dir", "x.txt").write_text("in a dir\n")
            Path(d, "one.txt").write_text("one\n")
            code = ("import os\nprint(sorted(os.listdir('inputs')))\n"
                    "print(open('inputs/one.txt').read().strip())\n")
            rootless = os.environ.get("ANVIL_E2E_ROOTLESS_USER")
            ins = [Path(d, "one.txt")] + ([] if rootless else [str(Path(d, "dir")) + "/"])
            r = self.anvil.run(code, inputs=ins)
            want = "['one.txt']" if rootless else "['dir', 'one.txt']"
            self.assertEqual((r.status, r.stdout), ("ok", f"{want}\none\n"))
        # A pipe is not a file: the broker's refusal, naming the input.
        rd, wr = os.pipe()
        try:
            with self.assertRaises(Refused) as cm:
                self.anvil.run("print(1)\n", inputs={"p.csv": rd})
            self.assertEqual((cm.exception.code, cm.exception.field), ("bad_request", "run_request.inputs[0].fd"))
            self.assertIn("its fd is a pipe", cm.exception.message)
        finally:
            os.close(rd)
            os.close(wr)

    def test_events_live(self):
        code = ("import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second', flush=True)\n")
        seen = []
        for item in self.anvil.run_events(code):
            seen.append((time.monotonic(), item))
        kinds = [type(i).__name__ for _, i in seen]
        self.assertEqual(kinds[-1], "RunResult")
        outs = [(t, i.text) for t, i in seen if isinstance(i, RunOutput)]
        self.assertEqual([x for _, x in outs], ["first\n", "second\n"])
        # Live: 'first' reached us while the tool was still sleeping, not with the result.
        self.assertGreaterEqual(outs[1][0] - outs[0][0], 1.0)
        events = [i.event.kind for _, i in seen if isinstance(i, RunEvent)]
        self.assertLess(events.index("started"), events.index("finished"))
        started_at = next(t for t, i in seen if isinstance(i, RunEvent) and i.event.kind == "started")
        self.assertLess(started_at, outs[0][0])
        self.assertEqual(seen[-1][1].stdout, "first\nsecond\n")

    def test_cancel(self):
        stream = self.anvil.run_events("import time\nprint('going', flush=True)\ntime.sleep(60)\n")
        t0 = time.monotonic()
        for item in stream:
            if isinstance(item, RunOutput) and item.text == "going\n":
                stream.cancel()
        r = stream.result
        self.assertEqual((r.status, r.killed), ("killed", "killed: cancelled"))
        self.assertLess(time.monotonic() - t0, 20)

    def test_cancel_before_the_run_is_named(self):
        # At once, before any frame: the broker holds the cancel until the supervisor names the run.
        stream = self.anvil.run_events("import time\ntime.sleep(60)\n")
        stream.cancel()
        self.assertIsNone(stream.run_id)
        r = stream.wait()
        self.assertEqual((r.status, r.killed), ("killed", "killed: cancelled"))
        self.assertEqual(stream.run_id, r.run_id)

    def test_unreachable(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "no.sock")
            with self.assertRaises(Unreachable) as cm:
                Anvil(path).run("print(1)\n")
            self.assertEqual(str(cm.exception), f"cannot reach Anvil at {path}: No such file or directory "
                             "(is anvil-broker running? pass socket= or set ANVIL_SOCKET)")
            # A socket no one accepts on: refused, the same exception.
            s = socket.socket(socket.AF_UNIX)
            s.bind(path)
            s.close()
            with self.assertRaises(Unreachable) as cm:
                Anvil(path).probe()
            self.assertIn("Connection refused", str(cm.exception))

    def test_probe(self):
        p = self.anvil.probe()
        ctl = json.loads(subprocess.run([CTL, "probe", "--json"], check=True, capture_output=True,
                                        text=True, env={**os.environ, "ANVIL_SOCKET": SOCKET}).stdout)
        self.assertEqual(p.tier, ctl["tier"])
        self.assertEqual([(m.name, m.available, m.probed, m.in_force) for m in p.mechanisms],
                         [(m["name"], m["available"], m["probed"], m["in_force"]) for m in ctl["mechanisms"]])
        self.assertTrue(p.mechanism("namespaces").in_force or os.environ.get("ANVIL_E2E_ROOTLESS_USER"))
        self.assertEqual(self.anvil.hello().role, "broker")


@unittest.skipUnless(MODEL_URL, "no scripted model (MODEL_URL)")
class TaskTests(unittest.TestCase):
    anvil = Anvil(SOCKET)

    def test_task_against_the_scripted_model(self):
        d = tempfile.mkdtemp()
        Path(d, "sales.csv").write_bytes(b"region,amount\nn,1\ns,2\n")  # a task's inputs travel as bytes: read here
        stream = self.anvil.submit_events("Total the amounts.", inputs=[Path(d, "sales.csv")],
                                          max_steps=4, model={"url": MODEL_URL, "name": "scripted"})
        kinds = []
        for item in stream:
            if isinstance(item, TaskEvent):
                kinds.append(item.kind)
        t = stream.result
        self.assertIsInstance(t, TaskResult)
        self.assertEqual((t.status, t.error), ("ok", None))
        self.assertEqual(len(t.steps), 2)
        self.assertEqual(t.steps[0].run.stdout, "3\n")
        self.assertEqual(t.final_answer_value, {"total": 3})
        self.assertEqual(kinds[0], "started")
        self.assertIn("final_answer", kinds)
        self.assertEqual(sorted(a.path for a in t.deliverable.artifacts), ["tool.py", "total.txt"])
        with tempfile.TemporaryDirectory() as d:
            self.anvil.save_artifacts(t, d)
            self.assertEqual(Path(d, "total.txt").read_text(), "3\n")
            self.assertEqual(Path(d, "tool.py").read_text(), t.deliverable.source)
        self.assertEqual(self.anvil.show(t.task_id).steps[1].code, t.steps[1].code)
        replay = [i.kind for i in self.anvil.trace(t.task_id) if isinstance(i, TaskEvent)]
        self.assertEqual(replay[-1], "trace_end")
        # The trace is what the stream showed, but the tool's output (kept in the run's
        # result, not the trace) and with the trace's own end line.
        self.assertEqual([k for k in replay if k not in ("end", "trace_end")],
                         [k for k in kinds if k not in ("run_stdout", "run_stderr")])

    @unittest.skipUnless(SLOW_MODEL_URL, "no slow scripted model (SLOW_MODEL_URL)")
    def test_task_cancelled(self):
        # The model takes 30 s to answer: the task is cancelled while the broker waits on it.
        stream = self.anvil.submit_events("Wait.", model={"url": SLOW_MODEL_URL, "name": "scripted"})
        stream.cancel()  # before its id is known: sent when the first event names it
        t0 = time.monotonic()
        t = stream.wait()
        self.assertEqual(t.status, "cancelled")
        self.assertLess(time.monotonic() - t0, 20)
        self.assertEqual(self.anvil.show(t.task_id).status, "cancelled")


TOP = Path(__file__).resolve().parents[2]


class TablesTests(unittest.TestCase):
    """The client's tables are the C ones: each field's name, kind, whether it is required and
    (where messages.c writes a number) its bound, read from proto/messages.c; the capability
    names from policy/rules.h. A field added to the protocol and not here fails this."""

    KINDS = {"PF_STR": _schema.STR, "PF_BIN": _schema.BIN, "PF_UINT": _schema.UINT, "PF_OPT_INT": _schema.INT,
             "PF_DOUBLE": _schema.DOUBLE, "PF_BOOL": _schema.BOOL, "PF_STRUCT": _schema.STRUCT,
             "PF_OPT_STRUCT": _schema.STRUCT, "PF_ARRAY": _schema.ARRAY, "PF_STRV": _schema.STRV}
    C_NAME = {"cgroup_figures": "cgroup"}

    def c_tables(self):
        src = (TOP / "proto" / "messages.c").read_text()
        out = {}
        for name, body in re.findall(r"static const struct proto_field (\w+)_f\[\] = \{(.*?)\n\};", src, re.S):
            rows = []
            for m in re.finditer(r"\bF\(struct \w+, \w+, \"(\w+)\", (PF_\w+), (REQ|OPT), ([^,]+),", body):
                rows.append((m[1], self.KINDS[m[2]], m[3] == "REQ", int(m[4]) if m[4].strip().isdigit() else None))
            out[self.C_NAME.get(name, name)] = rows
        return out

    def test_tables(self):
        c = self.c_tables()
        self.assertGreater(len(c), 20)
        for name, fields in _schema.TABLES.items():
            with self.subTest(table=name):
                self.assertIn(name, c)
                want = [(n, k, r) for n, k, r, _ in c[name]]
                self.assertEqual([(n, k, r) for n, k, r, _, _ in fields], want)
                for (n, _, _, cmax), (_, _, _, pmax, _) in zip(c[name], fields):
                    if cmax is not None:
                        self.assertEqual(pmax, cmax, f"{name}.{n}")

    def test_capabilities(self):
        rules = (TOP / "policy" / "rules.h").read_text()
        block = re.search(r"#define POL_CAPS\(X\)(.*?)\n\n", rules, re.S)[1]
        self.assertEqual(tuple(re.findall(r'X\(\w+, "(\w+)"\)', block)), CAPABILITIES)


class Broker(threading.Thread):
    """A socket of the test's own that answers any request with the frames given: what no
    broker sends, for the decoder."""

    def __init__(self, path: str, frames: list[bytes]):
        super().__init__(daemon=True)
        self.srv = socket.socket(socket.AF_UNIX)
        self.srv.bind(path)
        self.srv.listen(1)
        self.frames = frames

    def run(self):
        c, _ = self.srv.accept()
        c.recv(1 << 20)
        for f in self.frames:
            c.sendall(f)
        c.close()
        self.srv.close()


def frame(body) -> bytes:
    p = msgpack.packb(body, use_bin_type=True) if not isinstance(body, bytes) else body
    return struct.pack(">I", len(p)) + p


PROBE = {"v": 1, "type": "probe_result", "tier": "none", "mechanisms": []}


class DecoderTests(unittest.TestCase):
    def answer(self, *frames: bytes):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "b.sock")
        Broker(path, list(frames)).start()
        return Anvil(path, timeout=10).probe()

    def test_the_control_decodes(self):
        self.assertEqual(self.answer(frame(PROBE)).tier, "none")

    def test_frame_over_the_bound_refused_from_its_header(self):
        with self.assertRaises(ProtocolError) as cm:
            self.answer(struct.pack(">I", 16 * 1024 * 1024 + 1))
        self.assertEqual(str(cm.exception), "a frame of 16777217 bytes (the bound is 1..16777216)")

    def test_bad_fields(self):
        cases = [
            ({**PROBE, "tier": 5}, "probe_result.tier: expected a string, got an integer"),
            ({**PROBE, "extra": 1}, "probe_result.extra: unknown field"),
            ({k: v for k, v in PROBE.items() if k != "tier"}, "probe_result.tier: missing required field"),
            ({**PROBE, "tier": "x" * 65}, "probe_result.tier: string of 65 bytes is over the limit of 64"),
            ({**PROBE, "tier": "a\0b"}, "probe_result.tier: string contains NUL"),
            ({**PROBE, "v": 2}, "unsupported protocol version 2"),
            ({**PROBE, "mechanisms": [{"name": "x", "available": 1, "probed": True, "in_force": True,
                                       "evidence": ""}]},
             "probe_result.mechanisms[0].available: expected a boolean, got an integer"),
            ({**PROBE, "type": "task_result"}, "unexpected task_result from the broker during the probe"),
        ]
        for body, want in cases:
            with self.subTest(want=want):
                with self.assertRaises(ProtocolError) as cm:
                    self.answer(frame(body))
                self.assertEqual(str(cm.exception), want)
        dup = b"\x83\xa1v\x01\xa4type\xacprobe_result\xa1v\x01"
        with self.assertRaises(ProtocolError) as cm:
            self.answer(frame(dup))
        self.assertEqual(str(cm.exception), "the key 'v' appears twice in a map")

    def test_unknown_names_kept(self):
        # An error code (and an event's layer or kind) this client does not know is passed on.
        err = {"v": 1, "type": "error", "code": "brand_new", "message": "m"}
        with self.assertRaises(Refused) as cm:
            self.answer(frame(err))
        self.assertEqual((cm.exception.code, cm.exception.message), ("brand_new", "m"))

    def test_artifact_checked(self):
        # A real run's result, and a socket of the test's own answering its artifact request.
        r = Anvil(SOCKET).run("open('artifacts/a.txt', 'w').write('right')\n")
        self.assertEqual(r.artifacts[0].bytes, 5)
        sha = hashlib.sha256(b"right").hexdigest()

        def copy(data: bytes, end_bytes: int, end_sha: str, path: str = "a.txt"):
            d = tempfile.mkdtemp()
            Broker(os.path.join(d, "b.sock"), [
                frame({"v": 1, "type": "artifact_data", "data": data}),
                frame({"v": 1, "type": "artifact_end", "path": path, "bytes": end_bytes, "sha256": end_sha})]).start()
            return Anvil(os.path.join(d, "b.sock"), timeout=10).artifact(r, "a.txt")

        self.assertEqual(copy(b"right", 5, sha), b"right")  # the control
        wrong = hashlib.sha256(b"wrong").hexdigest()
        cases = [
            ((b"wrong", 5, wrong), f"artifact 'a.txt' of {r.run_id}: SHA-256 differs (received {wrong}, "
                                   f"the result lists {sha})"),
            ((b"right", 5, wrong), f"artifact 'a.txt' of {r.run_id}: SHA-256 differs (received {sha}, "
                                   f"the broker counted {wrong})"),
            ((b"right!", 6, hashlib.sha256(b"right!").hexdigest()),
             f"artifact 'a.txt' of {r.run_id}: more bytes than listed (received 6, listed 5)"),
            ((b"right", 5, sha, "b.txt"), f"artifact 'a.txt' of {r.run_id}: path differs (received b.txt, "
                                          "the broker named a.txt)"),
        ]
        for args, want in cases:
            with self.subTest(want=want):
                with self.assertRaises(IntegrityError) as cm:
                    copy(*args)
                self.assertEqual(str(cm.exception), want)

    def test_artifact_path_climbing_out(self):
        r = Anvil(SOCKET).run("open('artifacts/a.txt', 'w').write('x')\n")
        with tempfile.TemporaryDirectory() as d:
            for bad in ("../a.txt", "/etc/a.txt", "x/../../a.txt", "x//a.txt"):
                with self.subTest(path=bad):
                    forged = dataclasses.replace(r, artifacts=[Artifact(bad, 1, "")])
                    with self.assertRaises(IntegrityError) as cm:
                        Anvil(SOCKET).save_artifacts(forged, d)
                    self.assertEqual(str(cm.exception), f"artifact {bad!r} of {r.run_id}: not a relative path below "
                                     "the directory (refused to write it)")
            self.assertEqual(os.listdir(d), [])
            self.assertEqual([p.name for p in Anvil(SOCKET).save_artifacts(r, d)], ["a.txt"])  # the control

    def test_timeout(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "b.sock")
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(path)
        srv.listen(1)  # accepted by the kernel, never answered
        try:
            t0 = time.monotonic()
            with self.assertRaises(ConnectionLost) as cm:
                Anvil(path, timeout=0.5).probe()
            self.assertEqual(str(cm.exception), "no frame from the broker in 0.5 s while waiting for the probe")
            self.assertLess(time.monotonic() - t0, 5)
        finally:
            srv.close()

    def test_unknown_event_kind_kept(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "b.sock")
        ev = {"t_ms": 1, "layer": "quantum", "kind": "entangled", "message": "new"}
        Broker(path, [frame({"v": 1, "type": "run_event", "run_id": "r1", "event": ev})]).start()
        stream = Anvil(path, timeout=10).run_events("print(1)\n")
        it = iter(stream)
        first = next(it)
        self.assertIsInstance(first, RunEvent)
        self.assertEqual((first.event.layer, first.event.kind, first.event.message, first.event.is_refusal),
                         ("quantum", "entangled", "new", False))
        with self.assertRaises(ConnectionLost):
            next(it)

    def test_closed_early(self):
        whole = frame(PROBE)
        with self.assertRaises(ConnectionLost) as cm:
            self.answer(whole[:10])
        self.assertEqual(str(cm.exception),
                         f"the broker closed the connection inside a frame (6 of its {len(whole) - 4} bytes)")
        with self.assertRaises(ConnectionLost) as cm:
            self.answer()
        self.assertEqual(str(cm.exception), "the broker closed the connection before the probe ended")


if __name__ == "__main__":
    unittest.main(verbosity=2)
