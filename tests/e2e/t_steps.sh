# The numbered steps agree across the code and docs/DESIGN.md (scripts/check_steps.py): each
# defined once by its file's theory of operation, the same list in DESIGN's step tables, each
# step's named function citing it, every citation defined. The controls: a copy of the sources
# with a drift made on purpose (a step cited by the wrong number where DESIGN says it happens,
# a step defined twice, a citation of a step that does not exist) fails, each for its reason.
. "$(dirname "$0")/lib.sh"
"$PY" "$TOP/scripts/check_steps.py" "$TOP" >"$T/steps.out" || fail "the steps disagree: $(cat "$T/steps.out")"
echo "ok: $(tail -1 "$T/steps.out")"
mkdir -p "$T/tree"
(cd "$TOP" && cp -r --parents README.md docs lib proto policy jail runner supervisor broker ctl "$T/tree/")
control() { # WHAT FILE SED EXPECTED
        cp "$TOP/$2" "$T/saved"
        sed -i "$3" "$T/tree/$2"
        cmp -s "$T/tree/$2" "$T/saved" && fail "control $1: the edit changed nothing in $2"
        if "$PY" "$TOP/scripts/check_steps.py" "$T/tree" >"$T/control.out"; then
                fail "control $1: the checker passed a tree with the drift"
        fi
        grep -qF "$4" "$T/control.out" || fail "control $1: expected '$4', got: $(cat "$T/control.out")"
        echo "ok: control $1: $(grep -F "$4" "$T/control.out" | head -1)"
        cp "$T/saved" "$T/tree/$2"
}
control "wrong number" supervisor/run.c 's|^/\* S7: the wall clock|/* S9: the wall clock|' \
        "on_wall() carries S7"
control "defined twice" supervisor/main.c 's|^ \*   S12 cgroup removed| *   S11 cgroup removed|' "S11 is defined twice"
control "cited, not defined" jail/contain.c 's|/\* C7 \*/|/* C17 */|' "cites C17, which no theory of operation defines"
