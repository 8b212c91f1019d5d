# Legit tool: counting and grouping sales with the collections module.
# Covers: Counter (most_common, arithmetic, update, elements), defaultdict(list) and
#   defaultdict(lambda: defaultdict(float)), OrderedDict (move_to_end, popitem), deque with
#   maxlen as a sliding window, ChainMap of settings, namedtuple (built with exec inside the
#   stdlib: must not be refused) with _replace/_asdict/_fields, heapq.nlargest, bisect.
# Proof: RESULT lines (counts, nested sums, window maxima, the biggest orders) equal the host
#   run's.
# inputs: sales.csv
import bisect
import csv
import heapq
from collections import ChainMap, Counter, OrderedDict, defaultdict, deque, namedtuple

Sale = namedtuple("Sale", "date region product units unit_price revenue")
with open("./inputs/sales.csv", newline="") as f:
    reader = csv.reader(f)
    header = next(reader)
    sales = [Sale(d, r, p, int(u), float(up), float(rv)) for d, r, p, u, up, rv in reader]
assert list(Sale._fields) == header

by_region = Counter(s.region for s in sales)
units_by_product = Counter()
for s in sales:
    units_by_product[s.product] += s.units
h1 = Counter(s.product for s in sales if s.date < "2024-07-01")
h2 = Counter(s.product for s in sales if s.date >= "2024-07-01")
growth = h2 - h1

orders = defaultdict(list)
nested = defaultdict(lambda: defaultdict(float))
for s in sales:
    orders[s.region].append(s.revenue)
    nested[s.region][s.product] += s.revenue

recent = OrderedDict()
for s in sales:
    recent[s.product] = s.date
    recent.move_to_end(s.product)
oldest_product, oldest_date = next(iter(recent.items()))

window = deque(maxlen=10)
window_max = 0.0
for s in sales:
    window.append(s.revenue)
    window_max = max(window_max, sum(window))

settings = ChainMap({"currency": "EUR"}, {"currency": "USD", "decimals": 2})
biggest = heapq.nlargest(3, sales, key=lambda s: s.revenue)
first = biggest[0]._replace(region=biggest[0].region.upper())
cuts = sorted(s.revenue for s in sales)
below_100 = bisect.bisect_left(cuts, 100.0)

print(f"RESULT: by region={by_region.most_common()}")
print(f"RESULT: units by product={sorted(units_by_product.items())}")
print(f"RESULT: growth h2-h1={sorted(growth.items())} total={sum((h1 + h2).values())}")
print(f"RESULT: orders per region={ {k: len(v) for k, v in sorted(orders.items())} }")
print(f"RESULT: North/Keyboard={nested['North']['Keyboard']:.2f} East/Pen Set={nested['East']['Pen Set']:.2f}")
print(f"RESULT: last sold first={oldest_product}@{oldest_date} order={list(recent)}")
print(f"RESULT: best 10-order window={window_max:.2f}")
print(f"RESULT: settings={settings['currency']} {settings['decimals']} maps={len(settings.maps)}")
print(f"RESULT: biggest={[(s.date, s.product, s.revenue) for s in biggest]}")
print(f"RESULT: first={first._asdict()}")
print(f"RESULT: below 100={below_100} elements={sorted(Counter(a=2, b=1).elements())}")
