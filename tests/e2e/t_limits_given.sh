# A limit left out takes its default; one given as 0 is out of range like any other (no limit's
# range holds 0) and refused with bad_request naming the field (issue 9: today's build took
# `limits.wall_s = 0` for the default). Each limit both ways, on both daemons' sockets, with a
# hand-packed frame (frametool zero:FIELD, nil:FIELD): 0 is refused, nil runs. And anvilctl,
# which leaves a limit unset when no option names it, gets the defaults, and refuses 0 itself.
. "$(dirname "$0")/lib.sh"
FT="$ANVIL_BUILD/tests/frametool"
[ -x "$FT" ] || fail "$FT is missing: build it with 'make tests'"

MIN=(wall_s:1 cpu_s:1 memory_mb:64 output_bytes:1 files_bytes:4096 pids:8)
for sock in "$ANVIL_SUP_SOCKET" "$ANVIL_SOCKET"; do
        name=$([ "$sock" = "$ANVIL_SUP_SOCKET" ] && echo supervisor || echo broker)
        for fm in "${MIN[@]}"; do
                f=${fm%%:*} min=${fm#*:}
                out=$("$FT" "$sock" "zero:$f" 2>&1)
                expect_eq "$name: $f given as 0" \
                        "error code=bad_request field=run_request.limits.$f message=run_request.limits.$f: 0 is below the minimum of $min" \
                        "$out"
                out=$("$FT" "$sock" "nil:$f" 2>&1)
                expect_eq "$name: $f given as nil: the run starts" "ok run_event" "$out"
        done
done

tool hello.py <<<'print("defaults")'
run_json "$T/hello.py"
expect_eq "anvilctl, no limit named: ok" "ok defaults" "$(j '"\(.status) \(.stdout)"')"
expect_eq "anvilctl, no limit named: the defaults in force" "10 5 512 1048576 67108864" \
        "$(j '.blast_radius.limits | "\(.wall_s) \(.cpu_s) \(.memory_mb) \(.output_bytes) \(.files_bytes)"')"
for opt in --timeout --cpu --memory; do
        "$CTL" run "$T/hello.py" "$opt" 0 >"$T/out" 2>"$T/err"
        rc=$?
        expect_eq "anvilctl $opt 0: a usage error" 125 "$rc"
done
