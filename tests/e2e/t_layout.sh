# The layout is stated where a reader looks for it and matches the tree (scripts/check_layout.py):
# the README's layout block and docs/DESIGN.md's name every top-level folder and no other, and
# each source folder opens with a comment saying who runs its code and at what privilege. The
# controls: a tree with a folder the blocks do not name, and a folder whose opening comment is
# gone, each fail.
. "$(dirname "$0")/lib.sh"
"$PY" "$TOP/scripts/check_layout.py" "$TOP" >"$T/layout.out" || fail "the layout is not as stated: $(cat "$T/layout.out")"
echo "ok: $(tail -1 "$T/layout.out")"
mkdir -p "$T/tree"
(cd "$TOP" && git ls-files -z | xargs -0 cp --parents -t "$T/tree/" 2>/dev/null) || fail "could not copy the tree"
mkdir -p "$T/tree/newroom" && echo x >"$T/tree/newroom/a.c"
"$PY" "$TOP/scripts/check_layout.py" "$T/tree" >"$T/control.out" && fail "control: a folder nobody names passed"
grep -q "the tree's newroom/ is not named" "$T/control.out" || fail "control: $(cat "$T/control.out")"
echo "ok: control: $(grep -m1 newroom "$T/control.out")"
rm -r "$T/tree/newroom"
sed -i '1,/\*\//{/^\/\* runner\//,/\*\//d}' "$T/tree/runner/runner.h"
"$PY" "$TOP/scripts/check_layout.py" "$T/tree" >"$T/control.out" && fail "control: a folder without its opening comment passed"
grep -q "^runner/: 0 files open with a comment" "$T/control.out" || fail "control: $(cat "$T/control.out")"
echo "ok: control: $(grep -m1 '^runner/' "$T/control.out")"
