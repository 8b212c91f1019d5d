"""The client's exceptions (in the caller's process): Anvil's own failures, never a tool's
outcome.

A tool that was blocked, failed or was killed is a RunResult (status "blocked", "error",
"killed"), not an exception. These are raised when Anvil did not run the tool, or when the
client could not speak to it:

    AnvilError                   the base
      Unreachable                no broker at the socket (connect failed)
      ConnectionLost             the broker closed the connection before the answer, or none came in time
      ProtocolError              what the broker sent is not the protocol (decoded strictly)
      Refused                    an error frame: code, message (Anvil's catalog, verbatim), field
        SandboxFailed            code "sandbox_failed": the jail could not be built or did not hold
      IntegrityError             an artifact copied out does not match its size or SHA-256
"""

from __future__ import annotations


class AnvilError(Exception):
    """Anvil's own failure (see the module's docstring)."""


class Unreachable(AnvilError):
    """The broker's socket could not be connected to."""

    def __init__(self, message: str, path: str):
        super().__init__(message)
        self.path = path


class ConnectionLost(AnvilError):
    """The broker closed the connection (or sent nothing in time) before the answer came."""


class ProtocolError(AnvilError):
    """A frame from the broker that does not decode as the protocol; field is the path of
    the field at fault, when one is."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class Refused(AnvilError):
    """An error frame: the request was not carried out. code is one of docs/protocol.md's
    (bad_request, busy, forbidden, not_found, unavailable, ...; an unknown code is kept as it
    came), message Anvil's text verbatim, field the request's field at fault or None."""

    def __init__(self, code: str, message: str, field: str | None = None, request_id: str | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.field = field
        self.request_id = request_id


class SandboxFailed(Refused):
    """The error frame "sandbox_failed": the jail could not be built, or a promise of it did
    not hold (`refused: <layer> not in force (<evidence>)`); no tool code ran."""


class IntegrityError(AnvilError):
    """An artifact's bytes as received differ from the size or SHA-256 the broker counted,
    or from the run's result."""
