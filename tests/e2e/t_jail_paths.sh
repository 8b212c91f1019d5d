# The table of the jail's paths (policy/jail_paths.h) holds in a real jail, under each layer:
# every entry is read (a file) or listed (a tree) by a tool, in the jail and directly (no
# namespaces: --test-no-userns, where the entries are on the host's paths or in the run's
# directory), once with the Python layers on and once with them off, and each outcome is what
# the table says:
#   kernel layers alone (Python layers off): done iff the table's landlock column lets it be
#     read (a file) or listed (a tree); else refused with EACCES. Control: every path so refused
#     is there and world-readable (stat, which Landlock does not judge), so it is not the
#     file's permissions that refuse it; and the same runs read what the table grants.
#   Python layers on: done iff the audit column lets the tool read it too; else refused by the
#     audit hook (anvil.SandboxBlocked), not by the kernel. Control: the kernel-only run above
#     read the paths the audit hook refused here (/etc/passwd, /proc, the runner...).
#   directly, an entry the jail alone has (/etc/passwd, /proc, /etc/hostname on the host) is
#     refused by each layer.
# The one change the table made: /etc/alternatives is not listed directly either (it was a
# tree rule there, a file rule in the jail); its files are still read through its links.
. "$(dirname "$0")/lib.sh"
"$ANVIL_BUILD/tests/jailpaths" >"$T/paths.txt" || fail "jailpaths failed"
[ "$(wc -l <"$T/paths.txt")" -gt 10 ] || fail "the table is short: $(cat "$T/paths.txt")"
tool read.py <<'PY'
import errno, os, stat
cwd = os.getcwd()
direct = cwd != "/work"
for line in open("inputs/paths.txt"):
    path, kind, where, sub, read, lst, audit = line.split()
    if direct:
        if where == "runner":
            continue
        p = cwd + ("" if sub == "-" else sub) if where == "run" else path
    else:
        p = path
    try:
        st = os.stat(p)
    except OSError:
        print(path, "absent")
        continue
    world = "world-readable" if st.st_mode & stat.S_IROTH else "not-world-readable"
    try:
        if kind == "tree":
            os.listdir(p)
        else:
            with open(p, "rb") as f:
                f.read(1)
        print(path, "done", world)
    except OSError as e:
        print(path, "refused", type(e).__name__, errno.errorcode.get(e.errno, e.errno), world)
PY

# check LABEL DIRECT PYTHON: the last run's lines against the table.
check() {
        local label=$1 direct=$2 python=$3 path kind where sub read lst audit got want n=0
        expect_eq "$label: status" ok "$(j .status)"
        while read -r path kind where sub read lst audit; do
                [ "$direct" = 1 ] && [ "$where" = runner ] && continue
                got=$(j .stdout | awk -v p="$path" '$1 == p { $1 = ""; print substr($0, 2) }')
                [ "$got" = absent ] && continue
                local can=$read
                [ "$kind" = tree ] && can=$lst
                [ "$direct" = 1 ] && [ "$where" = none ] && can=0
                if [ "$python" = 1 ] && [ "$audit" = 0 ]; then
                        want="refused SandboxBlocked None" # the audit hook's, with no errno
                elif [ "$can" = 1 ]; then
                        want=done
                else
                        want="refused PermissionError EACCES"
                fi
                [ "$direct" = 1 ] && [ "$where" = none ] && [ "$python" = 0 ] && want="refused PermissionError EACCES"
                # Directly, the run's directory itself is root's, mode 0711 (the rootless
                # supervisor's, who is the jail's uid there): its permissions may refuse a listing
                # before either layer is asked (not the table's to say).
                if [ "$direct" = 1 ] && [ "$path" = /work ]; then
                        [ "$got" = "done not-world-readable" ] || [ "$got" = "refused PermissionError EACCES not-world-readable" ] ||
                                fail "$label: the run's directory: got '$got'"
                        continue
                fi
                [ "${got% *}" = "$want" ] || fail "$label: $path: expected '$want', got '$got'"
                case $got in
                refused\ PermissionError*) [ "${got##* }" = world-readable ] ||
                        fail "$label: $path: refused, but not world-readable: the control does not hold" ;;
                esac
                n=$((n + 1))
        done <"$T/paths.txt"
        [ "$n" -gt 8 ] || fail "$label: only $n entries checked"
        echo "ok: $label: $n entries as the table says"
}
run_json "$T/read.py" --input "$T/paths.txt"
check "jail, Python layers" 0 1
bare_json "$T/read.py" --input "$T/paths.txt"
check "jail, kernel layers" 0 0
# The Python layers' refusals were theirs: the kernel alone read these.
for p in /etc/passwd /proc /anvil/anvil-py; do
        expect_eq "jail, kernel layers: $p read" "$p done world-readable" "$(j .stdout | grep "^$p ")"
done
expect_eq "jail, kernel layers: /etc/hostname refused" "/etc/hostname refused PermissionError EACCES world-readable" \
        "$(j .stdout | grep '^/etc/hostname ')"
expect_eq "jail, kernel layers: /etc/alternatives not listed" \
        "/etc/alternatives refused PermissionError EACCES world-readable" "$(j .stdout | grep '^/etc/alternatives ')"

start_sup dpy 740000000 --test-no-userns --spares 0 --max-runs 2
ANVIL_SOCKET="$T/dpy.sock" run_json "$T/read.py" --input "$T/paths.txt"
expect_eq "direct, Python layers: the tier" "landlock+seccomp" "$(j .isolation.tier)"
check "direct, Python layers" 1 1
start_sup dk 750000000 --test-no-userns --test-no-python-layers --spares 0 --max-runs 2
ANVIL_BARE_SOCKET="$T/dk.sock" bare_json "$T/read.py" --input "$T/paths.txt"
check "direct, kernel layers" 1 0
expect_eq "direct, kernel layers: the host's /etc/passwd refused" \
        "/etc/passwd refused PermissionError EACCES world-readable" "$(j .stdout | grep '^/etc/passwd ')"
# The change: /etc/alternatives, a tree read through its links, is listed by no layer now.
if [ -d /etc/alternatives ]; then
        expect_eq "direct, kernel layers: /etc/alternatives not listed (its files are read through its links)" \
                "/etc/alternatives refused PermissionError EACCES world-readable" "$(j .stdout | grep '^/etc/alternatives ')"
fi
# Control: what the table grants directly was read (the run's own directories, /usr).
expect_eq "direct, kernel layers: control: /usr listed" "/usr done world-readable" "$(j .stdout | grep '^/usr ')"
expect_eq "direct, kernel layers: control: the run's inputs listed" "/work/inputs done world-readable" \
        "$(j .stdout | grep '^/work/inputs ')"
