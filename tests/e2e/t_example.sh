# The example tool: both artifacts exist, are what the result says (size, sha256), and the
# grand total equals one computed here without Anvil, with the csv module.
. "$(dirname "$0")/lib.sh"
run_json "$TOP/examples/revenue_by_region.py" --input "$TOP/data/sales.csv"
expect_eq status ok "$(j .status)"
expect_eq "artifact names" "revenue_by_region.csv revenue_by_region.png" "$(j '[.artifacts[].path] | sort | join(" ")')"
dir=$(j .artifacts_dir)
for i in 0 1; do
        p="$dir/$(j ".artifacts[$i].path")"
        [ -f "$p" ] || fail "artifact $p is missing"
        expect_eq "size of $(basename "$p")" "$(j ".artifacts[$i].bytes")" "$(stat -c %s "$p")"
        expect_eq "sha256 of $(basename "$p")" "$(j ".artifacts[$i].sha256")" "$(sha256sum "$p" | cut -d' ' -f1)"
done
expect_eq "png magic" "89504e47" "$(head -c4 "$dir/revenue_by_region.png" | od -An -tx1 | tr -d ' \n')"
expected=$($PY - "$TOP/data/sales.csv" <<'PY'
import csv, sys
from decimal import Decimal
with open(sys.argv[1], newline="") as f:
    print(f"{sum(Decimal(r['revenue']) for r in csv.DictReader(f)):.2f}")
PY
)
expect_eq "grand total printed by the tool" "grand total: $expected" "$(j .stdout | grep '^grand total:')"
from_artifact=$($PY - "$dir/revenue_by_region.csv" <<'PY'
import csv, sys
from decimal import Decimal
with open(sys.argv[1], newline="") as f:
    print(f"{sum(Decimal(r['revenue']) for r in csv.DictReader(f)):.2f}")
PY
)
expect_eq "sum of revenue_by_region.csv" "$expected" "$from_artifact"
