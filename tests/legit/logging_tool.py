# Legit tool: a tool that logs its progress to stderr and to a log file under ./artifacts.
# Covers: logging.getLogger with a StreamHandler(sys.stderr) and a FileHandler on
#   artifacts/run.log (and one made with os.path.join), Formatter without timestamps,
#   levels and filters, logger.exception inside except (the traceback module walks the
#   frames: it is the library, not the tool), logging.basicConfig-free setup, LoggerAdapter,
#   handlers flushed and closed with logging.shutdown.
# Proof: RESULT lines (records per level, lines in the log file) equal the host run's;
#   artifacts/run.log and artifacts/warnings_only.log have the host's bytes (no timestamps).
# inputs: sales.csv
import logging
import os
import sys

import pandas as pd

log = logging.getLogger("sales.report")
log.setLevel(logging.DEBUG)
fmt = logging.Formatter("%(levelname)-7s %(name)s:%(funcName)s: %(message)s")

to_stderr = logging.StreamHandler(sys.stderr)
to_stderr.setLevel(logging.INFO)
to_stderr.setFormatter(fmt)
to_file = logging.FileHandler("artifacts/run.log", mode="w", encoding="utf-8")
to_file.setFormatter(fmt)
warn_file = logging.FileHandler(os.path.join("artifacts", "warnings_only.log"), mode="w")
warn_file.setLevel(logging.WARNING)
warn_file.setFormatter(logging.Formatter("%(levelname)s|%(message)s"))


class Counting(logging.Filter):
    def __init__(self):
        super().__init__()
        self.counts = {}

    def filter(self, record):
        self.counts[record.levelname] = self.counts.get(record.levelname, 0) + 1
        return True


counter = Counting()
log.addFilter(counter)
for h in (to_stderr, to_file, warn_file):
    log.addHandler(h)


def load():
    log.info("reading %s", "inputs/sales.csv")
    df = pd.read_csv("inputs/sales.csv")
    log.debug("columns: %s", ", ".join(df.columns))
    return df


def check(df):
    for region, g in df.groupby("region"):
        if g["revenue"].sum() < 20000:
            log.warning("region %s below 20k: %.2f", region, g["revenue"].sum())
        else:
            log.debug("region %s ok", region)
    try:
        df["margin"]
    except KeyError:
        log.exception("no margin column; continuing without it")


sales = load()
check(sales)
adapter = logging.LoggerAdapter(log, {"run": "legit"})
adapter.info("rows=%d", len(sales))
log.error("this is a logged error, not a failure")
logging.shutdown()

with open("artifacts/run.log", encoding="utf-8") as f:
    lines = f.read().splitlines()
print(f"RESULT: counts={sorted(counter.counts.items())}")
print(f"RESULT: log lines={len(lines)} first={lines[0]!r}")
print(f"RESULT: traceback logged={any(l.startswith('KeyError') for l in lines)}")
with open(os.path.join("artifacts", "warnings_only.log")) as f:
    print(f"RESULT: warnings file={f.read().splitlines()}")
