# Try to break it: start a process where the Python layers cannot see it.
# The shell command is run by Tcl, the interpreter inside tkinter (Python's standard library):
# its `exec` command forks the child itself, in C, not through os or subprocess, so the audit
# hook has no event to judge, and tkinter is no process module to the pre-check. The kernel
# does: seccomp refuses the fork's clone() and the supervisor records it from outside the
# jail. (This variant used to call libc's system() through ctypes from a ThreadPoolExecutor
# worker; the audit hook now judges what a thread the tool started does as the tool's.)
import tkinter

COMMAND = "exec uname -a"

tcl = tkinter.Tcl()  # Tcl alone: no window, no display
print(tcl.eval(COMMAND))
