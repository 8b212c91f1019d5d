#!/usr/bin/python3
"""The layout is stated in three places that must match the tree: the README's layout block
(a fenced block under "### The layout"), docs/DESIGN.md's (under "## 2. Layout"), and each
source folder's opening comment, which says who runs its code and with what privilege.

  1. every top-level folder of the tree (as git has it) is named in both blocks, and both
     name no folder that is not there;
  2. each source folder (SOURCE_DIRS) has exactly one file whose first comment begins with
     the folder's name ("/* supervisor/: ..."), and that comment says who runs it and at what
     privilege (it names one of the words in PRIVILEGE).

Usage: check_layout.py [TOP]; prints each disagreement and exits 1 if there is one."""
import os
import re
import subprocess
import sys

TOP = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
SOURCE_DIRS = ["lib", "proto", "policy", "jail", "runner", "supervisor", "broker", "ctl", "mcp"]
PRIVILEGE = ("root", "unprivileged", "untrusted", "no privilege", "every program", "any user")

problems = []


def tree_dirs():
    try:
        out = subprocess.run(["git", "-C", TOP, "ls-files"], capture_output=True, text=True, check=True).stdout
        files = out.split("\n")
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(TOP):
            dirs[:] = [d for d in dirs if d not in (".git", "build")]
            files += [os.path.relpath(os.path.join(root, n), TOP) for n in names]
    return sorted({f.split("/")[0] for f in files if "/" in f and not f.startswith(".")})


def block_dirs(rel, heading):
    text = open(os.path.join(TOP, rel), encoding="utf-8").read()
    i = text.find(heading)
    if i < 0:
        problems.append(f"{rel}: no section '{heading}'")
        return set()
    m = re.search(r"^```[^\n]*\n(.*?)^```", text[i:], re.M | re.S)
    if not m:
        problems.append(f"{rel}: the section '{heading}' has no fenced block")
        return set()
    named = set()
    for line in m.group(1).split("\n"):
        # The names begin the line, before the first run of two blanks: "bench/ data/   text".
        head = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0] if line and not line[0].isspace() else ""
        for tok in head.split():
            if tok.endswith("/"):
                named.add(tok.rstrip("/").split("/")[0])
    return named


def opening_comment(path):
    try:
        src = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError):
        return ""
    src = src.lstrip()
    if not src.startswith("/*"):
        return ""
    return src[2: src.find("*/")]


def main():
    dirs = tree_dirs()
    for rel, heading in (("README.md", "### The layout"), ("docs/DESIGN.md", "## 2. Layout")):
        named = block_dirs(rel, heading)
        for d in dirs:
            if d not in named:
                problems.append(f"{rel} ({heading}): the tree's {d}/ is not named")
        for d in sorted(named - set(dirs)):
            problems.append(f"{rel} ({heading}): names {d}/, which the tree does not have")
    for d in SOURCE_DIRS:
        found = []
        for f in sorted(os.listdir(os.path.join(TOP, d))):
            c = opening_comment(os.path.join(TOP, d, f)).strip()
            if c.startswith(d + "/"):
                found.append((f, c))
        if len(found) != 1:
            problems.append(f"{d}/: {len(found)} files open with a comment beginning '{d}/' (one says who runs "
                            f"the folder's code and at what privilege): {', '.join(f for f, _ in found) or 'none'}")
            continue
        f, c = found[0]
        if not any(w in c.lower() for w in PRIVILEGE):
            problems.append(f"{d}/{f}: the folder's opening comment does not say at what privilege its code runs")
    for p in problems:
        print(p)
    print(f"layout: {len(dirs)} folders, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
