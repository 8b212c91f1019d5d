# The host's secrets are not there to read: /etc/shadow, /etc/gshadow (also by way of
# /proc/1/root and /proc/self/root), and listings of /etc/ssh, /root, /home either fail or
# show nothing of the host's. The tool's output holds no line of the host's /etc/shadow.
# Control: the host's /etc/shadow exists and this test (root) reads it; and the same tool run
# on the host by $PY does print its entries, so the check below would see a leak.
# Against the supervisor with the Python layers off (bare_json, a test build's mode): what is
# checked here is the jail's kernel layers, which must hold without the pre-check and audit hook.
. "$(dirname "$0")/lib.sh"

[ -f /etc/shadow ] && [ -r /etc/shadow ] || fail "control: the host's /etc/shadow is not there or not readable"
users=$(cut -d: -f1 /etc/shadow | grep -v '^$' | sort -u)
[ -n "$users" ] || fail "control: the host's /etc/shadow has no entries"
echo "ok: control: the host's /etc/shadow is readable here, $(wc -l <<<"$users") entries"

tool secrets.py <<'PY'
import os
for path in ["/etc/shadow", "/etc/gshadow", "/proc/1/root/etc/shadow", "/proc/self/root/etc/shadow"]:
    try:
        with open(path, errors="replace") as f:
            data = f.read()
        print(f"READ {path} OK {len(data)} chars")
        print(data, end="" if data.endswith("\n") or not data else "\n")
    except OSError as e:
        print(f"READ {path} ERR {type(e).__name__}: {e}")
for path in ["/etc/ssh", "/root", "/home"]:
    try:
        print(f"LIST {path} OK {' '.join(sorted(os.listdir(path)))}")
    except OSError as e:
        print(f"LIST {path} ERR {type(e).__name__}: {e}")
PY
bare_json "$T/secrets.py"
expect_eq status ok "$(j .status)"
j .stdout >"$T/jail.out"
grep -E '^(READ|LIST) ' "$T/jail.out" | sed 's/^/    /'

# Reads fail.
for p in /etc/shadow /etc/gshadow /proc/1/root/etc/shadow /proc/self/root/etc/shadow; do
        line=$(grep -F "READ $p " "$T/jail.out") || fail "no result for $p"
        expect_match "read of $p in the jail" '^READ [^ ]+ ERR (FileNotFoundError|PermissionError|OSError): ' "$line"
done
# Listings fail, or show none of the host's entries.
for p in /etc/ssh /root /home; do
        line=$(grep -F "LIST $p " "$T/jail.out") || fail "no result for $p"
        if [[ "$line" == "LIST $p ERR "* ]]; then
                echo "ok: listing $p in the jail failed"
                continue
        fi
        names=${line#"LIST $p OK"}
        for h in $(ls -A "$p" 2>/dev/null); do
                [[ " $names " != *" $h "* ]] || fail "the jail's $p shows the host's entry '$h'"
        done
        echo "ok: the jail's $p shows nothing of the host's:$names"
done
# No line of the host's shadow, and no entry of it ("name:..."), in anything the tool wrote.
j .stdout >"$T/all.out"
j .stderr >>"$T/all.out"
pattern="^($(paste -sd'|' <<<"$users" | sed 's/[.]/\\./g')):"
expect_eq "lines of the tool's output that are the host's shadow lines" 0 "$(grep -cxFf <(grep -v '^$' /etc/shadow) "$T/all.out")"
expect_eq "lines of the tool's output that start with a host shadow entry's name" 0 "$(grep -cE "$pattern" "$T/all.out")"

# Control: on the host, the same tool reads the shadow file and the check above sees it
# (its output is kept in a file only root can read, never printed).
(umask 077 && cd "$T" && $PY "$T/secrets.py" >"$T/host.out" 2>&1) || fail "control: the tool failed on the host"
n=$(grep -cE "$pattern" "$T/host.out")
[ "$n" -gt 0 ] || fail "control: the tool run on the host printed no shadow entry: the check cannot see a leak"
echo "ok: control: the same tool on the host printed $n lines the check catches"
n=$(grep -cxFf <(grep -v '^$' /etc/shadow) "$T/host.out")
[ "$n" -gt 0 ] || fail "control: the full-line check finds no shadow line in the host run's output"
echo "ok: control: and $n of them are whole lines of the host's /etc/shadow"
