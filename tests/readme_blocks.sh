#!/usr/bin/env bash
# The README's shell blocks, by how each is tested. Every fenced block whose language is a
# shell's (sh, bash, shell, console) has, on the line just before its fence, a mark:
#   <!-- tested: host -->  run by tests/e2e/t_readme.sh on this machine, against the suite's daemons
#   <!-- tested: vm -->    the install blocks: only a machine booted with systemd runs them (the
#                          systemd units' VM test)
#   <!-- tested: ci -->    `make check` itself (.ci/run) and `make demo` (t_readme.sh runs its script)
# Usage:
#   tests/readme_blocks.sh MARK [FILE]   prints each block of that mark, after a line
#                                        "# FILE:LINE" (LINE: the fence's), then a blank line
#   tests/readme_blocks.sh --check [FILE]
#                                        lists every fence with no language, every shell block
#                                        with no mark or an unknown one, and every mark that is
#                                        not right above a shell block; exits 1 if there is one
# FILE is README.md beside tests/ by default.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
mode=$1
file=${2:-$TOP/README.md}
[ -r "$file" ] || { echo "readme_blocks.sh: cannot read $file" >&2; exit 2; }
name=$(basename "$file")

awk -v mode="$mode" -v name="$name" '
function problem(msg) { printf "%s:%d: %s\n", name, NR, msg; bad++ }
BEGIN { inblock = 0; bad = 0; prev = "" }
{
        line = $0
        if (inblock) {
                # A closing fence: the same character, at least as long, nothing but blanks after.
                if (substr(line, 1, length(fence)) == fence && line ~ ("^" fchar "+[ \t]*$")) {
                        inblock = 0
                        if (take) print ""
                } else if (take) {
                        print line
                }
                prev = line
                next
        }
        if (match(line, /^(```+|~~~+)/)) {
                fence = substr(line, 1, RLENGTH)
                fchar = substr(fence, 1, 1) == "`" ? "`" : "~"
                lang = substr(line, RLENGTH + 1)
                sub(/^[ \t]+/, "", lang)
                sub(/[ \t].*$/, "", lang)
                inblock = 1
                take = 0
                shell = (lang == "sh" || lang == "bash" || lang == "shell" || lang == "console")
                marked = (prev ~ /^<!-- tested: [a-z]+ -->$/)
                mark = ""
                if (marked) { mark = prev; sub(/^<!-- tested: /, "", mark); sub(/ -->$/, "", mark) }
                if (mode == "--check") {
                        if (lang == "")
                                problem("a fence with no language: say sh for commands, text for output")
                        else if (shell && !marked)
                                problem("a shell block with no <!-- tested: host|vm|ci --> on the line before it")
                        else if (shell && mark != "host" && mark != "vm" && mark != "ci")
                                problem("a shell block marked \"" mark "\": the marks are host, vm and ci")
                        else if (!shell && marked)
                                problem("a mark above a block that is not a shell block (" lang ")")
                } else if (shell && mark == mode) {
                        take = 1
                        printf "# %s:%d\n", name, NR
                }
                prev = line
                next
        }
        if (mode == "--check" && prev ~ /^<!-- tested:/)
                problem("a mark that is not right above a fenced block")
        prev = line
}
END {
        if (inblock) problem("a fence never closed")
        if (mode == "--check") exit(bad > 0)
}
' "$file"
