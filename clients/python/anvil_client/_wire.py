"""The broker's wire, as proto/ defines it: framing, strict decoding, inputs by fd.

Runs in the caller's process, with the caller's privileges, on the bytes the broker sends:
nothing here trusts them. A frame is a 4-byte big-endian length, then one msgpack map with
string keys, at most 16 MiB (PROTO_FRAME_MAX); every map has "v": 1 and "type"
(docs/protocol.md). The decoder refuses what proto/codec.c refuses: a frame of 0 bytes or
over the bound (from its header, before its body is read), invalid UTF-8, a string with NUL,
duplicate keys, nesting deeper than 8, and (schema.py) unknown fields, missing required
fields, wrong types and values over their bounds. File descriptors go with the frame's first
4 bytes (SCM_RIGHTS), as anvilctl sends them.
"""

from __future__ import annotations

import socket
import struct
from typing import Any, Sequence

import msgpack

from . import _messages as M
from .errors import ConnectionLost, ProtocolError

PROTO_VERSION = 1
FRAME_MAX = 16 * 1024 * 1024
DEPTH_MAX = 8
FDS_MAX = 32


def _pairs(pairs: list[tuple[Any, Any]]) -> dict:
    """A map's pairs as a dict: keys are strings, none given twice."""
    out: dict = {}
    for k, v in pairs:
        if type(k) is not str:
            raise ProtocolError(M.MAP_KEY_NOT_STRING)
        if k in out:
            raise ProtocolError(M.DUPLICATE_KEY.format(key=k))
        out[k] = v
    return out


def _depth(obj: Any, limit: int) -> None:
    """Refuses a tree deeper than limit (proto/codec.c checks the whole tree first)."""
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, (dict, list)):
            if d > limit:
                raise ProtocolError(M.TOO_DEEP.format(limit=limit))
            kids = o.values() if isinstance(o, dict) else o
            stack.extend((k, d + 1) for k in kids if isinstance(k, (dict, list)))


def encode(msg_type: str, fields: dict[str, Any]) -> bytes:
    """One whole frame, its length first. A field of None is left out (the server's default)."""
    body = {"v": PROTO_VERSION, "type": msg_type}
    body.update({k: v for k, v in fields.items() if v is not None})
    payload = msgpack.packb(body, use_bin_type=True)
    if len(payload) > FRAME_MAX:
        raise ValueError(M.FRAME_TOO_LARGE.format(what=msg_type, n=len(payload), max=FRAME_MAX))
    return struct.pack(">I", len(payload)) + payload


def decode(payload: bytes) -> dict[str, Any]:
    """A frame's payload as a map with "v" and "type" checked; its other fields unchecked."""
    try:
        obj = msgpack.unpackb(payload, raw=False, use_list=True, object_pairs_hook=_pairs,
                              strict_map_key=False)
    except ProtocolError:
        raise
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError,
            UnicodeDecodeError, TypeError) as e:
        raise ProtocolError(M.NOT_MSGPACK.format(why=e)) from None
    if not isinstance(obj, dict):
        raise ProtocolError(M.NOT_A_MAP)
    _depth(obj, DEPTH_MAX)
    if obj.get("v") != PROTO_VERSION or type(obj.get("v")) is not int:
        raise ProtocolError(M.BAD_VERSION.format(v=obj.get("v")))
    if type(obj.get("type")) is not str:
        raise ProtocolError(M.NO_TYPE)
    return obj


class Connection:
    """One connection to the broker: frames out (with fds) and in, blocking, with a deadline
    per read of `timeout` seconds (None: wait as long as the run may take)."""

    def __init__(self, path: str, timeout: float | None):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self._buf = bytearray()

    def connect(self) -> None:
        self.sock.connect(self.path)

    def send(self, frame: bytes, fds: Sequence[int] = ()) -> None:
        """The frame; the fds (at most 32) go with its first 4 bytes, as proto/stream.c
        expects them: a receiver gives them to the frame that begins where they arrive."""
        if len(fds) > FDS_MAX:
            raise ValueError(M.TOO_MANY_FDS.format(n=len(fds), max=FDS_MAX))
        if fds:
            sent = socket.send_fds(self.sock, [frame[:4]], list(fds))
            if sent != 4:  # a stream socket takes 4 bytes whole or fails
                raise OSError(M.SHORT_SEND)
            frame = frame[4:]
        self.sock.sendall(frame)

    def _fill(self, n: int) -> bool:
        """Reads until n bytes are buffered; False if the stream ends first."""
        while len(self._buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self._buf)))
            if not chunk:
                return False
            self._buf += chunk
        return True

    def read(self) -> dict[str, Any] | None:
        """The next frame's map (see decode), or None when the broker closed the connection
        between frames; ConnectionLost when it closed inside one."""
        if not self._fill(4):
            if self._buf:
                raise ConnectionLost(M.TRUNCATED_FRAME.format(have=len(self._buf), want=4))
            return None
        (n,) = struct.unpack(">I", self._buf[:4])
        if n == 0 or n > FRAME_MAX:
            raise ProtocolError(M.BAD_FRAME_LENGTH.format(n=n, max=FRAME_MAX))
        if not self._fill(4 + n):
            raise ConnectionLost(M.TRUNCATED_FRAME.format(have=len(self._buf) - 4, want=n))
        payload = bytes(self._buf[4:4 + n])
        del self._buf[:4 + n]
        return decode(payload)

    def close(self) -> None:
        self.sock.close()
