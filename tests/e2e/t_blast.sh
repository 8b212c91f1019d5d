# The blast radius (issue 4): what the tool could read, write, reach and start, and its limits
# beside what it used, derived from the run itself (its inputs, its limits, what was verified
# for it), in the RunResult and in anvilctl's human output.
. "$(dirname "$0")/lib.sh"
printf 'a,b\n1,2\n' >"$T/one.csv"
printf 'x\n' >"$T/two.csv"
tool noop.py <<<'print("ran")'
run_json "$T/noop.py" --input "$T/one.csv" --input "$T/two.csv" --timeout 7 --memory 300
expect_eq "inputs, counted from the run's directory" "/work/inputs (read-only: 2 files, 10 bytes)" \
        "$(j '.blast_radius.read[] | select(startswith("/work/inputs"))')"
expect_eq "network" \
        "none: seccomp refused every socket but AF_UNIX (verified for this run); a network namespace of its own with no interface up; TCP bind and connect denied by landlock" \
        "$(j .blast_radius.network)"
expect_eq "processes" \
        "threads only: seccomp refused fork, vfork, clone of a process and exec (verified for this run); at most 64 threads, in a pid namespace of its own" \
        "$(j .blast_radius.processes)"
expect_eq "limits as given" "7 300" "$(j '"\(.blast_radius.limits.wall_s) \(.blast_radius.limits.memory_mb)"')"
expect_eq "write" "/work/artifacts (at most 67108864 bytes)" "$(j '.blast_radius.write[0]')"
# A tool the pre-check refused was judged under every layer (runner/main.c, R6): the
# radius is the same.
tool refused.py <<<'import socket'
run_json "$T/refused.py"
expect_eq "refused tool: status" blocked "$(j .status)"
expect_eq "refused tool: processes" \
        "threads only: seccomp refused fork, vfork, clone of a process and exec (verified for this run); at most 64 threads, in a pid namespace of its own" \
        "$(j .blast_radius.processes)"
expect_eq "refused tool: network" \
        "none: seccomp refused every socket but AF_UNIX (verified for this run); a network namespace of its own with no interface up; TCP bind and connect denied by landlock" \
        "$(j .blast_radius.network)"
# The human form.
out=$("$CTL" run "$T/noop.py" --input "$T/one.csv" --timeout 7) || fail "anvilctl run exited $?"
expect_eq "human: the card's title" "blast radius (namespaces+seccomp+landlock):" "$(grep '^blast radius' <<<"$out")"
expect_match "human: limits beside use" '^  limits:   wall 7 s \(used [0-9.]+ s\), cpu 5 s \(used [0-9.]+ s\), memory 512 MB \(peak [0-9.]+ MB\)' \
        "$(grep '^  limits:' <<<"$out")"
expect_eq "human: inputs" "  read:     /usr" "$(grep '^  read: ' <<<"$out")"
