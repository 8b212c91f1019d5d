# The jail's child allocates nothing between its clone and its exec of pid 1 (jail/contain.c,
# step_wait_go): it is cloned from a supervisor with threads (libuv's pool), and clone, unlike
# fork, runs no atfork handlers, so an allocator lock a pool thread held at the clone would
# never be released in the child, which would hang (or, under ASan, die) before its jail was
# built. In a test build the supervisor's malloc, calloc and realloc fail a child that calls
# them (supervisor/main.c), so every end-to-end test checks the rule; here, a run with user
# namespaces and a run on the direct rung each succeed. Control: --test-child-alloc makes the
# child allocate once at C5 (after GO), and the run fails with the guard's message. Not in a sanitized
# build, where ASan's allocator replaces the guard's.
. "$(dirname "$0")/lib.sh"
if [ "${ANVIL_E2E_SANITIZE:-}" = 1 ]; then
        echo "skip: a sanitized build's allocator is ASan's own: the guard is in the plain test build"
        exit 77
fi
tool ok.py <<<'print("built without an allocation")'

start_sup noalloc 930000000
ANVIL_SOCKET="$T/noalloc.sock" run_json "$T/ok.py"
expect_eq "user namespaces: status" ok "$(j .status)"
start_sup noalloc-direct 931000000 --test-no-userns
ANVIL_SOCKET="$T/noalloc-direct.sock" run_json "$T/ok.py"
expect_eq "direct: status" ok "$(j .status)"

start_sup alloc 932000000 --test-child-alloc
out=$(ANVIL_SOCKET="$T/alloc.sock" "$CTL" run "$T/ok.py" --json 2>&1)
rc=$?
expect_eq "control: anvilctl's exit code (the sandbox failed)" 122 "$rc"
expect_eq "control: the refusal" \
        "anvilctl: sandbox_failed: The jail's child allocated memory before exec (a test build's guard)" "$out"
