# Legit tool: SQL over the sales with sqlite3, in memory (':memory:') and in a database file
# under ./artifacts, with pandas to_sql/read_sql_query.
# Covers: sqlite3.connect(':memory:') and sqlite3.connect('artifacts/sales.db'), executemany
#   with parameters, a view, GROUP BY / window functions (RANK() OVER), a user function
#   registered with create_function, row_factory=sqlite3.Row, transactions with the
#   connection as a context manager, DataFrame.to_sql and pd.read_sql_query, iterdump to a
#   .sql file, backup from memory to a file.
# Proof: RESULT lines (query results) equal the host run's; artifacts/sales_dump.sql has the
#   host's bytes; the .db files are listed on both sides (their bytes are compared too: the
#   same statements on the same SQLite give the same pages).
# inputs: sales.csv regions.csv
import csv
import sqlite3

import pandas as pd

mem = sqlite3.connect(":memory:")
mem.row_factory = sqlite3.Row
mem.execute("CREATE TABLE sales (date TEXT, region TEXT, product TEXT, units INTEGER, unit_price REAL, revenue REAL)")
with open("inputs/sales.csv", newline="") as f:
    rows = [(r["date"], r["region"], r["product"], int(r["units"]), float(r["unit_price"]), float(r["revenue"]))
            for r in csv.DictReader(f)]
with mem:
    mem.executemany("INSERT INTO sales VALUES (?, ?, ?, ?, ?, ?)", rows)
mem.create_function("month_of", 1, lambda d: d[:7], deterministic=True)
mem.execute("CREATE VIEW monthly AS SELECT month_of(date) AS month, SUM(revenue) AS revenue FROM sales GROUP BY 1")

best = mem.execute("SELECT month, ROUND(revenue, 2) AS revenue FROM monthly ORDER BY revenue DESC LIMIT 1").fetchone()
ranked = mem.execute(
    """SELECT region, product, ROUND(SUM(revenue), 2) AS total,
              RANK() OVER (PARTITION BY region ORDER BY SUM(revenue) DESC) AS rnk
       FROM sales GROUP BY region, product"""
).fetchall()
top_per_region = [(r["region"], r["product"], r["total"]) for r in ranked if r["rnk"] == 1]
count, total = mem.execute("SELECT COUNT(*), ROUND(SUM(revenue), 2) FROM sales").fetchone()

disk = sqlite3.connect("artifacts/sales.db")
pd.read_csv("inputs/regions.csv").to_sql("regions", disk, index=False)
pd.read_csv("inputs/sales.csv").to_sql("sales", disk, index=False)
joined = pd.read_sql_query(
    """SELECT r.manager, COUNT(*) AS orders, ROUND(SUM(s.revenue), 2) AS revenue
       FROM sales s JOIN regions r USING (region) GROUP BY r.manager ORDER BY revenue DESC""",
    disk,
)
with disk:
    disk.execute("CREATE INDEX idx_sales_region ON sales(region)")
with open("artifacts/sales_dump.sql", "w", encoding="utf-8") as f:
    for line in disk.iterdump():
        if line.startswith(("CREATE", "BEGIN", "COMMIT")):
            f.write(line + "\n")
disk.close()

backup = sqlite3.connect("artifacts/memory_backup.db")
mem.backup(backup)
backup_count = backup.execute("SELECT COUNT(*) FROM sales").fetchone()[0]
backup.close()
mem.close()

print(f"RESULT: count={count} total={total}")
print(f"RESULT: best month={best['month']} {best['revenue']}")
print(f"RESULT: top per region={top_per_region}")
print(f"RESULT: managers={joined.to_dict(orient='records')}")
print(f"RESULT: backup rows={backup_count}")
