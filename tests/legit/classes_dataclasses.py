# Legit tool: a small domain model for the sales: classes with inheritance and properties,
# dataclasses, enums, typing, NamedTuple and collections.namedtuple (dataclasses and
# namedtuple build their methods with exec inside the standard library: must not be refused).
# Covers: @dataclass (order=True, frozen=True, field(default_factory=...), __post_init__,
#   asdict, astuple, replace, fields), slots=True, Enum/IntEnum/Flag/auto/StrEnum-like,
#   typing (Optional, Union, Protocol, TypedDict, Generic, TypeVar, Literal, Callable,
#   get_type_hints), abc.ABC with abstractmethod, __repr__/__eq__/__hash__, classmethod,
#   staticmethod, property setter, super(), __class__.__name__, type(self).__name__.
# Proof: RESULT lines (objects built from the data, their ordering and reprs) equal the host
#   run's.
# inputs: sales.csv products.csv
import abc
import csv
import enum
from collections import namedtuple
from dataclasses import asdict, astuple, dataclass, field, fields, replace
from typing import Callable, Generic, Literal, NamedTuple, Optional, Protocol, TypedDict, TypeVar, Union, get_type_hints


class Region(enum.Enum):
    NORTH = "North"
    SOUTH = "South"
    EAST = "East"
    WEST = "West"
    CENTRAL = "Central"


class Size(enum.IntEnum):
    SMALL = 1
    MEDIUM = 2
    LARGE = 3


class Flags(enum.Flag):
    NONE = 0
    BIG = enum.auto()
    DISCOUNTED = enum.auto()


@dataclass(frozen=True, order=True)
class Sale:
    revenue: float
    date: str
    region: Region = field(compare=False)
    product: str = field(compare=False)
    units: int = field(compare=False, default=1)

    @property
    def size(self) -> Size:
        return Size.LARGE if self.units > 20 else Size.MEDIUM if self.units > 5 else Size.SMALL


@dataclass(slots=True)
class Product:
    name: str
    category: str
    list_price: float
    sales: list = field(default_factory=list, repr=False)
    code: str = field(init=False)

    def __post_init__(self):
        self.code = "".join(w[0] for w in self.name.split()).upper()


class PriceRow(TypedDict):
    product: str
    price: float


class Point(NamedTuple):
    x: float
    y: float = 0.0


Pair = namedtuple("Pair", ["left", "right"], defaults=[None])
T = TypeVar("T")


class Box(Generic[T]):
    def __init__(self, item: T) -> None:
        self.item = item

    def get(self) -> T:
        return self.item


class HasTotal(Protocol):
    def total(self) -> float: ...


class Report(abc.ABC):
    def __init__(self, title: str):
        self._title = title

    @property
    def title(self) -> str:
        return self._title

    @title.setter
    def title(self, value: str) -> None:
        self._title = value.strip()

    @abc.abstractmethod
    def total(self) -> float: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.title!r}, total={self.total():.2f})"


class RegionReport(Report):
    def __init__(self, region: Region, sales: list):
        super().__init__(f"Region {region.value}")
        self.region, self.sales = region, sales

    def total(self) -> float:
        return round(sum(s.revenue for s in self.sales), 2)

    @classmethod
    def build(cls, region: Region, all_sales: list) -> "RegionReport":
        return cls(region, [s for s in all_sales if s.region is region])

    @staticmethod
    def kind() -> Literal["region"]:
        return "region"


def grand_total(reports: list, key: Optional[Callable[[HasTotal], float]] = None) -> Union[int, float]:
    return round(sum((key or (lambda r: r.total()))(r) for r in reports), 2)


with open("inputs/sales.csv", newline="") as f:
    sales = [Sale(float(r["revenue"]), r["date"], Region(r["region"]), r["product"], int(r["units"]))
             for r in csv.DictReader(f)]
with open("inputs/products.csv", newline="") as f:
    products = {r["product"]: Product(r["product"], r["category"], float(r["list_price"])) for r in csv.DictReader(f)}
for s in sales:
    products[s.product].sales.append(s)

reports = [RegionReport.build(r, sales) for r in Region]
reports[0].title = "  North (main)  "
biggest = max(sales)
flags = Flags.NONE
if biggest.units > 3:
    flags |= Flags.BIG
changed = replace(biggest, units=99)
rows: list[PriceRow] = [{"product": p.name, "price": p.list_price} for p in products.values()]

print(f"RESULT: reports={reports}")
print(f"RESULT: grand total={grand_total(reports)} kind={RegionReport.kind()} abstract={Report.__abstractmethods__ == frozenset({'total'})}")
print(f"RESULT: biggest={asdict(biggest)} size={biggest.size.name}")
print(f"RESULT: astuple={astuple(changed)[:2]} units={changed.units} frozen_eq={changed == biggest}")
print(f"RESULT: sizes={sorted((sz.name, sum(1 for s in sales if s.size is sz)) for sz in Size)}")
print(f"RESULT: flags={flags} {Flags.BIG in flags} {Flags.DISCOUNTED in flags}")
print(f"RESULT: products={[repr(p) for p in products.values()]}")
print(f"RESULT: fields={[f.name for f in fields(Sale)]} hints={sorted(get_type_hints(Product))}")
print(f"RESULT: point={Point(1.5)} pair={Pair('a')} box={Box[int](3).get()} rows={len(rows)}")
print(f"RESULT: class names={[type(r).__name__ for r in reports[:1]]} {biggest.__class__.__name__} {Region.EAST!r}")
