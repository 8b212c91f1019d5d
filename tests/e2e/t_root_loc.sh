# The root daemon's size (issue 11: only privileged work as root): scripts/root-loc.sh counts
# the lines of code of exactly the sources anvil-supervisor is linked from, and the total stays
# at most ROOT_LOC_MAX, the figure measured when the unprivileged work last moved out (the
# README states it). A line of code is a line not blank once comments are removed; its rule is
# checked first on a file of known count, and the selection on members the link must and must
# not have pulled in.
. "$(dirname "$0")/lib.sh"
# +216 (issue 17 part 2): a granted run's way out, all of it jail building or its checks: the
# egress fd checked (policy/limits.c), granted and its mount cloned (supervisor/run.c), bound
# and lo brought up in the child (jail/mountns.c, netns.c, contain.c), the relay forked by pid 1
# (jail/pid1.c; the relay itself, jail/relay.c, is not linked), the filter's and the handler's
# TCP rule and Landlock's port (policy/seccomp_rules.c, jail/landlock.c), its reasons.
# +19 (issue 17): the egress proxy's 16 reasons in the catalog and the layer and kind it records
# (policy/reasons.h, proto/names.h), which the supervisor includes whole. +421 (issue 16): the
# warm jails, jail building that belongs here.
# +37 (issue 17 part 3): the broker's reasons for network's hosts in the catalog, and the
# result's connections and blast_radius.hosts in proto/ (the supervisor encodes them empty).
# -12 (issue 17): the egress socket is no mount: the relay connects through its fd.
# +39 (issue 16, the fast end): the warm pool's refill while a core is idle (warm.c, 25) and
# the test build's --test-no-exit-flush and --test-machine-idle (14).
# +49 (fixes): run_request.python_layers_off and its warm check (7), a catalog entry (1), the
# child's error read before GO and the lost-count check at drain, with their test switches (41).
# +6: the jail child ends by exit_group, not _exit (jail/contain.c child_exit: a sanitized build).
ROOT_LOC_MAX=14468
SCRIPT=$TOP/scripts/root-loc.sh

# The rule, on a file whose count is known: two code lines, a directive, and comments, blank
# lines and a comment marker inside a string that are not code (or are part of a code line).
cat >"$T/rule.c" <<'C'
/* a comment
 * of three lines */
int a; // a code line with a comment

   	
// a comment alone
#define S "/* not a comment */"
int b; /* a code line */ /* with two */
C
got=$("$SCRIPT" --lines "$T/rule.c" | awk '{print $1}')
expect_eq "lines of code of a file of 3" 3 "$got"

out=$("$SCRIPT" "$ANVIL_BUILD") || fail "root-loc.sh failed: $out"
echo "$out" | tail -1
# What the supervisor links: its own sources, the jail builder, the protocol.
for f in supervisor/main.c supervisor/run.c jail/contain.c jail/pid1.c proto/codec.c lib/err.c; do
        echo "$out" | grep -q " $f\$" || fail "root-loc.sh does not count $f, which the supervisor links"
done
# What it does not: the other programs' sources, and a library member no supervisor code uses.
for f in broker/main.c broker/prompt.c runner/main.c ctl/main.c policy/audit.c jail/init/main.c; do
        echo "$out" | grep -q " $f\$" && fail "root-loc.sh counts $f, which the supervisor does not link"
done
# The total is the sum of the lines above it.
sum=$(echo "$out" | sed '$d' | awk '{s += $1} END {print s}')
total=$(echo "$out" | tail -1 | awk '{print $1}')
expect_eq "the total is the files' sum" "$sum" "$total"
[ "$total" -le "$ROOT_LOC_MAX" ] ||
        fail "the root daemon links $total lines of code, more than $ROOT_LOC_MAX: move unprivileged work out of it"
echo "root daemon: $total lines of code (at most $ROOT_LOC_MAX)"

# The prose of a result is the broker's (broker/render.c, POL_PROSE): the root daemon's binary
# carries none of it; the broker's and anvilctl's do (the control: the same search finds it).
for s in "namespaces of the probe's jail read back" "threads only: seccomp refused fork" \
        "private tmpfs, at most" "the listener counted" "their total not bounded"; do
        strings "$ANVIL_BUILD/anvil-supervisor" | grep -qF "$s" && fail "anvil-supervisor carries the prose '$s'"
        for b in anvil-broker anvilctl; do
                strings "$ANVIL_BUILD/$b" | grep -qF "$s" || fail "control: $b does not carry '$s'"
        done
done
echo "ok: the results' prose is in the broker and anvilctl, not in anvil-supervisor"

# The artifacts' hashes are the broker's too (bro_hash_artifacts): the root daemon does not
# link libmd; the broker does (the control).
ldd "$ANVIL_BUILD/anvil-supervisor" | grep -q 'libmd\.so' && fail "anvil-supervisor links libmd: it hashes as root"
ldd "$ANVIL_BUILD/anvil-broker" | grep -q 'libmd\.so' || fail "control: anvil-broker does not link libmd"
echo "ok: anvil-supervisor hashes nothing (no libmd), the broker does"
