"""Anvil: the Python client of the broker's socket, speaking the protocol as anvilctl does.

Runs in the caller's process, with the caller's uid: the broker reads that uid
(SO_PEERCRED), and each input given as a path is opened here, by the caller, and passed as an
open fd (SCM_RIGHTS), so a file only the caller may read is still a file the tool reads.
Every request has a connection of its own, as anvilctl's have; what comes back is decoded
strictly (_wire.py, _schema.py), and a tool's outcome (ok, error, blocked, killed) is a
RunResult while Anvil's own failures are exceptions (errors.py).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import socket as _socket
import stat
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

from . import _messages as M
from . import _schema, _wire
from .errors import AnvilError, ConnectionLost, IntegrityError, ProtocolError, Refused, SandboxFailed, Unreachable
from .results import (Artifact, Event, Hello, Limits, ListEntry, Mechanism, ProbeResult, RunEvent, RunOutput,
                      RunResult, TaskEvent, TaskResult)

DEFAULT_SOCKET = "/run/anvil.sock"
INPUTS_MAX = 32
CAPABILITIES = ("network", "process")  # POL_CAPS in policy/rules.h, in its order
REQUEST_LIMITS = ("wall_s", "cpu_s", "memory_mb", "output_bytes", "files_bytes", "pids")

PathLike = Union[str, "os.PathLike[str]"]
InputSource = Union[PathLike, bytes, bytearray, memoryview, int, Any]
Inputs = Union[None, Mapping[str, InputSource], Iterable[Union[InputSource, tuple]]]

_ids = itertools.count(1)


def _request_id() -> str:
    return f"py-{os.getpid()}-{next(_ids)}"


class _Call:
    """One request on a connection of its own: the frame sent (with its fds), then the
    answer's frames read, each checked; an error frame is raised as Refused."""

    def __init__(self, path: str, timeout: Optional[float], what: str, request_id: Optional[str]):
        self.what = what
        self.request_id = request_id
        self.timeout = timeout
        self.conn = _wire.Connection(path, 10.0)
        self._lock = threading.Lock()
        try:
            self.conn.connect()
        except OSError as e:
            self.conn.close()
            raise Unreachable(M.UNREACHABLE.format(path=path, why=e.strerror or e), path) from None
        self.conn.sock.settimeout(timeout)

    def send(self, msg_type: str, fields: dict[str, Any], fds: Sequence[int] = ()) -> None:
        frame = _wire.encode(msg_type, fields)
        try:
            with self._lock:
                self.conn.send(frame, fds)
        except (BrokenPipeError, ConnectionResetError):
            # The broker refuses a connection over one of its bounds with an error frame,
            # then closes it without reading: that frame says why.
            try:
                self._next()
            except Refused:
                raise
            except (AnvilError, OSError):
                pass
            raise ConnectionLost(M.CLOSED_WHILE_SENDING.format(what=self.what)) from None

    def _next(self, types: Sequence[str] = ()) -> tuple[str, dict[str, Any]]:
        """The next frame, of one of types (or an error frame, raised), its fields checked."""
        try:
            obj = self.conn.read()
        except _socket.timeout:
            raise ConnectionLost(M.TIMED_OUT.format(secs=self.timeout, what=self.what)) from None
        except (ConnectionResetError, BrokenPipeError):
            obj = None
        if obj is None:
            raise ConnectionLost(M.CLOSED.format(what=self.what))
        if obj["type"] != "error" and obj["type"] not in types:
            raise ProtocolError(M.UNEXPECTED_IN.format(type=obj["type"], what=self.what))
        t, f = _schema.message(obj)
        if t == "error":
            cls = SandboxFailed if f["code"] == "sandbox_failed" else Refused
            raise cls(f["code"], f["message"], f["field"], f["request_id"])
        return t, f

    def next(self, *types: str) -> tuple[str, dict[str, Any]]:
        """The next frame, which must be one of types and answer this request."""
        t, f = self._next(types)
        rid = f.get("request_id")
        if self.request_id and rid is not None and rid != self.request_id:
            raise ProtocolError(M.OTHER_REQUEST.format(type=t, got=rid, what=self.what, want=self.request_id))
        return t, f

    def close(self) -> None:
        self.conn.close()


