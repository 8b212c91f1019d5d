# Escape attempt: network access. Opens a TCP connection to a service on the host's
# loopback (127.0.0.1:8080), with a 2-second timeout, and prints what happened. (Only
# loopback: Anvil's examples and tests never aim a connection at another host.)
#
# What Anvil should do:
#   precheck:  blocked: import socket (network denied by policy)  -- the tool never runs.
#   audit:     blocked at runtime: socket.socket(AF_INET, SOCK_STREAM) (network denied by
#     policy (capability not granted)), raised into this stack as a PermissionError.
#   seccomp:   blocked at kernel: socket(AF_INET, SOCK_STREAM) (network denied by seccomp).
#   namespace: the jail has its own network namespace with no interfaces up: had a socket
#     been made, the connect would fail at once; the host's 127.0.0.1 is not reachable.
import socket

LOCAL_SERVICE = ("127.0.0.1", 8080)
TIMEOUT_S = 2.0


def try_connect(addr):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e:
        return f"socket() failed: {type(e).__name__}: {e}"
    try:
        s.settimeout(TIMEOUT_S)
        s.connect(addr)
        return f"connected (local end {s.getsockname()[0]}:{s.getsockname()[1]})"
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    finally:
        s.close()


host, port = LOCAL_SERVICE
print(f"connect {host}:{port}: {try_connect((host, port))}")
