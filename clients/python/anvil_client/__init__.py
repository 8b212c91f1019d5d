"""anvil_client: Anvil's Python client, over the broker's Unix socket (docs/python.md).

    from anvil_client import Anvil
    anvil = Anvil()                       # $ANVIL_SOCKET, else /run/anvil.sock
    r = anvil.run("print(6 * 7)")
    print(r.status, r.stdout, [(e.layer, e.message) for e in r.refusals])

Runs in the caller's process, as the caller: the standard library and python3-msgpack.
anvil_client.smolagents has AnvilExecutor, an executor for smolagents' CodeAgent.
"""

from .client import DEFAULT_SOCKET, Anvil, RunStream, TaskStream
from .errors import (AnvilError, ConnectionLost, IntegrityError, ProtocolError, Refused, SandboxFailed,
                     Unreachable)
from .results import (Artifact, BlastRadius, Capabilities, CgroupFigures, Deliverable, Event, Hello, Isolation,
                      Limits, ListEntry, Mechanism, ProbeResult, RunEvent, RunOutput, RunResult, TaskEvent,
                      TaskResult, TaskStep, VariableDropped)

__all__ = [
    "DEFAULT_SOCKET", "Anvil", "RunStream", "TaskStream",
    "AnvilError", "ConnectionLost", "IntegrityError", "ProtocolError", "Refused", "SandboxFailed", "Unreachable",
    "Artifact", "BlastRadius", "Capabilities", "CgroupFigures", "Deliverable", "Event", "Hello", "Isolation",
    "Limits", "ListEntry", "Mechanism", "ProbeResult", "RunEvent", "RunOutput", "RunResult", "TaskEvent",
    "TaskResult", "TaskStep", "VariableDropped",
]
