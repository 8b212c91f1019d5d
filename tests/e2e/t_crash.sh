# How a tool's end is reported: a crash of the interpreter (SIGSEGV), an uncaught exception
# (KeyError, with its line and a traceback in the tool's own terms), sys.exit(3); and the
# daemons keep serving.
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"

tool segv.py <<'PY'
import ctypes
print("about to crash", flush=True)
ctypes.string_at(0)
print("not reached")
PY
bare_json "$T/segv.py"
expect_eq "segfault status" error "$(j .status)"
expect_eq "segfault signal" SIGSEGV "$(j .signal)"
expect_eq "segfault exit_code" null "$(j .exit_code)"
expect_eq "segfault killed" null "$(j .killed)"
expect_eq "segfault stdout" "about to crash" "$(j .stdout)"

tool keyerror.py <<'PY'
data = {"a": 1}

def lookup(key):
    return data[key]

print(lookup("a"))
print(lookup("missing"))
PY
run_json "$T/keyerror.py"
expect_eq "KeyError status" error "$(j .status)"
expect_eq "KeyError exit_code" 1 "$(j .exit_code)"
expect_eq "KeyError signal" null "$(j .signal)"
expect_eq "KeyError stdout" 1 "$(j .stdout)"
expect_eq "exception events" 1 "$(j '[.events[] | select(.kind == "exception")] | length')"
ev='.events[] | select(.kind == "exception")'
expect_eq "exception event op" KeyError "$(j "$ev | .op")"
expect_eq "exception event message" "KeyError: 'missing'" "$(j "$ev | .message")"
# The innermost line of the tool's own code: the raise is in lookup(), line 4.
expect_eq "exception event line" 4 "$(j "$ev | .line")"
tb=$(j "$ev | .traceback")
expect_match "traceback names the tool" 'File "<tool>", line 7, in <module>' "$tb"
expect_match "traceback has the raising frame" 'File "<tool>", line 4, in lookup' "$tb"
expect_match "traceback ends with the exception" "KeyError: 'missing'$" "$tb"
expect_match "stderr has the traceback" 'Traceback \(most recent call last\)' "$(j .stderr)"

tool exit3.py <<'PY'
import sys
print("exiting with 3")
sys.exit(3)
PY
run_json "$T/exit3.py"
expect_eq "sys.exit(3) status" error "$(j .status)"
expect_eq "sys.exit(3) exit_code" 3 "$(j .exit_code)"
expect_eq "sys.exit(3) signal" null "$(j .signal)"
expect_eq "sys.exit(3) exception events" 0 "$(j '[.events[] | select(.kind == "exception")] | length')"
expect_eq "sys.exit(3) stdout" "exiting with 3" "$(j .stdout)"

# Control: a tool that ends normally is ok with exit code 0 and no exception event.
expect_serving
expect_eq "control: exit_code" 0 "$(j .exit_code)"
expect_eq "control: exception events" 0 "$(j '[.events[] | select(.kind == "exception")] | length')"
