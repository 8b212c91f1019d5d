"""The messages' fields, as proto/messages.c has them, and their strict decoding.

Runs in the caller's process on what the broker sent. Each table is one of messages.c's, with
its bounds: a field's wire type must match (an unsigned field refuses a negative integer, a
string refuses bin, a bool refuses 0/1), a string is without NUL and within its bytes, a list
within its items; an unknown field, or a required one missing, is an error naming the field
by its path (`run_result.events[3].layer`), as the C decoder names it. Optional fields may be
absent or nil. The supervisor's internal fields (blast_facts, facts) are never sent by a
broker: here they are unknown fields.
"""

from __future__ import annotations

from typing import Any

from . import _messages as M
from .errors import ProtocolError

# Field kinds.
STR, BIN, UINT, INT, DOUBLE, BOOL, STRUCT, ARRAY, STRV = range(9)
REQ, OPT = True, False

ID_MAX = 64
NAME_MAX = 128
PATH_MAX = 4096
REASON_MAX = 256
MESSAGE_MAX = 4096
SOURCE_MAX = 1024 * 1024
OUTPUT_MAX = 2 * 1024 * 1024
VARIABLES_MAX = 1024 * 1024
FINAL_ANSWER_MAX = 256 * 1024
CHUNK_MAX = 256 * 1024
OUTPUT_CHUNK_TEXT_MAX = 3 * 64 * 1024

