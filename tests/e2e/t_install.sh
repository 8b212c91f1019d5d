# `make install PREFIX=/usr DESTDIR=...` and `make uninstall`: exactly the files listed below
# are installed (no more, no fewer); the installed daemons run from the DESTDIR tree, the
# supervisor finding the runner and pid 1 at their installed place (/usr/lib/anvil below
# the tree: its control, that tree without the runner, stops the supervisor naming the
# path it looked in); a tool runs through them with the installed anvilctl, and with the
# installed Python client; the man pages are man pages; an administrator's configuration is
# never overwritten nor removed; after `make uninstall` no file is left.
. "$(dirname "$0")/lib.sh"
skip_if_rootless "the installed supervisor runs as root, as systemd starts it"
D=$T/root
# The suite's build as it was made: a sanitized one (make check SANITIZE=1) stays one (the
# Makefile refuses to mix the two kinds in one directory).
SAN=()
[ -n "${ANVIL_E2E_SANITIZE:-}" ] && SAN=(SANITIZE=1)
mk() { make -s -C "$TOP" "$@" PREFIX=/usr DESTDIR="$D" BUILD="$ANVIL_BUILD" TEST_CFLAGS=-DANVIL_TEST_BUILD "${SAN[@]}" >>"$T/make.out" 2>&1; }
mk install || fail "make install: $(tail -5 "$T/make.out")"
UNITDIR=$(pkg-config --variable=systemdsystemunitdir systemd)
expected="/usr/bin/anvil-mcp
/usr/bin/anvilctl
/usr/lib/anvil/anvil-init
/usr/lib/anvil/anvil-py
/usr/lib/sysusers.d/anvil.conf
/usr/sbin/anvil-broker
/usr/sbin/anvil-egress
/usr/sbin/anvil-supervisor
/usr/share/bash-completion/completions/anvilctl
/usr/share/man/man1/anvil-mcp.1
/usr/share/man/man1/anvilctl.1
/usr/share/man/man8/anvil-broker.8
/usr/share/man/man8/anvil-egress.8
/usr/share/man/man8/anvil-supervisor.8
$UNITDIR/anvil-broker.service
$UNITDIR/anvil-broker.socket
$UNITDIR/anvil-egress.service
$UNITDIR/anvil-supervisor.service"
for f in "$TOP"/clients/python/anvil_client/*.py; do
        expected="$expected
/usr/lib/python3/dist-packages/anvil_client/$(basename "$f")"
done
# The web UI's files, each as it is in web/ (the broker serves them from beside itself).
while IFS= read -r f; do
        expected="$expected
/usr/share/anvil/web/${f#"$TOP"/web/}"
done < <(find "$TOP/web" -type f)
[ -f "$TOP/etc/anvil.conf" ] && expected="$expected
/etc/anvil/anvil.conf"
expected=$(sort <<<"$expected")
got=$(cd "$D" && find . ! -type d | sed 's|^\.||' | sort)
[ "$got" = "$expected" ] || fail "make install put:
$got
expected:
$expected"
echo "ok: make install put exactly these $(wc -l <<<"$got") files:"
sed 's/^/    /' <<<"$got"
for p in usr/sbin/anvil-supervisor usr/sbin/anvil-broker usr/sbin/anvil-egress usr/bin/anvilctl usr/bin/anvil-mcp usr/lib/anvil/anvil-py usr/lib/anvil/anvil-init; do
        [ "$(stat -c %a "$D/$p")" = 755 ] || fail "$p: mode $(stat -c %a "$D/$p")"
done
for d in supervisor broker; do
        grep -qx "ExecStart=/usr/sbin/anvil-$d --config /etc/anvil/anvil.conf" "$D$UNITDIR/anvil-$d.service" ||
                fail "the installed $d unit does not start /usr/sbin/anvil-$d --config /etc/anvil/anvil.conf"
done
for m in man8/anvil-supervisor.8 man8/anvil-broker.8 man8/anvil-egress.8 man1/anvilctl.1 man1/anvil-mcp.1; do
        head -5 "$D/usr/share/man/$m" | grep -q '^\.TH ' || fail "$m: no .TH header: $(head -3 "$D/usr/share/man/$m")"
        grep -q 'listen\|anvilctl run\|run_python\|control socket' "$D/usr/share/man/$m" || fail "$m: not the program's --help"
done
grep -q '^\.SH "EXIT STATUS"\|^\.SS "Exit status:"\|Exit status' "$D/usr/share/man/man1/anvilctl.1" ||
        fail "anvilctl.1: no exit status, which anvilctl --help has"
for want in '^\.SH "COMMAND RUN"' 'the --input files, read-only' '^\.SH "COMMAND SUBMIT"' '^\.SH "COMMAND VERIFY"'; do
        grep -q -- "$want" "$D/usr/share/man/man1/anvilctl.1" || fail "anvilctl.1: no line matches /$want/ (each command's help)"
done
grep -q "$(sed -n 's/^VERSION := //p' "$TOP/Makefile")" "$D/usr/share/man/man1/anvilctl.1" ||
        fail "anvilctl.1: not the version anvilctl --version says"
echo "ok: the four man pages are the programs' own --help"
cmp -s "$TOP/ctl/anvilctl.bash" "$D/usr/share/bash-completion/completions/anvilctl" ||
        fail "the installed completion is not ctl/anvilctl.bash"
[ "$(stat -c %a "$D/usr/share/bash-completion/completions/anvilctl")" = 644 ] || fail "the completion's mode"
echo "ok: anvilctl's bash completion installed (t_ctl_help.sh runs it in bash)"

# The installed daemons, from the tree. The supervisor has no anvil-py beside it
# ($D/usr/sbin): it must take the installed one from $D/usr/lib/anvil.
# Both read a test configuration (--config), as the units read /etc/anvil/anvil.conf.
cat >"$T/anvil.conf" <<EOF
[supervisor]
listen = $T/sup.sock
state_dir = $T/sup
uid_base = $((ANVIL_E2E_UID_BASE + 960000000))
[broker]
listen = $T/bro.sock
state_dir = $T/bro
supervisor = $T/sup.sock
EOF
start_installed_sup() {
        "$D/usr/sbin/anvil-supervisor" --config "$T/anvil.conf" >>"$T/sup.log" 2>&1 &
        SUP_PID=$!
        OWN_PIDS+=("$SUP_PID")
}
mv "$D/usr/lib/anvil/anvil-py" "$T/anvil-py.away"
start_installed_sup
wait "$SUP_PID"
rc=$?
[ "$rc" -ne 0 ] || fail "control: the supervisor started with no runner installed"
grep -q "$D/usr/lib/anvil/anvil-py: No such file" "$T/sup.log" ||
        fail "control: the supervisor's error does not name where it looked: $(tail -2 "$T/sup.log")"
echo "control: no runner in the tree: the supervisor exits $rc: $(grep -o 'error: .*' "$T/sup.log")"
mv "$T/anvil-py.away" "$D/usr/lib/anvil/anvil-py"
: >"$T/sup.log"
start_installed_sup
for _ in $(seq 300); do grep -q ": listening on " "$T/sup.log" && break; kill -0 "$SUP_PID" 2>/dev/null || break; sleep 0.1; done
grep -q ": listening on " "$T/sup.log" || fail "the installed supervisor did not start: $(tail -5 "$T/sup.log")"
"$D/usr/sbin/anvil-broker" --config "$T/anvil.conf" >"$T/bro.log" 2>&1 &
BRO_PID=$!
OWN_PIDS+=("$BRO_PID")
for _ in $(seq 100); do [ -S "$T/bro.sock" ] && break; sleep 0.1; done
[ -S "$T/bro.sock" ] || fail "the installed broker did not start: $(tail -5 "$T/bro.log")"
cat >"$T/tool.py" <<'EOF'
with open("artifacts/out.txt", "w") as f:
    f.write("42\n")
print("installed", 6 * 7)
EOF
CTL=$D/usr/bin/anvilctl ANVIL_SOCKET=$T/bro.sock run_json "$T/tool.py"
expect_eq "the run's status" ok "$(j .status)"
expect_eq "the run's stdout" "installed 42" "$(j .stdout)"
echo "ok: a tool ran through the installed daemons ($(grep -o 'runner [^;]*' "$T/sup.log" | head -1))"
# The installed Python client, from the tree (as Debian's python3 finds it in
# /usr/lib/python3/dist-packages), through the same daemons; no byte-code left in the tree.
got=$(PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$D/usr/lib/python3/dist-packages" "$PY" -c '
import sys, anvil_client
assert anvil_client.__file__.startswith(sys.argv[2]), anvil_client.__file__
r = anvil_client.Anvil(sys.argv[1]).run("print(6 * 7)")
print(r.status, r.stdout.strip())' "$T/bro.sock" "$D/") || fail "the installed Python client: $got"
expect_eq "a run through the installed Python client" "ok 42" "$got"
kill "$BRO_PID" "$SUP_PID"
wait "$BRO_PID" "$SUP_PID"

# An administrator's configuration: never overwritten by install, never removed by uninstall.
mk uninstall || fail "make uninstall: $(tail -5 "$T/make.out")"
left=$(cd "$D" && find . ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "ok: make uninstall left no file ($(cd "$D" && find . -mindepth 1 -type d | wc -l) directories, now empty)"
mkdir -p "$D/etc/anvil"
echo "# the administrator's" >"$D/etc/anvil/anvil.conf"
mk install || fail "make install over a configuration: $(tail -5 "$T/make.out")"
expect_eq "an existing configuration after install" "# the administrator's" "$(cat "$D/etc/anvil/anvil.conf")"
mk uninstall || fail "make uninstall: $(tail -5 "$T/make.out")"
expect_eq "an edited configuration after uninstall" "# the administrator's" "$(cat "$D/etc/anvil/anvil.conf")"
left=$(cd "$D" && find . ! -type d)
expect_eq "what uninstall left" "./etc/anvil/anvil.conf" "$left"
echo "ok: the administrator's configuration is kept by install and by uninstall"
