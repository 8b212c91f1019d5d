# Legit tool: sales analytics written with itertools and functools.
# Covers: itertools.groupby on sorted rows, accumulate (running totals and max), combinations
#   and permutations, product, chain.from_iterable, islice, pairwise, starmap, zip_longest,
#   count, compress, tee; functools.reduce, lru_cache (cache_info), partial, cmp_to_key,
#   total_ordering, wraps (a timing-free decorator), cached_property, singledispatch.
# Proof: RESULT lines (running totals, pair counts, cache stats) equal the host run's.
# inputs: sales.csv
import csv
import functools
import itertools
import operator

with open("inputs/sales.csv", newline="") as f:
    rows = list(csv.DictReader(f))

key = operator.itemgetter("date")
per_day = [(day, sum(float(r["revenue"]) for r in grp)) for day, grp in itertools.groupby(sorted(rows, key=key), key=key)]
running = list(itertools.accumulate(v for _, v in per_day))
running_max = list(itertools.accumulate((v for _, v in per_day), max))

regions = sorted({r["region"] for r in rows})
products = sorted({r["product"] for r in rows})
pairs = list(itertools.combinations(regions, 2))
grid = list(itertools.product(regions, products))
seen = {(r["region"], r["product"]) for r in rows}
missing = [cell for cell in grid if cell not in seen]
gaps = [(a, b) for (a, _), (b, _) in itertools.pairwise(per_day) if a[:7] != b[:7]]
first_five = list(itertools.islice(itertools.compress(rows, (int(r["units"]) > 20 for r in rows)), 5))
a, b = itertools.tee(v for _, v in per_day)
numbered = list(zip(itertools.count(1), itertools.chain.from_iterable([regions[:2], products[:2]])))
longest = list(itertools.zip_longest("ab", [1, 2, 3], fillvalue="-"))
products_of = list(itertools.starmap(operator.mul, [(2, 3), (4, 5)]))


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


@functools.lru_cache(maxsize=None)
@logged
def revenue_of(region):
    return round(sum(float(r["revenue"]) for r in rows if r["region"] == region), 2)


for region in regions * 3:
    revenue_of(region)
info = revenue_of.cache_info()


@functools.total_ordering
class Score:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def __eq__(self, other):
        return self.value == other.value

    def __lt__(self, other):
        return self.value < other.value

    @functools.cached_property
    def label(self):
        return f"{self.name}:{self.value}"


@functools.singledispatch
def describe(x):
    return f"other:{x!r}"


@describe.register
def _(x: int):
    return f"int:{x}"


@describe.register
def _(x: float):
    return f"float:{x:.1f}"


scores = sorted((Score(r, revenue_of(r)) for r in regions), reverse=True)
by_len = sorted(products, key=functools.cmp_to_key(lambda x, y: len(x) - len(y) or (x > y) - (x < y)))
total_units = functools.reduce(operator.add, (int(r["units"]) for r in rows))
units_over = functools.partial(lambda t, r: int(r["units"]) > t, 30)

print(f"RESULT: days={len(per_day)} total={running[-1]:.2f} best day={running_max[-1]:.2f}")
print(f"RESULT: pairs={len(pairs)} grid={len(grid)} missing={missing}")
print(f"RESULT: month changes={len(gaps)} first={gaps[0]}")
print(f"RESULT: first big orders={[(r['date'], r['units']) for r in first_five]}")
print(f"RESULT: tee sums equal={sum(a) == sum(b)} numbered={numbered}")
print(f"RESULT: longest={longest} starmap={products_of}")
print(f"RESULT: calls={revenue_of.__wrapped__.calls} hits={info.hits} misses={info.misses} name={revenue_of.__name__}")
print(f"RESULT: ranking={[s.label for s in scores]} max>min={scores[0] > scores[-1]}")
print(f"RESULT: by length={by_len}")
print(f"RESULT: total units={total_units} over 30={sum(map(units_over, rows))}")
print(f"RESULT: dispatch={[describe(1), describe(2.5), describe('x')]}")
