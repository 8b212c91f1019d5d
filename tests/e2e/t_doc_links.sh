# The documentation's links hold: every relative link of README.md and docs/*.md names a file
# that exists, and a #section of it that one of its headings makes (as GitHub makes anchors:
# lowercased, punctuation but '-' and '_' dropped, each blank a '-', a repeated heading -1,
# -2...). A section renamed or a page moved without its links fails here. Code comments cite
# docs by file and section name too; those are not links and are not checked.
. "$(dirname "$0")/lib.sh"
"$PY" - "$TOP" <<'PY' || fail "broken links in the documentation"
import os, re, sys

top = sys.argv[1]
pages = [os.path.join(top, "README.md")] + sorted(
    os.path.join(top, "docs", f) for f in os.listdir(os.path.join(top, "docs")) if f.endswith(".md"))

def text_outside_code(path):
    """The page's lines, fenced blocks blanked (a link in a code sample is no link)."""
    out, fence = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        m = re.match(r"^(`{3,}|~{3,})", line)
        if fence is None and m:
            fence = m.group(1)
            out.append("")
        elif fence is not None:
            if line.startswith(fence) and line.strip() == fence[0] * len(line.strip()):
                fence = None
            out.append("")
        else:
            out.append(line)
    return out

def anchors(path):
    seen, result = {}, set()
    for line in text_outside_code(path):
        m = re.match(r"^#{1,6} (.*)$", line)
        if not m:
            continue
        a = m.group(1).strip().lower()
        a = re.sub(r"[^\w\- ]", "", a)
        a = a.replace(" ", "-")
        n = seen.get(a, 0)
        seen[a] = n + 1
        result.add(a if n == 0 else f"{a}-{n}")
    return result

bad = 0
checked = 0
for page in pages:
    for no, line in enumerate(text_outside_code(page), 1):
        # Inline code is no link either.
        line = re.sub(r"`[^`]*`", "", line)
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            checked += 1
            path, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            where = f"{os.path.relpath(page, top)}:{no}: {target}"
            if not os.path.exists(dest):
                print(f"{where}: no such file")
                bad += 1
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                print(f"{where}: no section #{frag} in {os.path.relpath(dest, top)}")
                bad += 1
print(f"{checked} links checked, {bad} broken")
sys.exit(1 if bad else 0)
PY
echo "ok: every link of README.md and docs/ leads to a file and a section that exist"
