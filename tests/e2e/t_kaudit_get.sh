# A failed AUDIT_GET when a run's records are drained (the kernel's count of records it
# lost) must not pass for a complete record: the result says landlock denials may be missing,
# and why. A supervisor of its own with --test-kaudit-get-fails (a test build's switch: that
# AUDIT_GET fails with EIO) runs a tool Landlock refuses; control: the same supervisor without
# the switch says the denials are explained.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "the kernel's audit records are read by a root supervisor only"

tool read.py <<'PY'
try:
    open("/etc/hostname").read()
    print("read")
except PermissionError as e:
    print("refused", e.errno)
PY
# run_on NAME FLAG...: a supervisor of its own with FLAG..., read.py run once on it.
run_on() {
        local name=$1
        shift
        start_sup "$name" 1163000000 --enable-kernel-audit --test-no-python-layers --spares 0 --max-runs 2 "$@"
        ANVIL_SOCKET="$T/$name.sock" run_json "$T/read.py"
        kill "$SUP_PID"
        wait "$SUP_PID" 2>/dev/null
}
kaudit_line() { j '.isolation.mechanisms[] | select(startswith("kernel audit"))'; }

run_on plain
expect_eq "control: Landlock refuses" "refused 13" "$(j .stdout)"
expect_eq "control: the kernel's count read, the denials explained" "kernel audit: on, landlock denials explained" "$(kaudit_line)"

run_on failing --test-kaudit-get-fails
expect_eq "AUDIT_GET failing: Landlock still refuses" "refused 13" "$(j .stdout)"
expect_eq "AUDIT_GET failing: the result says records may be missing, and why" \
        "kernel audit: on, but landlock denials may be missing here (the kernel's count of lost records could not be read (Input/output error))" \
        "$(kaudit_line)"