class RunStream:
    """A run as it goes: iterate it for RunEvent and RunOutput frames as they come, then the
    RunResult, last (also kept as .result). cancel() (from any thread) asks the broker to
    end the run; its result then comes as usual, status "killed" ("killed: cancelled").
    A context manager: leaving it closes the connection, which abandons a run not ended."""

    def __init__(self, call: _Call):
        self._call = call
        self.run_id: Optional[str] = None
        self.result: Optional[RunResult] = None

    def __iter__(self) -> Iterator[Union[RunEvent, RunOutput, RunResult]]:
        try:
            while self.result is None:
                t, f = self._call.next("run_event", "run_output", "run_result")
                if self.run_id is None:
                    self.run_id = f["run_id"]
                if t == "run_event":
                    yield RunEvent(run_id=f["run_id"], event=_event(f["event"]), request_id=f["request_id"])
                elif t == "run_output":
                    yield RunOutput(run_id=f["run_id"], stream=f["stream"], text=f["text"],
                                    request_id=f["request_id"])
                else:
                    self.result = RunResult._of(f)
                    yield self.result
        finally:
            self._call.close()

    def wait(self) -> RunResult:
        """Reads what is left and returns the RunResult."""
        for _ in self:
            pass
        assert self.result is not None
        return self.result

    def cancel(self) -> None:
        """Asks the broker to cancel the run (by its id once known, else by the request's,
        which the broker holds until the supervisor names the run)."""
        if self.result is not None:
            return  # ended already: nothing to cancel
        fields: dict[str, Any] = {"request_id": self._call.request_id}
        if self.run_id:
            fields["run_id"] = self.run_id
        self._call.send("cancel", fields)

    def close(self) -> None:
        self._call.close()

    def __enter__(self) -> "RunStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TaskStream:
    """A task as it goes: iterate it for TaskEvent frames, then the TaskResult, last (also
    .result). cancel() asks the broker to cancel the task (sent once its id is known). A
    replayed trace (Anvil.trace) ends with its event of kind "trace_end", and no result."""

    def __init__(self, call: _Call, replay: bool = False):
        self._call = call
        self._replay = replay
        self._cancel_pending = False
        self.task_id: Optional[str] = None
        self.result: Optional[TaskResult] = None

    def __iter__(self) -> Iterator[Union[TaskEvent, TaskResult]]:
        try:
            while self.result is None:
                t, f = self._call.next("task_event", "task_result")
                if t == "task_event":
                    ev = TaskEvent._of(f)
                    if self.task_id is None:
                        self.task_id = ev.task_id
                        if self._cancel_pending:
                            self._send_cancel()
                    yield ev
                    if self._replay and ev.kind == "trace_end":
                        return  # a replay ends with its trace; the result is show()'s
                elif self._replay:
                    raise ProtocolError(M.UNEXPECTED_IN.format(type=t, what=self._call.what))
                else:
                    self.result = TaskResult._of(f)
                    yield self.result
        finally:
            self._call.close()

    def wait(self) -> Optional[TaskResult]:
        """Reads what is left; returns the TaskResult (None for a replayed trace)."""
        for _ in self:
            pass
        return self.result

    def _send_cancel(self) -> None:
        self._call.send("cancel", {"request_id": self._call.request_id, "task_id": self.task_id})

    def cancel(self) -> None:
        """Asks the broker to cancel the task; its result then says "cancelled"."""
        if self.result is not None:
            return
        if self.task_id is None:
            self._cancel_pending = True
        else:
            self._send_cancel()

    def close(self) -> None:
        self._call.close()

    def __enter__(self) -> "TaskStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _event(d: dict[str, Any]) -> Event:
    return Event._of(d)


def _strings(v: Optional[Iterable[str]], what: str) -> list[str]:
    out = list(v or ())
    if not all(type(s) is str for s in out):
        raise TypeError(M.STRINGS.format(what=what))
    return out


def _caps(v: Iterable[str]) -> list[str]:
    """Capability names, each one Anvil has (a typo is the caller's to fix, as anvilctl's
    --cap refuses it: the server would only deny it as unknown)."""
    out = _strings(v, "caps")
    for c in out:
        if c.split("=", 1)[0] not in CAPABILITIES or (c.startswith("process=")):  # network=HOST,... (its hosts)
            raise ValueError(M.CAP_UNKNOWN.format(name=c, known=", ".join(CAPABILITIES)))
    return out


def _limits(limits: Union[None, Limits, Mapping[str, int]]) -> Optional[dict[str, int]]:
    if limits is None:
        return None
    items = ({k: getattr(limits, k) for k in REQUEST_LIMITS + ("cpu_quota_pct",)}
             if isinstance(limits, Limits) else dict(limits))
    out = {}
    for k, v in items.items():
        if v is None:
            continue
        if k not in REQUEST_LIMITS:
            raise ValueError(M.LIMIT_UNKNOWN.format(name=k, known=", ".join(REQUEST_LIMITS)))
        if type(v) is not int or v <= 0:
            raise ValueError(M.LIMIT_VALUE.format(name=k, v=v))
        out[k] = v
    return out or None


