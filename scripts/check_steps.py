#!/usr/bin/python3
"""The numbered steps (S-, C-, P-, R-, B-, A-, M-) are one fact in three places: each family is
defined by the theory-of-operation comment of one file, listed in docs/DESIGN.md's step tables,
and cited by comments all over the code. This checks that the three agree:

  1. each family's file defines each step once (a line ` *   S7  ...` of its opening comment);
  2. DESIGN.md's table for the family lists exactly the same steps;
  3. every place DESIGN.md names for a step (`file` `function`) exists, and that function, or
     the comment right above it, cites the step (or a range that holds it: S1-S3);
  4. every step cited in a comment of the code, or anywhere in docs/ and the README, is
     defined (a few tokens that only look like steps are listed in NOT_STEPS, with why).

It is what catches a comment that says S9 where S7 is meant, or a step numbered twice.
Usage: check_steps.py [TOP]; prints each disagreement and exits 1 if there is one."""
import os
import re
import sys

TOP = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")

FAMILIES = {
    "S": "supervisor/main.c",
    "C": "jail/contain.c",
    "P": "jail/pid1.c",
    "R": "runner/main.c",
    "B": "broker/main.c",
    "A": "broker/agent.c",
    "M": "broker/model.c",
}
SOURCE_DIRS = ["lib", "proto", "policy", "jail", "runner", "supervisor", "broker", "ctl"]

# (file, token): tokens that are not steps there.
NOT_STEPS = {
    # Unicode's C0 and C1 control-character sets, in the text cleaners.
    ("broker/textbuf.h", "C0"), ("broker/textbuf.h", "C1"), ("broker/textbuf.c", "C0"),
    ("broker/textbuf.c", "C1"), ("broker/model_parse.c", "C0"), ("broker/model_parse.c", "C1"),
    ("policy/kaudit.c", "C0"), ("policy/kaudit.c", "C1"), ("docs/agent.md", "C0"),
    ("docs/agent.md", "C1"), ("docs/security.md", "C0"), ("docs/security.md", "C1"),
}

STEP = r"[SCPRBAM]\d{1,2}[a-c]?"
STEP_RE = re.compile(r"\b(" + STEP + r")\b")
RANGE_RE = re.compile(r"\b(" + STEP + r")-(" + STEP + r")\b")

problems = []


def read(rel):
    with open(os.path.join(TOP, rel), encoding="utf-8") as f:
        return f.read()


def key(step):
    m = re.match(r"([A-Z])(\d+)([a-c]?)$", step)
    return (m.group(1), int(m.group(2)), m.group(3))


def comments(src):
    """The text of a C file's comments, other characters blanked (line numbers kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(src[i:j])
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(src[i:j])
            i = j
        elif src[i] == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", src[i:j + 1]))
            i = j + 1
        else:
            out.append(src[i] if src[i] == "\n" else " ")
            i += 1
    return "".join(out)


def defined_in_code(family, rel):
    """Steps defined by the opening comment of rel: lines ' *   S7  text' (or ' *  S7 text')."""
    src = read(rel)
    head = src[: src.find("*/") + 2] if src.startswith("/*") else ""
    steps = {}
    for lineno, line in enumerate(head.split("\n"), 1):
        m = re.match(r"^\s*\*?\s+(" + family + r"\d{1,2}[a-c]?)\s{1,}\S", line)
        if m and re.match(r"^\s*\*\s{2,}" + family, line):
            s = m.group(1)
            if s in steps:
                problems.append(f"{rel}:{lineno}: {s} is defined twice (first at line {steps[s]})")
            else:
                steps[s] = lineno
    return steps


def design_tables():
    """DESIGN.md's step tables: rows '| S7 | what | `file` `function`, ... |'."""
    rows = {}
    for lineno, line in enumerate(read("docs/DESIGN.md").split("\n"), 1):
        m = re.match(r"^\|\s*\*{0,2}(" + STEP + r")\*{0,2}\s*\|(.*)\|(.*)\|\s*$", line)
        if not m:
            continue
        s = m.group(1)
        if s in rows:
            problems.append(f"docs/DESIGN.md:{lineno}: {s} is listed twice")
        anchors = re.findall(r"`([\w./-]+\.[ch])`\s*`(\w+)`", m.group(3))
        rows[s] = (lineno, anchors)
    return rows


def function_text(src, func):
    """The comment right above func's definition and its body, or None."""
    m = re.search(r"^[A-Za-z][^;\n]*\b" + re.escape(func) + r"\([^;]*?\)\s*\n\{", src, re.M)
    if not m:
        return None
    end = src.find("\n}", m.end())
    body = src[m.start(): end if end >= 0 else len(src)]
    above = src[: m.start()].rstrip("\n").split("\n")
    block = []
    if above and above[-1].rstrip().endswith("*/"):
        while above:
            line = above.pop()
            block.insert(0, line)
            if line.lstrip().startswith("/*"):
                break
    return "\n".join(block) + "\n" + body


def cites(text, step):
    if re.search(r"\b" + re.escape(step) + r"\b", text):
        return True
    for a, b in RANGE_RE.findall(text):
        if a[0] == b[0] == step[0] and key(a) <= key(step) <= key(b):
            return True
    return False


def main():
    defined = {}
    for fam, rel in FAMILIES.items():
        code = defined_in_code(fam, rel)
        if not code:
            problems.append(f"{rel}: its opening comment defines no {fam}-step")
        defined.update({s: rel for s in code})
    table = design_tables()
    for s, rel in sorted(defined.items(), key=lambda kv: key(kv[0])):
        if s not in table:
            problems.append(f"{rel}: {s} is defined there and missing from docs/DESIGN.md's step tables")
    for s, (lineno, anchors) in sorted(table.items(), key=lambda kv: key(kv[0])):
        if s not in defined:
            problems.append(f"docs/DESIGN.md:{lineno}: {s} is listed and {FAMILIES[s[0]]} does not define it")
        for rel, func in anchors:
            try:
                src = read(rel)
            except OSError:
                problems.append(f"docs/DESIGN.md:{lineno}: {s} names {rel}, which does not exist")
                continue
            text = function_text(src, func)
            if text is None:
                problems.append(f"docs/DESIGN.md:{lineno}: {s} names {rel} {func}(), which is not defined there")
            elif not cites(text, s):
                problems.append(f"{rel}: {func}() carries {s} (docs/DESIGN.md:{lineno}), and neither it nor "
                                f"the comment above it says {s}")
    # Citations.
    files = []
    for d in SOURCE_DIRS:
        for root, _, names in os.walk(os.path.join(TOP, d)):
            files += [os.path.relpath(os.path.join(root, f), TOP) for f in names if f.endswith((".c", ".h"))]
    docs = ["README.md"] + ["docs/" + f for f in os.listdir(os.path.join(TOP, "docs")) if f.endswith(".md")]
    for rel in sorted(files) + sorted(docs):
        text = read(rel)
        if rel.endswith((".c", ".h")):
            text = comments(text)
        for lineno, line in enumerate(text.split("\n"), 1):
            for tok in STEP_RE.findall(line):
                if tok in defined or (rel, tok) in NOT_STEPS:
                    continue
                problems.append(f"{rel}:{lineno}: cites {tok}, which no theory of operation defines")
    for p in problems:
        print(p)
    print(f"steps: {len(defined)} defined, {len(table)} in docs/DESIGN.md, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
