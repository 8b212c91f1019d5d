"""What the broker answers, as dataclasses: the RunResult, the TaskResult (docs/results.md),
the probe's result, the live frames of a run or a task, the store's listings. Runs in the
caller's process, as the caller.

Built from maps already checked against the protocol's tables (_schema.py); the field names
are the protocol's and the JSON's (`anvilctl run --json`). Names from the protocol's closed
lists (an event's layer and kind, a task event's kind) are kept as the strings they came as:
a name this client does not know is passed on, equal to none of the constants below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

# The names of proto/names.h, for comparisons (an unknown name is kept as it came).
LAYERS = ("precheck", "audit", "runner", "python", "seccomp", "landlock", "cgroup", "rlimit",
          "policy", "supervisor")
REFUSAL_KINDS = ("blocked", "refused", "killed")
STATUSES = ("ok", "error", "blocked", "killed")
TASK_STATUSES = ("ok", "failed", "cancelled", "interrupted")


@dataclass(frozen=True)
class Event:
    """One line of a run's trace: who recorded it (layer), what it says (kind), and for a
    refusal the operation, the reason and Anvil's message."""

    t_ms: int
    layer: str
    kind: str
    op: Optional[str] = None
    reason: Optional[str] = None
    message: Optional[str] = None
    line: Optional[int] = None
    col: Optional[int] = None
    traceback: Optional[str] = None

    @property
    def is_refusal(self) -> bool:
        """A refusal of a layer (blocked, refused, killed), as the trace shows them."""
        return self.kind in REFUSAL_KINDS

    @classmethod
    def _of(cls, d: dict[str, Any]) -> "Event":
        return cls(**d)


@dataclass(frozen=True)
class Artifact:
    """A file the tool left in ./artifacts: its path there, size and SHA-256 (the broker's;
    "" when it could not read it back)."""

    path: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class Isolation:
    tier: str
    mechanisms: list[str]


@dataclass(frozen=True)
class Capabilities:
    requested: list[str]
    granted: list[str]
    denied: list[str]


@dataclass(frozen=True)
class Limits:
    """A run's limits. In a request a field left None takes the server's default; in a
    result they are what was applied (cpu_quota_pct as read back from the cgroup)."""

    wall_s: Optional[int] = None
    cpu_s: Optional[int] = None
    memory_mb: Optional[int] = None
    output_bytes: Optional[int] = None
    files_bytes: Optional[int] = None
    pids: Optional[int] = None
    cpu_quota_pct: Optional[int] = None


@dataclass(frozen=True)
class BlastRadius:
    """What the tool could have read, written, reached and started, and its limits."""

    read: list[str]
    write: list[str]
    network: str
    processes: str
    limits: Limits
    hosts: list[str] = field(default_factory=list)  # network granted: its hosts (the broker's)


@dataclass(frozen=True)
class CgroupFigures:
    """What the kernel counted in the run's cgroup (a figure it does not offer is None)."""

    version: str
    memory_peak_bytes: Optional[int] = None
    oom_kills: Optional[int] = None
    pids_peak: Optional[int] = None
    forks_refused: Optional[int] = None
    cpu_throttled_ms: Optional[int] = None


@dataclass(frozen=True)
class VariableDropped:
    """A variable the tool left that the next step will not have, and why."""

    name: str
    type: str
    reason: str


