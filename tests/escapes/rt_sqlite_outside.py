# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: sqlite3.connect('/work/leak.db') (write outside ALLOWED_WRITE_PATHS)
# attempt: create a database outside the write roots (SQLite opens files itself: no open event), path built at run time
# host-untouched: {rundir}/leak.db
import sqlite3

p = "/".join(["", "work", "leak.db"])
try:
    sqlite3.connect(p).execute("create table t (x)")
    print("ESCAPED: created", p)
except PermissionError as e:
    print("refused:", e)
