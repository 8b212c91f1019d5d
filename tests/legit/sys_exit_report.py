# Legit tool: a small command-style report that ends with sys.exit(0), as scripts do.
# Covers: a main() function returning an exit status, argparse with an explicit empty argv
#   (defaults only), sys.stdout.write and print(file=sys.stderr), sys.version_info checks,
#   sys.getsizeof, atexit handler writing under ./artifacts, sys.exit(0) at the end (the run
#   must be ok with exit code 0, not an error).
# Proof: RESULT lines equal the host run's; artifacts/report.txt and artifacts/atexit.txt
#   have the host's bytes (the atexit handler ran before the jail ended).
# inputs: sales.csv
import argparse
import atexit
import sys

import pandas as pd


def write_atexit():
    with open("artifacts/atexit.txt", "w") as f:
        f.write("atexit handler ran\n")


def main(argv):
    parser = argparse.ArgumentParser(description="Sales report")
    parser.add_argument("--input", default="inputs/sales.csv")
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--out", default="artifacts/report.txt")
    args = parser.parse_args(argv)
    if sys.version_info < (3, 8):
        print("python too old", file=sys.stderr)
        return 2
    sales = pd.read_csv(args.input)
    top = sales.groupby("product")["revenue"].sum().nlargest(args.top)
    with open(args.out, "w") as f:
        for product, revenue in top.items():
            f.write(f"{product}\t{revenue:.2f}\n")
    sys.stdout.write(f"RESULT: top={[p for p in top.index]}\n")
    print(f"RESULT: args={vars(args)}")
    print("report written", file=sys.stderr)
    return 0


atexit.register(write_atexit)
status = main([])
print(f"RESULT: status={status} big object={sys.getsizeof(list(range(100))) > 100}")
sys.exit(status)