# name: [(field, kind, required, max, sub-table name)]
TABLES: dict[str, list[tuple[str, int, bool, int, str | None]]] = {
    "hello": [("role", STR, REQ, 32, None), ("software", STR, OPT, 128, None)],
    "limits": [(n, UINT, OPT, 0, None) for n in
               ("wall_s", "cpu_s", "memory_mb", "output_bytes", "files_bytes", "pids")]
              + [("cpu_quota_pct", INT, OPT, 0, None)],
    "event": [
        ("t_ms", UINT, REQ, 0, None), ("layer", STR, REQ, 32, None), ("kind", STR, REQ, 64, None),
        ("op", STR, OPT, 1024, None), ("reason", STR, OPT, REASON_MAX, None),
        ("message", STR, OPT, MESSAGE_MAX, None), ("line", INT, OPT, 0, None),
        ("col", INT, OPT, 0, None), ("traceback", STR, OPT, 16384, None),
    ],
    "run_event": [("request_id", STR, OPT, ID_MAX, None), ("run_id", STR, REQ, ID_MAX, None),
                  ("event", STRUCT, REQ, 0, "event")],
    "run_output": [("request_id", STR, OPT, ID_MAX, None), ("run_id", STR, REQ, ID_MAX, None),
                   ("stream", STR, REQ, 8, None), ("text", STR, REQ, OUTPUT_CHUNK_TEXT_MAX, None)],
    "isolation": [("tier", STR, REQ, 64, None), ("mechanisms", STRV, REQ, 64, None)],
    "artifact": [("path", STR, REQ, PATH_MAX, None), ("bytes", UINT, REQ, 0, None),
                 ("sha256", STR, REQ, 64, None)],
    "capabilities": [("requested", STRV, REQ, 16, None), ("granted", STRV, REQ, 16, None),
                     ("denied", STRV, REQ, 16, None)],
    "blast_radius": [("read", STRV, REQ, 64, None), ("write", STRV, REQ, 64, None),
                     ("network", STR, REQ, 1024, None), ("hosts", STRV, OPT, 80, None),
                     ("processes", STR, REQ, REASON_MAX, None),
                     ("limits", STRUCT, REQ, 0, "limits")],
    "cgroup": [("version", STR, REQ, 8, None)]
              + [(n, INT, OPT, 0, None) for n in
                 ("memory_peak_bytes", "oom_kills", "pids_peak", "forks_refused", "cpu_throttled_ms")],
    "connection": [("host", STR, REQ, 256, None), ("port", UINT, REQ, 65535, None),
                   ("address", STR, REQ, 64, None), ("bytes_out", UINT, REQ, 0, None),
                   ("bytes_in", UINT, REQ, 0, None)],
    "variable_dropped": [("name", STR, REQ, NAME_MAX, None), ("type", STR, REQ, NAME_MAX, None),
                         ("reason", STR, REQ, REASON_MAX, None)],
    "run_result": [
        ("request_id", STR, OPT, ID_MAX, None), ("run_id", STR, REQ, ID_MAX, None),
        ("status", STR, REQ, 16, None), ("exit_code", INT, OPT, 0, None),
        ("signal", STR, OPT, 16, None), ("killed", STR, OPT, REASON_MAX, None),
        ("isolation", STRUCT, REQ, 0, "isolation"), ("events", ARRAY, REQ, 256, "event"),
        ("stdout", STR, REQ, OUTPUT_MAX, None), ("stdout_truncated", BOOL, REQ, 0, None),
        ("stdout_bytes", UINT, REQ, 0, None), ("stderr", STR, REQ, OUTPUT_MAX, None),
        ("stderr_truncated", BOOL, REQ, 0, None), ("stderr_bytes", UINT, REQ, 0, None),
        ("artifacts_dir", STR, OPT, PATH_MAX, None), ("artifacts", ARRAY, REQ, 1000, "artifact"),
        ("peak_rss_mb", DOUBLE, REQ, 0, None), ("cpu_ms", UINT, REQ, 0, None),
        ("wall_ms", UINT, REQ, 0, None), ("capabilities", STRUCT, REQ, 0, "capabilities"),
        ("blast_radius", STRUCT, REQ, 0, "blast_radius"), ("cgroup", STRUCT, OPT, 0, "cgroup"),
        ("variables", STR, OPT, VARIABLES_MAX, None),
        ("variables_dropped", ARRAY, OPT, 100, "variable_dropped"),
        ("final_answer", STR, OPT, FINAL_ANSWER_MAX, None),
        ("connections", ARRAY, OPT, 256, "connection"), ("not_stored", STR, OPT, MESSAGE_MAX, None),
    ],
    "mechanism": [("name", STR, REQ, 64, None), ("available", BOOL, REQ, 0, None),
                  ("probed", BOOL, REQ, 0, None), ("in_force", BOOL, REQ, 0, None),
                  ("evidence", STR, REQ, MESSAGE_MAX, None)],
    "probe_result": [("request_id", STR, OPT, ID_MAX, None), ("tier", STR, REQ, 64, None),
                     ("mechanisms", ARRAY, REQ, 64, "mechanism")],
    "task_event": [("task_id", STR, REQ, ID_MAX, None), ("step", UINT, REQ, 0, None),
                   ("kind", STR, REQ, 64, None), ("message", STR, OPT, 256 * 1024, None),
                   ("code", STR, OPT, SOURCE_MAX, None), ("event", STRUCT, OPT, 0, "event")],
    "task_step": [("code", STR, REQ, SOURCE_MAX, None), ("run", STRUCT, REQ, 0, "run_result")],
    "deliverable": [("run_id", STR, REQ, ID_MAX, None), ("source", STR, REQ, SOURCE_MAX, None),
                    ("artifacts", ARRAY, REQ, 1000, "artifact")],
    "task_result": [("task_id", STR, REQ, ID_MAX, None), ("status", STR, REQ, 16, None),
                    ("error", STR, OPT, MESSAGE_MAX, None), ("steps", ARRAY, REQ, 100, "task_step"),
                    ("deliverable", STRUCT, OPT, 0, "deliverable"),
                    ("not_stored", STR, OPT, MESSAGE_MAX, None),
                    ("trace_incomplete", STR, OPT, MESSAGE_MAX, None)],
    "artifact_data": [("request_id", STR, OPT, ID_MAX, None), ("data", BIN, REQ, CHUNK_MAX, None)],
    "artifact_end": [("request_id", STR, OPT, ID_MAX, None), ("path", STR, REQ, PATH_MAX, None),
                     ("bytes", UINT, REQ, 0, None), ("sha256", STR, REQ, 64, None)],
    "list_entry": [("id", STR, REQ, ID_MAX, None), ("status", STR, REQ, 32, None),
                   ("time", STR, REQ, 32, None), ("tool", STR, REQ, NAME_MAX, None),
                   ("uid", INT, OPT, 0, None)],
    "list_result": [("request_id", STR, OPT, ID_MAX, None), ("kind", STR, REQ, 8, None),
                    ("entries", ARRAY, OPT, 1000, "list_entry")],
    "error": [("code", STR, REQ, 32, None), ("message", STR, REQ, MESSAGE_MAX, None),
              ("field", STR, OPT, REASON_MAX, None), ("request_id", STR, OPT, ID_MAX, None)],
}

