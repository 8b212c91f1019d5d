# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: os.system (process creation denied by policy)
# expect-stdout: carried on
# attempt: os.system from an __fspath__ the audit hook itself calls (sqlite3.connect's event carries the object as given), where its own events went unjudged
import os
import sqlite3

run = getattr(os, "sys" + "tem")
calls = []


class P:
    def __fspath__(self):
        calls.append(1)
        if len(calls) == 1:  # sqlite3.connect's audit event comes first: this is the hook's call
            print("ESCAPED: system returned", run("echo ran inside the audit hook"))
        return ":memory:"


sqlite3.connect(P())
print("carried on")
