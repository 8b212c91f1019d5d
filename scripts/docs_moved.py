#!/usr/bin/python3
"""Nothing of the old README lost: every verbatim string it quoted (each line of its fenced
blocks, each inline `code` span) must appear in README.md or docs/*.md, blanks aside (a
paragraph moved may be wrapped anew). Usage, in a checkout:
    git show REV:README.md | scripts/docs_moved.py [--allow FILE]
prints the strings missing (and the count of those found) and exits 1 if one is missing.
--allow FILE: strings meant to have changed, one a line, each followed by ' # why' (a line
beginning '##' is a comment)."""
import os, re, sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
old = sys.stdin.read()
allow = set()
if len(sys.argv) == 3 and sys.argv[1] == "--allow":
    for line in open(sys.argv[2], encoding="utf-8"):
        if line.strip() and not line.startswith("##"):
            allow.add(" ".join(line.rsplit(" # ", 1)[0].split()))

def norm(s):
    return " ".join(s.split())

new = []
for p in [os.path.join(top, "README.md")] + [os.path.join(top, "docs", f) for f in os.listdir(os.path.join(top, "docs"))]:
    if p.endswith(".md"):
        new.append(open(p, encoding="utf-8").read())
new = norm("\n".join(new))

strings, fence, prose = [], None, []
for line in old.split("\n"):
    m = re.match(r"^(`{3,}|~{3,})", line)
    if fence is None and m:
        fence = m.group(1)
        continue
    if fence is not None:
        if line.startswith(fence) and line.strip() == fence[0] * len(line.strip()):
            fence = None
        elif line.strip():
            strings.append(line)
        continue
    prose.append(line)
# Inline spans may run over a line end: look for them in the prose joined.
for span in re.findall(r"(?<!`)`([^`]+)`(?!`)", "\n".join(prose)):
    strings.append(span)

missing = [s for s in dict.fromkeys(strings) if norm(s) and norm(s) not in new and norm(s) not in allow]
for s in missing:
    print("missing:", s)
print(f"{len(set(strings)) - len(missing)} of {len(set(strings))} strings found; {len(missing)} missing")
sys.exit(1 if missing else 0)
