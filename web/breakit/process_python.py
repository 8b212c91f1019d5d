# Try to break it: start a process, the plain way.
# Runs `uname -a` with subprocess. The pre-check refuses `import subprocess` (no run is ever
# granted process creation) and the tool does not run.
import subprocess

result = subprocess.run(["uname", "-a"], capture_output=True, text=True, check=True)
print(result.stdout)
