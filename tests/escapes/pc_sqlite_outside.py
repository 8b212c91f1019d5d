# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: write path '/work/leak.db' outside ALLOWED_WRITE_PATHS (./artifacts)
# host-untouched: /work/leak.db
# attempt: sqlite3.connect on a new database file outside artifacts/ (SQLite opens it itself, from C)
import sqlite3

con = sqlite3.connect("/work/leak.db")
con.execute("create table t (x)")
con.commit()
print("ESCAPED: created /work/leak.db")
