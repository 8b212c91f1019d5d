# Escape attempt: process creation. Calls os.fork(); the child exits at once with
# os._exit(0), the parent waits for it and prints what happened.
#
# What Anvil should do:
#   namespace (now): the fork succeeds, but the child is inside the jail's own pid
#     namespace and cgroup (and under RLIMIT_NPROC); it sees no host processes.
#   precheck:  blocked: os.fork (process creation denied by policy)  -- the tool never runs.
#   audit:     the os.fork audit event from a tool frame is refused with a PermissionError
#     raised here (printed below).
#   seccomp:   fork/clone after start-up is denied by the kernel filter (EPERM).
import os

try:
    pid = os.fork()
except OSError as e:
    print(f"fork failed: {type(e).__name__}: {e}")
else:
    if pid == 0:
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print(f"fork succeeded: child pid {pid} (parent pid {os.getpid()}), "
          f"exit status {os.waitstatus_to_exitcode(status)}")
