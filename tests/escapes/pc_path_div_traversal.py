# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: write path 'artifacts/../outside.txt' outside ALLOWED_WRITE_PATHS (./artifacts)
# host-untouched: {rundir}/outside.txt
# attempt: Path('artifacts') / '..' / 'outside.txt', written with write_text
from pathlib import Path

(Path("artifacts") / ".." / "outside.txt").write_text("written by an escape attempt\n")
print("ESCAPED: wrote outside.txt")
