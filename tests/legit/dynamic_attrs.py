# Legit tool: everyday dynamic Python that is not an escape: getattr dispatch on computed
# method names, the tool's own dunder protocols, custom pickling with __reduce__,
# ast.literal_eval of a config string, importlib.import_module with a literal name,
# gc.collect, uuid4 and timing with perf_counter.
# Covers: getattr(series, name)() for 'sum'/'mean'/'max', getattr(self, f'_fmt_{kind}'),
#   hasattr/setattr/vars on the tool's objects, obj.__dict__, type(x).__name__,
#   __qualname__, __module__, __doc__, a class defining __getattr__, __getitem__, __iter__,
#   __len__, __contains__, __call__, __eq__/__hash__, __add__, __format__, __bool__,
#   __init_subclass__ (a registry), a descriptor with __set_name__/__get__, a metaclass,
#   __slots__, __reduce__ (pickled and unpickled), ast.literal_eval, importlib.import_module
#   ("statistics"), importlib.util.find_spec, gc.collect, uuid.uuid4, time.perf_counter.
# Proof: RESULT lines equal the host run's.
# inputs: sales.csv
import ast
import gc
import importlib
import importlib.util
import pickle
import time
import uuid

import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
t0 = time.perf_counter()

aggregations = ast.literal_eval("['sum', 'mean', 'max', 'min']")
settings = ast.literal_eval("{'digits': 2, 'columns': ('units', 'revenue'), 'ratio': 0.5}")
dispatched = {name: round(float(getattr(sales["revenue"], name)()), settings["digits"]) for name in aggregations}

statistics = importlib.import_module("statistics")
found_json = importlib.util.find_spec("json") is not None  # a module that is surely there
median_units = statistics.median(sales["units"])


class Registry(type):
    classes = {}

    def __new__(mcls, name, bases, ns, **kwargs):
        cls = super().__new__(mcls, name, bases, ns, **kwargs)
        if bases:
            mcls.classes[name] = cls
        return cls


class Positive:
    def __set_name__(self, owner, name):
        self.private = "_" + name

    def __get__(self, obj, objtype=None):
        return self if obj is None else getattr(obj, self.private)

    def __set__(self, obj, value):
        if value < 0:
            raise ValueError(f"{self.private[1:]} must be >= 0, got {value}")
        setattr(obj, self.private, value)


class Formatter(metaclass=Registry):
    kinds = []

    def __init_subclass__(cls, kind="", **kwargs):
        super().__init_subclass__(**kwargs)
        Formatter.kinds.append(kind)

    def format(self, kind, value):
        return getattr(self, f"_fmt_{kind}")(value)


class Money(Formatter, kind="money"):
    """An amount in a currency."""

    amount = Positive()

    def __init__(self, amount, currency="EUR"):
        self.amount = amount
        self.currency = currency

    def _fmt_money(self, value):
        return f"{value:,.2f} {self.currency}"

    def _fmt_short(self, value):
        return f"{value / 1000:.1f}k"

    def __add__(self, other):
        return Money(round(self.amount + other.amount, 2), self.currency)

    def __eq__(self, other):
        return isinstance(other, Money) and (self.amount, self.currency) == (other.amount, other.currency)

    def __hash__(self):
        return hash((self.amount, self.currency))

    def __format__(self, spec):
        return format(self.amount, spec or ",.2f") + " " + self.currency

    def __bool__(self):
        return self.amount != 0

    def __reduce__(self):
        return (Money, (self.amount, self.currency))

    def __repr__(self):
        return f"{type(self).__qualname__}({self.amount!r}, {self.currency!r})"


class Table(Formatter, kind="table"):
    __slots__ = ("rows", "extra")

    def __init__(self, rows):
        self.rows = rows
        self.extra = {}

    def __getattr__(self, name):  # only called for missing attributes
        if name.startswith("col_"):
            return [r[name[4:]] for r in self.rows]
        raise AttributeError(name)

    def __getitem__(self, i):
        return self.rows[i]

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __contains__(self, region):
        return any(r["region"] == region for r in self.rows)

    def __call__(self, column):
        return sum(r[column] for r in self.rows)


total = Money(round(float(sales["revenue"].sum()), 2))
north = Money(round(float(sales.loc[sales["region"] == "North", "revenue"].sum()), 2))
both = total + north
restored = pickle.loads(pickle.dumps(both))
try:
    Money(-1)
except ValueError as exc:
    negative = str(exc)

table = Table(sales.head(5).to_dict(orient="records"))
setattr(total, "note", "grand total")
attrs = sorted(k for k in vars(total))
gc.collect()
run_id = uuid.uuid4()
elapsed = time.perf_counter() - t0

print(f"RESULT: dispatched={dispatched} settings={settings}")
print(f"RESULT: median units={median_units} module={statistics.__name__} found={found_json}")
print(f"RESULT: total={total:,.2f} short={total.format('short', total.amount)} money={total.format('money', north.amount)}")
print(f"RESULT: sum={both!r} restored equal={restored == both} hash equal={hash(restored) == hash(both)} bool={bool(Money(0))}")
print(f"RESULT: negative={negative}")
print(f"RESULT: registry={sorted(Registry.classes)} kinds={Formatter.kinds}")
print(f"RESULT: table len={len(table)} first={table[0]['date']} col={table.col_units} North in={'North' in table} units={table('units')}")
print(f"RESULT: attrs={attrs} has note={hasattr(total, 'note')} doc={Money.__doc__!r} module={Money.__module__} name={type(table).__name__}")
print(f"RESULT: uuid version={run_id.version} len={len(str(run_id))} timed={elapsed >= 0}")
