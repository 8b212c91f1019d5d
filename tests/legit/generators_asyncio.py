# Legit tool: streaming the sales through generators and aggregating them with asyncio
# coroutines (no network: asyncio.run, gather, queues, sleep(0), an async generator).
# Covers: a generator function reading ./inputs/sales.csv lazily, yield from, a generator
#   pipeline with send() (a running-average coroutine-style generator), generator
#   expressions, asyncio.run of a main coroutine, asyncio.gather, asyncio.Queue with
#   producer/consumers, an async generator with async for, asyncio.wait_for, asyncio.Lock,
#   contextlib.asynccontextmanager, asyncio.to_thread.
# Proof: RESULT lines (counts and totals through each path) equal the host run's.
# inputs: sales.csv
import asyncio
import contextlib
import csv


def read_rows(path):
    with open(path, newline="") as f:
        yield from csv.DictReader(f)


def only(rows, region):
    for r in rows:
        if r["region"] == region:
            yield r


def averager():
    total, n, avg = 0.0, 0, None
    while True:
        value = yield avg
        if value is None:
            return n
        total += value
        n += 1
        avg = total / n


avg = averager()
next(avg)
last = None
for r in only(read_rows("inputs/sales.csv"), "East"):
    last = avg.send(float(r["revenue"]))
try:
    avg.send(None)
except StopIteration as stop:
    east_n = stop.value
big = sum(1 for r in read_rows("inputs/sales.csv") if int(r["units"]) >= 20)


async def rows_async(path):
    for r in read_rows(path):
        await asyncio.sleep(0)
        yield r


@contextlib.asynccontextmanager
async def opened(name):
    events.append(f"open {name}")
    try:
        yield name
    finally:
        events.append(f"close {name}")


events = []


async def region_total(region):
    async with opened(region):
        total = 0.0
        async for r in rows_async("inputs/sales.csv"):
            if r["region"] == region:
                total += float(r["revenue"])
        return region, round(total, 2)


async def pipeline():
    q = asyncio.Queue(maxsize=50)
    lock = asyncio.Lock()
    counts = {}

    async def producer():
        for r in read_rows("inputs/sales.csv"):
            await q.put(r)
        for _ in range(3):
            await q.put(None)

    async def consumer():
        while (r := await q.get()) is not None:
            async with lock:
                counts[r["product"]] = counts.get(r["product"], 0) + int(r["units"])
        return True

    results = await asyncio.gather(producer(), *(consumer() for _ in range(3)))
    return counts, results


async def main():
    totals = await asyncio.gather(*(region_total(r) for r in ("North", "South", "East", "West", "Central")))
    counts, flags = await asyncio.wait_for(pipeline(), timeout=60)
    lines = await asyncio.to_thread(lambda: sum(1 for _ in read_rows("inputs/sales.csv")))
    return totals, counts, flags, lines


totals, counts, flags, lines = asyncio.run(main())
print(f"RESULT: east n={east_n} avg={last:.4f} big orders={big}")
print(f"RESULT: totals={totals}")
print(f"RESULT: units={sorted(counts.items())} consumers done={flags[1:]}")
print(f"RESULT: lines={lines} events={len(events)} first={events[:2]}")
