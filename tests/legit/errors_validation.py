# Legit tool: input validation with exceptions: raise with messages that contain paths and
# slashes (raise ValueError('Required columns missing: /work/inputs/x') caught and printed),
# try/except/else/finally, custom exception classes, chaining and ExceptionGroup.
# Covers: raise inside functions caught by the caller, `raise ... from ...` and __cause__,
#   except (A, B) as e, else and finally clauses, contextlib.suppress, a context manager
#   class whose __exit__ handles errors, assert messages, traceback.format_exception_only,
#   ExceptionGroup with except*, KeyError/ZeroDivisionError/FileNotFoundError from real calls
#   (a missing file under ./inputs).
# Proof: RESULT lines (each caught message) equal the host run's.
# inputs: sales.csv
import contextlib
import traceback

import pandas as pd


class SchemaError(ValueError):
    """A column the report needs is not in the input."""


class Validating:
    def __init__(self):
        self.errors = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, (ValueError, KeyError)):
            self.errors.append(f"{exc_type.__name__}: {exc}")
            return True  # handled
        return False


def require(df, columns, source="/work/inputs/x"):
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"Required columns missing: {source}")
    return True


sales = pd.read_csv("inputs/sales.csv")
messages = []

try:
    require(sales, ["date", "margin"])
except ValueError as exc:
    messages.append(str(exc))
    print(f"error: {exc}")
else:
    messages.append("no error?")
finally:
    messages.append("finally ran")

try:
    raise ValueError('Required columns missing: /work/inputs/x')
except ValueError as e:
    print(e)
    messages.append(f"literal: {e}")

try:
    try:
        sales["margin"]
    except KeyError as exc:
        raise SchemaError("column 'margin' missing in ./inputs/sales.csv; see https://example.com/docs/schema") from exc
except SchemaError as exc:
    messages.append(f"{type(exc).__name__}: {exc} (cause: {exc.__cause__!r})")

for attempt in ("inputs/missing.csv", "./inputs/also/missing.csv"):
    try:
        pd.read_csv(attempt)
    except FileNotFoundError as exc:
        messages.append(f"not found: {exc.filename}")

with Validating() as v:
    raise KeyError("region/product")
with Validating() as v2:
    ratios = {"a/b": 1}
    ratios["a/b"] = int("12/5")  # ValueError: not a number

with contextlib.suppress(ZeroDivisionError):
    ratio = sales["units"].sum() / 0  # numpy int: no exception, inf
    1 / 0

try:
    assert len(sales) == 501, f"expected 501 rows in /work/inputs/sales.csv, got {len(sales)}"
except AssertionError as exc:
    messages.append(f"assert: {exc}")

try:
    errors = []
    for value in ("3", "x/y", "", "4.5"):
        try:
            int(value)
        except ValueError as exc:
            errors.append(exc)
    raise ExceptionGroup("bad numbers", errors)
except* ValueError as group:
    messages.append(f"group: {len(group.exceptions)} ValueErrors")

only = traceback.format_exception_only(ZeroDivisionError, ZeroDivisionError("division by zero")).pop().strip()
for m in messages:
    print(f"RESULT: {m}")
print(f"RESULT: validating={v.errors} v2={v2.errors}")
print(f"RESULT: ratio={ratio} only={only}")