@dataclass(frozen=True)
class RunResult:
    """A run's result (docs/results.md): a blocked, failed or killed tool is a RunResult
    with that status, never an exception."""

    run_id: str
    status: str
    exit_code: Optional[int]
    signal: Optional[str]
    killed: Optional[str]
    isolation: Isolation
    events: list[Event]
    stdout: str
    stdout_truncated: bool
    stdout_bytes: int
    stderr: str
    stderr_truncated: bool
    stderr_bytes: int
    artifacts_dir: Optional[str]
    artifacts: list[Artifact]
    peak_rss_mb: float
    cpu_ms: int
    wall_ms: int
    capabilities: Capabilities
    blast_radius: BlastRadius
    cgroup: Optional[CgroupFigures]
    variables: Optional[str]
    variables_dropped: list[VariableDropped]
    final_answer: Optional[str]
    request_id: Optional[str] = None
    not_stored: Optional[str] = None
    # network granted: each connection anvil-egress made ({host, port, address, bytes_out, bytes_in})
    connections: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def refusals(self) -> list[Event]:
        """The trace's refusals, each with its layer and message."""
        return [e for e in self.events if e.is_refusal]

    @property
    def variables_dict(self) -> Optional[dict[str, Any]]:
        """The variables the tool left, decoded (None when it left none: refused, killed)."""
        return None if self.variables is None else json.loads(self.variables)

    @property
    def final_answer_value(self) -> Any:
        """final_answer()'s value, decoded; None when the tool gave none (see has_final_answer)."""
        return None if self.final_answer is None else json.loads(self.final_answer)

    @property
    def has_final_answer(self) -> bool:
        return self.final_answer is not None

    @classmethod
    def _of(cls, d: dict[str, Any]) -> "RunResult":
        br = d["blast_radius"]
        return cls(
            run_id=d["run_id"], status=d["status"], exit_code=d["exit_code"], signal=d["signal"],
            killed=d["killed"], isolation=Isolation(**d["isolation"]),
            events=[Event._of(e) for e in d["events"]],
            stdout=d["stdout"], stdout_truncated=d["stdout_truncated"], stdout_bytes=d["stdout_bytes"],
            stderr=d["stderr"], stderr_truncated=d["stderr_truncated"], stderr_bytes=d["stderr_bytes"],
            artifacts_dir=d["artifacts_dir"], artifacts=[Artifact(**a) for a in d["artifacts"]],
            peak_rss_mb=d["peak_rss_mb"], cpu_ms=d["cpu_ms"], wall_ms=d["wall_ms"],
            capabilities=Capabilities(**d["capabilities"]),
            blast_radius=BlastRadius(read=br["read"], write=br["write"], network=br["network"],
                                     processes=br["processes"], limits=Limits(**br["limits"]),
                                     hosts=br.get("hosts") or []),
            cgroup=CgroupFigures(**d["cgroup"]) if d["cgroup"] else None,
            variables=d["variables"],
            variables_dropped=[VariableDropped(**v) for v in d["variables_dropped"] or []],
            final_answer=d["final_answer"], request_id=d["request_id"], not_stored=d["not_stored"],
            connections=d.get("connections") or [],
        )


@dataclass(frozen=True)
class RunEvent:
    """A live frame of a run: one event of its trace, as it is recorded."""

    run_id: str
    event: Event
    request_id: Optional[str] = None


@dataclass(frozen=True)
class RunOutput:
    """A live frame of a run: the next text the tool wrote on stream "stdout" or "stderr"."""

    run_id: str
    stream: str
    text: str
    request_id: Optional[str] = None


@dataclass(frozen=True)
class Mechanism:
    name: str
    available: bool
    probed: bool
    in_force: bool
    evidence: str


@dataclass(frozen=True)
class ProbeResult:
    """What holds on this machine: each mechanism with its evidence, and the tier."""

    tier: str
    mechanisms: list[Mechanism]
    request_id: Optional[str] = None

    def mechanism(self, name: str) -> Optional[Mechanism]:
        return next((m for m in self.mechanisms if m.name == name), None)


@dataclass(frozen=True)
class TaskEvent:
    """A live frame of a task (its trace line): kind, with a message, code or run event."""

    task_id: str
    step: int
    kind: str
    message: Optional[str] = None
    code: Optional[str] = None
    event: Optional[Event] = None

    @classmethod
    def _of(cls, d: dict[str, Any]) -> "TaskEvent":
        return cls(task_id=d["task_id"], step=d["step"], kind=d["kind"], message=d["message"],
                   code=d["code"], event=Event._of(d["event"]) if d["event"] else None)


@dataclass(frozen=True)
class TaskStep:
    code: str
    run: RunResult


@dataclass(frozen=True)
class Deliverable:
    """The action chosen as the task's result: its run, source and artifacts."""

    run_id: str
    source: str
    artifacts: list[Artifact]


@dataclass(frozen=True)
class TaskResult:
    """A task's result (docs/results.md): status ok|failed|cancelled|interrupted."""

    task_id: str
    status: str
    error: Optional[str]
    steps: list[TaskStep]
    deliverable: Optional[Deliverable]
    not_stored: Optional[str] = None
    trace_incomplete: Optional[str] = None

    @property
    def final_answer_value(self) -> Any:
        """The last step's final_answer() value, decoded (None if none)."""
        for s in reversed(self.steps):
            if s.run.final_answer is not None:
                return s.run.final_answer_value
        return None

    @classmethod
    def _of(cls, d: dict[str, Any]) -> "TaskResult":
        dl = d["deliverable"]
        return cls(
            task_id=d["task_id"], status=d["status"], error=d["error"],
            steps=[TaskStep(code=s["code"], run=RunResult._of(s["run"])) for s in d["steps"]],
            deliverable=Deliverable(run_id=dl["run_id"], source=dl["source"],
                                    artifacts=[Artifact(**a) for a in dl["artifacts"]]) if dl else None,
            not_stored=d["not_stored"], trace_incomplete=d["trace_incomplete"],
        )


@dataclass(frozen=True)
class ListEntry:
    """A stored run or task (anvilctl runs / tasks): id, status, time, tool, owner uid."""

    id: str
    status: str
    time: str
    tool: str
    uid: Optional[int] = None


@dataclass(frozen=True)
class Hello:
    role: str
    software: Optional[str] = None
