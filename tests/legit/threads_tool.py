# Legit tool: per-region summaries computed in parallel threads, with threading.Thread and
# concurrent.futures.ThreadPoolExecutor (no processes).
# Covers: threading.Thread with a Lock-protected shared dict, queue.Queue as a work queue with
#   sentinel values, threading.Event, a Barrier, ThreadPoolExecutor.map and submit with
#   as_completed, thread-local storage, threading.current_thread().name, joins.
# Proof: RESULT lines (per-region totals, items processed, thread count) equal the host run's;
#   artifacts/threads_summary.csv has the host's bytes.
# inputs: sales.csv
import queue
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed

import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
groups = {region: g for region, g in sales.groupby("region")}

# 1. Plain threads writing into a shared dict under a lock.
totals = {}
lock = threading.Lock()
barrier = threading.Barrier(len(groups))


def total_of(region, frame):
    value = round(float(frame["revenue"].sum()), 2)
    barrier.wait()  # all threads computed before any writes
    with lock:
        totals[region] = value


threads = [threading.Thread(target=total_of, args=(r, g), name=f"sum-{r}") for r, g in groups.items()]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=30)

# 2. A queue of work items consumed by three workers.
work = queue.Queue()
done = queue.Queue()
stop = threading.Event()
local = threading.local()


def worker():
    local.count = 0
    while True:
        item = work.get()
        if item is None:
            work.task_done()
            break
        done.put((item["product"], item["units"] * item["unit_price"]))
        local.count += 1
        work.task_done()
    with lock:
        per_worker.append(local.count)


per_worker = []
workers = [threading.Thread(target=worker, daemon=True) for _ in range(3)]
for w in workers:
    w.start()
for rec in sales.to_dict(orient="records"):
    work.put(rec)
for _ in workers:
    work.put(None)
work.join()
stop.set()
for w in workers:
    w.join()
by_product = {}
while not done.empty():
    product, value = done.get()
    by_product[product] = by_product.get(product, 0.0) + value

# 3. A thread pool.
def units_of(region):
    return region, int(groups[region]["units"].sum()), threading.current_thread().name.startswith("pool")


with ThreadPoolExecutor(max_workers=4, thread_name_prefix="pool") as pool:
    mapped = sorted(pool.map(units_of, groups))
    futures = {pool.submit(lambda g: len(g), g): r for r, g in groups.items()}
    counts = {futures[f]: f.result() for f in as_completed(futures)}

summary = pd.DataFrame({"revenue": totals, "units": {r: u for r, u, _ in mapped}, "orders": counts}).sort_index()
summary.to_csv("artifacts/threads_summary.csv")

print(f"RESULT: totals={sorted(totals.items())}")
print(f"RESULT: processed={sum(per_worker)} workers={len(per_worker)} stopped={stop.is_set()}")
print(f"RESULT: by product={sorted((p, round(v, 2)) for p, v in by_product.items())}")
print(f"RESULT: pool units={[(r, u) for r, u, _ in mapped]} in pool={all(p for _, _, p in mapped)}")
print(f"RESULT: orders={sorted(counts.items())} alive={threading.active_count()}")