def _variables(v: Union[None, str, Mapping[str, Any]]) -> Optional[str]:
    if v is None or isinstance(v, str):
        return v
    try:
        return json.dumps(dict(v), allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise ValueError(M.NOT_JSON_OBJECT.format(why=e)) from None


def _pairs(inputs: Inputs) -> list[tuple[Optional[str], Any]]:
    if inputs is None:
        return []
    if isinstance(inputs, Mapping):
        return list(inputs.items())
    out: list[tuple[Optional[str], Any]] = []
    for x in inputs:
        out.append((x[0], x[1]) if isinstance(x, tuple) else (None, x))
    return out


def _open_input(path: PathLike) -> int:
    p = os.fspath(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e:
        raise ValueError(M.INPUT_OPEN.format(path=p, why=e.strerror)) from None
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        os.close(fd)
        raise ValueError(M.INPUT_KIND.format(path=p))
    return fd


class _Inputs:
    """A request's inputs: [{name, data} | {name, fd}] and the fds to send; the fds this
    client opened (from paths) are closed by close()."""

    def __init__(self, inputs: Inputs, by_fd: bool):
        self.wire: list[dict[str, Any]] = []
        self.fds: list[int] = []
        self._opened: list[int] = []
        try:
            for name, src in _pairs(inputs):
                self._add(name, src, by_fd)
        except BaseException:
            self.close()
            raise
        if len(self.wire) > INPUTS_MAX:
            self.close()
            raise ValueError(M.INPUTS_MAX.format(n=len(self.wire), max=INPUTS_MAX))

    def _add(self, name: Optional[str], src: Any, by_fd: bool) -> None:
        if isinstance(src, (str, os.PathLike)):
            p = os.fspath(src)
            name = name or os.path.basename(p.rstrip("/") or p)
            if by_fd:
                fd = _open_input(p)
                self._opened.append(fd)
                self._fd(name, fd)
            else:
                try:
                    data = Path(p).read_bytes()
                except OSError as e:
                    raise ValueError(M.INPUT_OPEN.format(path=p, why=e.strerror)) from None
                self.wire.append({"name": name, "data": data})
            return
        if name is None:
            raise ValueError(M.INPUT_NO_NAME)
        if isinstance(src, (bytes, bytearray, memoryview)):
            self.wire.append({"name": name, "data": bytes(src)})
        elif not by_fd:
            raise TypeError(M.TASK_INPUT_FD.format(name=name))
        elif type(src) is int:
            self._fd(name, src)
        elif hasattr(src, "fileno"):
            self._fd(name, src.fileno())
        else:
            raise TypeError(M.INPUT_TYPE.format(name=name, got=type(src).__name__))

    def _fd(self, name: str, fd: int) -> None:
        self.wire.append({"name": name, "fd": len(self.fds)})
        self.fds.append(fd)

    def close(self) -> None:
        for fd in self._opened:
            os.close(fd)
        self._opened = []


def _safe_relpath(path: str, owner: str) -> Path:
    """An artifact's path as the result lists it, as a relative path with no '..', no empty
    or absolute part: the result is the tool's doing, and a name must not climb out."""
    parts = path.split("/")
    if not path or "\0" in path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise IntegrityError(M.ARTIFACT_PATH.format(path=path, id=owner))
    return Path(*parts)


class Anvil:
    """A client of the broker at `socket` (default: $ANVIL_SOCKET, else /run/anvil.sock).

    `timeout`: seconds to wait for each frame of an answer (None: as long as it takes; a
    run's wall clock is the server's to bound). Every method opens a connection of its own,
    so one Anvil may be used from several threads."""

    def __init__(self, socket: Optional[str] = None, timeout: Optional[float] = None):
        self.socket = socket or os.environ.get("ANVIL_SOCKET") or DEFAULT_SOCKET
        self.timeout = timeout

    def _call(self, what: str, msg_type: str, fields: dict[str, Any], fds: Sequence[int] = ()) -> _Call:
        rid = fields.get("request_id")
        call = _Call(self.socket, self.timeout, what, rid)
        try:
            call.send(msg_type, fields, fds)
        except BaseException:
            call.close()
            raise
        return call

    def _one(self, what: str, msg_type: str, fields: dict[str, Any], *answers: str) -> tuple[str, dict[str, Any]]:
        call = self._call(what, msg_type, fields)
        try:
            return call.next(*answers)
        finally:
            call.close()

    def hello(self) -> Hello:
        """The broker's role and software (the protocol's optional greeting)."""
        _, f = self._one("the hello", "hello", {"role": "client", "software": "anvil_client"}, "hello")
        return Hello(role=f["role"], software=f["software"])

    def run_events(self, code: str, inputs: Inputs = None, caps: Iterable[str] = (),
                   limits: Union[None, Limits, Mapping[str, int]] = None, args: Iterable[str] = (),
                   variables: Union[None, str, Mapping[str, Any]] = None, tool_name: Optional[str] = None,
                   stream_output: bool = True, save_source: bool = False) -> RunStream:
        """Starts a run and returns it as a RunStream, to follow live:

            for item in anvil.run_events(code):  # RunEvent, RunOutput, ..., RunResult
                ...

        code: the tool's source. inputs: paths (each opened here and passed as an fd; a
        directory too), or {name: path | bytes | open file | fd} (bytes travel in the
        frame; an fd or file stays the caller's to close), at most 32; each is
        ./inputs/<name> in the jail. caps: capabilities requested and approved (whether one
        is granted is the server's policy, which says why not). limits: wall_s, cpu_s,
        memory_mb, output_bytes, files_bytes, pids (None: the server's default). args: the
        tool's sys.argv[1:]. variables: a dict JSON can hold (or JSON text), bound as
        globals before the tool's first line. stream_output: the tool's output as it is
        written (RunOutput frames), besides the result's copy.

        Raises Unreachable, Refused (an error frame: a bad request, busy, ...),
        SandboxFailed, ConnectionLost, ProtocolError; a tool's own outcome is the RunResult."""
        ins = _Inputs(inputs, by_fd=True)
        try:
            caps_l = _caps(caps)
            fields = {
                "request_id": _request_id(), "source": code, "inputs": ins.wire or None,
                "limits": _limits(limits), "capabilities_requested": caps_l or None,
                "capabilities_approved": caps_l or None, "variables": _variables(variables),
                "save_source": save_source or None, "tool_name": tool_name,
                "args": _strings(args, "args") or None, "stream_output": stream_output or None,
            }
            call = self._call("the run", "run_request", fields, ins.fds)
        finally:
            ins.close()  # the broker has its copies once the frame is sent
        return RunStream(call)

    def run(self, code: str, inputs: Inputs = None, caps: Iterable[str] = (),
            limits: Union[None, Limits, Mapping[str, int]] = None, args: Iterable[str] = (),
            variables: Union[None, str, Mapping[str, Any]] = None, tool_name: Optional[str] = None) -> RunResult:
        """Runs code in a jail and returns its RunResult (see run_events for the arguments
        and the exceptions). A blocked, failed or killed tool is a result, not an exception."""
        return self.run_events(code, inputs=inputs, caps=caps, limits=limits, args=args, variables=variables,
                               tool_name=tool_name, stream_output=False).wait()

    def probe(self) -> ProbeResult:
        """The isolation in force here: each mechanism, available / probed / in force, with
        its evidence, and the tier they make (anvilctl probe)."""
        _, f = self._one("the probe", "probe_request", {"request_id": _request_id()}, "probe_result")
        return ProbeResult(tier=f["tier"], mechanisms=[Mechanism(**m) for m in f["mechanisms"]],
                           request_id=f["request_id"])

    def submit_events(self, task: str, inputs: Inputs = None, caps: Iterable[str] = (),
                      max_steps: Optional[int] = None, time_budget_s: Optional[int] = None,
                      model: Optional[Mapping[str, str]] = None) -> TaskStream:
        """Submits an agent's task (anvilctl submit) and returns it as a TaskStream, to
        follow live. inputs: paths or {name: path | bytes} (a task's inputs travel as
        bytes, in one 16 MiB frame). caps: capabilities_approved. model: {"url", "name"},
        each optional (the broker's otherwise)."""
        ins = _Inputs(inputs, by_fd=False)
        fields = {
            "request_id": _request_id(), "task": task, "inputs": ins.wire or None,
            "capabilities_approved": _caps(caps) or None, "max_steps": max_steps,
            "time_budget_s": time_budget_s, "model": dict(model) if model else None,
        }
        return TaskStream(self._call("the task", "task_submit", fields))

    def submit(self, task: str, inputs: Inputs = None, caps: Iterable[str] = (),
               max_steps: Optional[int] = None, time_budget_s: Optional[int] = None,
               model: Optional[Mapping[str, str]] = None) -> TaskResult:
        """Submits a task and returns its TaskResult (status ok|failed|cancelled)."""
        r = self.submit_events(task, inputs=inputs, caps=caps, max_steps=max_steps,
                               time_budget_s=time_budget_s, model=model).wait()
        assert r is not None
        return r

    def trace(self, task_id: str) -> TaskStream:
        """A stored task's trace replayed: its TaskEvents, the last of kind "trace_end"."""
        fields = {"request_id": _request_id(), "task_id": task_id}
        return TaskStream(self._call("the trace", "trace_request", fields), replay=True)

    def _list(self, kind: str, limit: Optional[int]) -> list[ListEntry]:
        _, f = self._one(f"the list of {kind}", "list_request",
                         {"request_id": _request_id(), "kind": kind, "limit": limit}, "list_result")
        return [ListEntry(**e) for e in f["entries"] or []]

    def runs(self, limit: Optional[int] = None) -> list[ListEntry]:
        """The caller's stored runs (root: everyone's), newest first (anvilctl runs)."""
        return self._list("runs", limit)

    def tasks(self, limit: Optional[int] = None) -> list[ListEntry]:
        """The caller's stored tasks, newest first (anvilctl tasks)."""
        return self._list("tasks", limit)

    def show(self, id: str) -> Union[RunResult, TaskResult]:
        """A stored run's RunResult or task's TaskResult, by its id (anvilctl show)."""
        t, f = self._one("the show", "show_request", {"request_id": _request_id(), "id": id},
                         "run_result", "task_result")
        return RunResult._of(f) if t == "run_result" else TaskResult._of(f)

    def _owner(self, run: Union[RunResult, TaskResult, str]) -> tuple[str, list[Artifact]]:
        if isinstance(run, str):
            run = self.show(run)
        if isinstance(run, TaskResult):
            return run.task_id, list(run.deliverable.artifacts) if run.deliverable else []
        return run.run_id, list(run.artifacts)

    def artifact(self, run: Union[RunResult, TaskResult, str], name: str) -> bytes:
        """The bytes of artifact `name` (its path as the result lists it) of a run (a
        RunResult, or its id) or of a task's deliverable (a TaskResult, or its id). Checked
        against the size and SHA-256 the broker counted and against the result's; a
        mismatch is IntegrityError. A name the result does not list is Refused (bad_request);
        one no longer kept is Refused (not_found)."""
        owner, listed = self._owner(run)
        want = next((a for a in listed if a.path == name), None)
        call = self._call("the artifact copy", "artifact_request",
                          {"request_id": _request_id(), "id": owner, "path": name})
        buf = bytearray()
        try:
            while True:
                t, f = call.next("artifact_data", "artifact_end")
                if t == "artifact_end":
                    break
                buf += f["data"]
                if want is not None and len(buf) > want.bytes:
                    raise IntegrityError(M.ARTIFACT_MISMATCH.format(path=name, id=owner, what="more bytes than listed",
                                                                    got=len(buf), side="listed", want=want.bytes))
        finally:
            call.close()
        got_sha = hashlib.sha256(buf).hexdigest()
        checks = [("path", f["path"], "the broker named", name),
                  ("size", len(buf), "the broker counted", f["bytes"]),
                  ("SHA-256", got_sha, "the broker counted", f["sha256"])]
        if want is not None:
            checks.append(("size", len(buf), "the result lists", want.bytes))
            if want.sha256:
                checks.append(("SHA-256", got_sha, "the result lists", want.sha256))
        for what, got, side, exp in checks:
            if got != exp:
                raise IntegrityError(M.ARTIFACT_MISMATCH.format(path=name, id=owner, what=f"{what} differs",
                                                                got=got, side=side, want=exp))
        return bytes(buf)

    def save_artifacts(self, run: Union[RunResult, TaskResult, str], dir: PathLike) -> list[Path]:
        """Copies every artifact of a run (or a task's deliverable) into dir (made if
        missing), at its listed path below it, each checked as artifact() checks it; returns
        the paths written. A listed path that would climb out of dir is IntegrityError."""
        if isinstance(run, str):
            run = self.show(run)
        owner, listed = self._owner(run)
        base = Path(dir)
        out = []
        for a in listed:
            rel = _safe_relpath(a.path, owner)
            data = self.artifact(run, a.path)
            dest = base / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            out.append(dest)
        return out