_KIND_WORD = {STR: "a string", BIN: "bytes", UINT: "an unsigned integer", INT: "an integer",
              DOUBLE: "a number", BOOL: "a boolean", STRUCT: "a map", ARRAY: "a list",
              STRV: "a list of strings"}
_U64 = 1 << 64
_I64 = 1 << 63


def _word(v: Any) -> str:
    return {str: "a string", bytes: "bytes", int: "an integer", float: "a number", bool: "a boolean",
            dict: "a map", list: "a list", type(None): "nil"}.get(type(v), type(v).__name__)


def _bad(path: str, why: str) -> ProtocolError:
    return ProtocolError(M.FIELD.format(path=path, why=why), field=path)


def _string(v: Any, path: str, limit: int) -> str:
    if type(v) is not str:
        raise _bad(path, M.EXPECTED.format(want="a string", got=_word(v)))
    n = len(v.encode("utf-8"))
    if limit and n > limit:
        raise _bad(path, M.STRING_OVER.format(n=n, max=limit))
    if "\0" in v:
        raise _bad(path, M.STRING_NUL)
    return v


def _value(kind: int, v: Any, path: str, limit: int, sub: str | None) -> Any:
    if kind == STR:
        return _string(v, path, limit)
    if kind == BIN:
        if type(v) is not bytes:
            raise _bad(path, M.EXPECTED.format(want="bytes", got=_word(v)))
        if limit and len(v) > limit:
            raise _bad(path, M.BYTES_OVER.format(n=len(v), max=limit))
        return v
    if kind == UINT:
        if type(v) is not int or v < 0 or v >= _U64:
            raise _bad(path, M.EXPECTED.format(want="an unsigned integer", got=_word(v)))
        if limit and v > limit:
            raise _bad(path, M.VALUE_OVER.format(v=v, max=limit))
        return v
    if kind == INT:
        if type(v) is not int or not -_I64 <= v < _I64:
            raise _bad(path, M.EXPECTED.format(want="an integer", got=_word(v)))
        return v
    if kind == DOUBLE:
        if type(v) not in (int, float):
            raise _bad(path, M.EXPECTED.format(want="a number", got=_word(v)))
        return float(v)
    if kind == BOOL:
        if type(v) is not bool:
            raise _bad(path, M.EXPECTED.format(want="a boolean", got=_word(v)))
        return v
    if kind == STRUCT:
        assert sub is not None
        return check(sub, v, path)
    if type(v) is not list:
        raise _bad(path, M.EXPECTED.format(want=_KIND_WORD[kind], got=_word(v)))
    if limit and len(v) > limit:
        raise _bad(path, M.LIST_OVER.format(n=len(v), max=limit))
    if kind == STRV:
        return [_string(x, f"{path}[{i}]", PATH_MAX) for i, x in enumerate(v)]
    assert sub is not None
    return [check(sub, x, f"{path}[{i}]") for i, x in enumerate(v)]


def check(table: str, obj: Any, path: str | None = None) -> dict[str, Any]:
    """obj (a decoded map) checked against TABLES[table]: a dict with every field of the
    table (None for an optional one absent or nil). The envelope's "v" and "type" are taken
    off a message's top level first (decode checked them)."""
    path = path or table
    if type(obj) is not dict:
        raise _bad(path, M.EXPECTED.format(want="a map", got=_word(obj)))
    fields = TABLES[table]
    known = {f[0] for f in fields}
    for k in obj:
        if k not in known:
            raise _bad(f"{path}.{k}", M.UNKNOWN_FIELD)
    out: dict[str, Any] = {}
    for name, kind, required, limit, sub in fields:
        v = obj.get(name)
        if v is None:
            if required:
                raise _bad(f"{path}.{name}", M.MISSING_FIELD)
            out[name] = None
            continue
        out[name] = _value(kind, v, f"{path}.{name}", limit, sub)
    return out


def message(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A decoded frame (v and type checked) as its type and its checked fields."""
    t = obj["type"]
    if t not in TABLES or t in ("limits", "event", "isolation", "artifact", "capabilities",
                                "blast_radius", "cgroup", "variable_dropped", "connection", "mechanism",
                                "task_step", "deliverable", "list_entry"):
        raise ProtocolError(M.UNEXPECTED_TYPE.format(type=t))
    body = {k: v for k, v in obj.items() if k not in ("v", "type")}
    return t, check(t, body)
