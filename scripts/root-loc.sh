#!/bin/bash
# The root daemon's size: the lines of code of exactly the sources anvil-supervisor is linked
# from, per file and in total. `scripts/root-loc.sh [BUILD]` (default build/), after `make`.
#
# Which sources: the supervisor's own objects, and the members of libanvil.a that the linker
# pulled in, as its link map says (the Makefile links it with -Wl,-Map=BUILD/anvil-supervisor.map);
# and the project's headers those objects were compiled with, from their dependency files
# (BUILD/obj/.../*.d). A library member the supervisor does not use is not counted, nor is a
# header only other programs include.
#
# The rule: a line of code is a line that is not blank once its comments are removed, by the
# compiler's own preprocessor in its comment-only mode (cc -fpreprocessed -dD -E -P: comments
# gone, no macro expanded, no header read), so a comment's lines, a blank line and a line
# holding only a comment do not count; a directive (#include, #define) does. A header the
# build generates (BUILD/include) is not a source and is not counted.
# `scripts/root-loc.sh --lines FILE...` counts the given files by the same rule.
set -euo pipefail
CC=${CC:-cc}
loc() { "$CC" -fpreprocessed -dD -E -P -x c "$1" 2>/dev/null | grep -c '[^[:space:]]' || true; }
if [ "${1:-}" = --lines ]; then
        shift
        for f in "$@"; do printf '%6d %s\n' "$(loc "$f")" "$f"; done
        exit 0
fi
BUILD=${1:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath -m --relative-to="$TOP" "$BUILD")
cd "$TOP"
map=$BUILD/anvil-supervisor.map
[ -f "$map" ] || { echo "root-loc: $map not found: run make BUILD=$BUILD first" >&2; exit 2; }

# The archive members the link pulled in: "BUILD/libanvil.a(name.o)" lines of the map.
members=$(grep -o 'libanvil\.a([^)]*\.o)' "$map" | sed 's/.*(\(.*\))/\1/' | sort -u)
[ -n "$members" ] || { echo "root-loc: no member of libanvil.a in $map" >&2; exit 2; }
lib_srcs=$(ls lib/*.c proto/*.c policy/*.c jail/*.c)
srcs=$(ls supervisor/*.c)
for m in $members; do
        found=$(printf '%s\n' $lib_srcs | grep -E "(^|/)${m%.o}\.c$" || true)
        case $(printf '%s' "$found" | grep -c .) in
        1) srcs+=$'\n'$found ;;
        0) echo "root-loc: no source for the member $m of libanvil.a" >&2; exit 2 ;;
        *) echo "root-loc: the member $m of libanvil.a is ambiguous: $(echo $found)" >&2; exit 2 ;;
        esac
done

# The project's headers those objects were compiled with (their .d files; a path not below
# this tree is a system header).
headers=$(for s in $srcs; do
        d=$BUILD/obj/${s%.c}.d
        [ -f "$d" ] || { echo "root-loc: $d not found: rebuild with make BUILD=$BUILD" >&2; exit 2; }
        sed -e 's/\\$//' -e 's/^[^:]*://' "$d" | tr ' ' '\n' | grep -E '\.h$' | grep -v '^/' || true
done | sed "s|^$TOP/||; s|^\./||" | grep -v "^${BUILD%/}/" | sort -u)

total=0
for f in $(printf '%s\n' $srcs $headers | sort -u); do
        n=$(loc "$f")
        printf '%6d %s\n' "$n" "$f"
        total=$((total + n))
done
printf '%6d total\n' "$total"
