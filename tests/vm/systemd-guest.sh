#!/bin/bash
# Run by tests/vm/systemd.sh inside the VM, as systemd's kernel-command-line.service (root):
# see that file for what it checks. Writes its output to /mnt/out.log; ends with "vm-exit N".
. /mnt/env
exec >/mnt/out.log 2>&1
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8
W=/run/vmtest # a tmpfs: what the test writes is not in the overlay's upper layer
mkdir -p "$W"
T0=$(date +%s)
fails=0
step() { echo "== $* (at $(($(date +%s) - T0)) s)"; }
ok() { echo "ok: $*"; }
bad() {
        echo "FAIL: $*"
        fails=$((fails + 1))
}
journal() { journalctl -u anvil-supervisor.service -u anvil-broker.service -u anvil-broker.socket --no-pager -o cat | tail -"${1:-30}"; }
finish() {
        if [ "$fails" -gt 0 ]; then
                echo "-- the units' journal:"
                journal 60
        fi
        echo "guest: $fails failed, $(($(date +%s) - T0)) s in the guest"
        echo "vm-exit $((fails > 0))"
        sync
        exit 0
}
# wait_for SECONDS TEST...: polls the test every 0.5 s
wait_for() {
        local n=$(($1 * 2))
        shift
        for _ in $(seq "$n"); do "$@" && return 0; sleep 0.5; done
        return 1
}
sup_up() { [ -S /run/anvil/supervisor.sock ]; }
sup_state() { systemctl show -p ActiveState --value anvil-supervisor.service; }

step "boot: pid 1 $(readlink /proc/1/exe), kernel $(uname -r), /sys/fs/cgroup $(stat -fc %T /sys/fs/cgroup)"
[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] || bad "pid 1 is not systemd"
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || bad "cgroup v2 is not alone"
before=$(cd /mnt/upper/u && find . | sort)

# The README's install blocks ("tested: vm"), as they are: install, start, add a user.
"$TOP/tests/readme_blocks.sh" vm >"$W/readme.blocks" || bad "tests/readme_blocks.sh vm"
# readme_block N: the README's Nth vm block, run by bash from the checkout, stopping at an error
readme_block() {
        awk -v n="$1" '/^# README.md:/ { k++; if (k == n) print; next } k == n' "$W/readme.blocks" >"$W/block$1.sh"
        step "README block $(head -1 "$W/block$1.sh" | cut -c3-): $(tail -n +2 "$W/block$1.sh" | grep . | tr '\n' ';')"
        (cd "$TOP" && bash -e "$W/block$1.sh") || bad "the README's block $1 failed"
}
# readme_block_as USER N: the same, run by USER (a member of anvil-users)
readme_block_as() {
        awk -v n="$2" '/^# README.md:/ { k++; if (k == n) print; next } k == n' "$W/readme.blocks" >"$W/block$2.sh"
        chmod 644 "$W/block$2.sh"
        step "README block $(head -1 "$W/block$2.sh" | cut -c3-), as $1: $(tail -n +2 "$W/block$2.sh" | grep . | tr '\n' ';')"
        (cd "$TOP" && timeout 1800 runuser -u "$1" -- bash -e "$W/block$2.sh") || bad "the README's block $2 failed (as $1)"
}
readme_block 1 # make deps; make; make install PREFIX=/usr
units=(/lib/systemd/system/anvil-supervisor.service /lib/systemd/system/anvil-broker.service /lib/systemd/system/anvil-broker.socket)
readme_block 2 # systemd-sysusers; daemon-reload; enable --now
id anvil && getent group anvil-users || bad "sysusers made no anvil, anvil-users"
out=$(systemd-analyze verify "${units[@]}" 2>&1) && [ -z "$out" ] && ok "systemd-analyze verify: clean" ||
        bad "systemd-analyze verify: $out"
wait_for 600 sup_up || { bad "the supervisor's socket never came (state $(sup_state))"; finish; }
step "the supervisor listens"
journalctl -u anvil-supervisor.service --no-pager -o cat | head -40
for s in "/run/anvil.sock root anvil-users 660" "/run/anvil/supervisor.sock root anvil 660"; do
        set -- $s
        got=$(stat -c '%U %G %a' "$1")
        [ "$got" = "$2 $3 $4" ] && ok "$1: $got" || bad "$1: $got, expected $2 $3 $4"
done
SUP=$(systemctl show -p MainPID --value anvil-supervisor.service)
echo "supervisor pid $SUP: $(grep -E '^(CapBnd|CapEff|NoNewPrivs|Seccomp)' /proc/$SUP/status | tr '\t\n' '  ')"
useradd -m -s /bin/bash alice && useradd -m -s /bin/bash vmother || bad "useradd"
readme_block 3 # adduser alice anvil-users
U=$W/u
mkdir -p "$U" && chown alice: "$U"
cat >"$U/tool.py" <<'EOF'
with open("artifacts/out.txt", "w") as f:
    f.write("42\n")
print("hello from the jail", sum(range(10)))
EOF
cat >"$U/net.py" <<'EOF'
import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    print("socket: made")
except OSError as e:
    print("socket:", e.errno)
EOF
chmod 644 "$U"/*.py

# Under emulation (TCG) Python runs tens of times slower: the installed configuration's
# [limits] raised (the README's "Configuration": edit, then its restart block).
sed -i '/^\[limits\]/a cpu_s = 120\nwall_s = 600' /etc/anvil/anvil.conf
readme_block 6 # systemctl restart anvil-supervisor.service anvil-broker.service
wait_for 600 sup_up || bad "the supervisor did not come back with the test's limits"

# run_tool USER TOOL OUT: anvilctl run as USER, its JSON in OUT
run_tool() { # USER TOOL.py OUT.json [anvilctl run options...]
        local who=$1 t=$2 out=$3
        shift 3
        (cd "$U" && timeout 600 runuser -u "$who" -- anvilctl run "$t" "$@" --json >"$out" 2>"$out.err")
}
step "anvilctl run as alice (in anvil-users)"
if run_tool alice "$U/tool.py" "$W/run.json"; then
        st=$(jq -r .status "$W/run.json")
        so=$(jq -r .stdout "$W/run.json")
        [ "$st" = ok ] && [ "$so" = "hello from the jail 45" ] && ok "run: status $st, stdout '$so'" ||
                bad "run: status $st, stdout '$so': $(head -c 600 "$W/run.json")"
        jq -r '.artifacts[]? | "artifact: \(.name // .path) \(.size // "")"' "$W/run.json" 2>/dev/null | head -3
else
        bad "anvilctl run as alice: $(cat "$W/run.json.err")"
fi
echo "-- the broker's journal:"
journalctl -u anvil-broker.service -u anvil-broker.socket --no-pager -o cat | tail -15
# The control: a user not in anvil-users may not reach the broker.
if run_tool vmother "$U/tool.py" "$W/other.json"; then
        bad "vmother (not in anvil-users) ran a tool"
else
        ok "vmother (not in anvil-users) refused: $(head -1 "$W/other.json.err")"
fi

# The unit's own seccomp filter is inherited by every jail, and the kernel answers with the
# strictest filter's action: a socket family the unit refused would reach the tool as
# EAFNOSUPPORT with no record of the jail's. Each family below must be refused by the jail's
# filter and recorded (the run's Python layers off, as anvilctl verify's 2b asks);
# the control is a drop-in with the RestrictAddressFamilies= the unit once had.
cat >"$U/families.py" <<'PY'
import errno
import numpy.core._internal as _ni
ct = _ni.ctypes
libc = ct.CDLL(None, 0, None, True)
for fam, typ, name in ((2, 1, "AF_INET"), (17, 3, "AF_PACKET"), (40, 1, "AF_VSOCK"), (38, 5, "AF_ALG")):
    r = libc.socket(fam, typ, 0)
    print(name, r, errno.errorcode.get(ct.get_errno(), "0") if r < 0 else "ok")
PY
chmod 644 "$U/families.py"
# families_recorded OUT: how many of the four families' refusals OUT records at seccomp
families_recorded() {
        local n=0 f
        for f in AF_INET AF_PACKET AF_VSOCK AF_ALG; do
                jq -e --arg f "$f" '[.events[] | select(.layer == "seccomp" and (.message | contains("socket(" + $f + ",")))] | length > 0' \
                        "$1" >/dev/null && n=$((n + 1))
        done
        echo "$n"
}
step "socket families past the Python layers: refused and recorded by the jail's filter"
run_tool alice "$U/families.py" "$W/fam.json" --python-layers-off || true
echo "tool: $(jq -r .stdout "$W/fam.json" | tr '\n' ';')"
n=$(families_recorded "$W/fam.json")
[ "$n" = 4 ] && ok "all 4 families refused and recorded: $(jq -r '[.events[] | select(.layer == "seccomp") | .message] | join("; ")' "$W/fam.json")" ||
        bad "$n of 4 families recorded: $(head -c 1500 "$W/fam.json")"
D=/run/systemd/system/anvil-supervisor.service.d
mkdir -p "$D"
printf '[Service]\nRestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6\n' >"$D/control.conf"
systemctl daemon-reload
systemctl restart anvil-supervisor.service
wait_for 600 sup_up || bad "the supervisor did not start with the control's drop-in"
run_tool alice "$U/families.py" "$W/famc.json" --python-layers-off || true
nc=$(families_recorded "$W/famc.json")
echo "control tool: $(jq -r .stdout "$W/famc.json" | tr '\n' ';')"
[ "$nc" -lt 4 ] && ok "control: with RestrictAddressFamilies= in the unit, $nc of 4 families recorded (the rest refused by systemd's filter, unrecorded)" ||
        bad "control: with RestrictAddressFamilies= in the unit all 4 were still recorded: the check could not fail"
rm -f "$D/control.conf"
systemctl daemon-reload
systemctl restart anvil-supervisor.service
wait_for 600 sup_up || bad "the supervisor did not come back after the control"

step "README: anvilctl verify, as alice (the broker has no model yet: verify's own scripted one)"
readme_block_as alice 4 # anvilctl verify

# The README's "Pointing it at a real model": its [model] section (the ini block), here a
# scripted model on 127.0.0.1 in place of OpenAI's, then its shell block as written (the key
# file, the restart, the task). The model server logs the key it was sent.
python3 "$TOP/tests/model_server.py" --script "$TOP/examples/agent/scripted_model.json" --port-file "$W/model.port" \
        --log "$W/model.jsonl" >"$W/model.out" 2>&1 &
MODEL_PID=$!
wait_for 60 test -s "$W/model.port" || bad "the model server did not start: $(cat "$W/model.out")"
sed -i "/^\[model\]/a url = http://127.0.0.1:$(cat "$W/model.port")/v1\nname = scripted\nkey_file = /etc/anvil/model.key" \
        /etc/anvil/anvil.conf
readme_block 5 # the key file, the broker restarted, anvilctl submit examples/agent/task.json
[ -s "$W/model.jsonl" ] && ok "the model was asked $(wc -l <"$W/model.jsonl") times" || bad "the model was never asked"
keys=$(jq -r '.headers.Authorization // .headers.authorization // "none"' "$W/model.jsonl" | sort -u | tr '\n' ' ')
[ "$keys" = "Bearer sk-your-key " ] && ok "every request carried the key file's key" || bad "the model was sent: $keys"

step "systemd-analyze security (the live units)"
systemd-analyze security anvil-supervisor.service anvil-broker.service --no-pager 2>&1 | grep -E "Overall exposure|^UNIT|anvil" | tail -4
systemd-analyze security --no-pager 2>/dev/null | grep anvil

if [ "$EXPLORE" = 1 ]; then
        # try NAME DIRECTIVE...: the supervisor restarted with a drop-in of these lines; a run
        D=/run/systemd/system/anvil-supervisor.service.d
        mkdir -p "$D"
        try() {
                local name=$1 res
                shift
                # EXPLORE_ONLY="name|name...": only those tries
                [ -z "${EXPLORE_ONLY:-}" ] || grep -qxE "$EXPLORE_ONLY" <<<"$name" || return 0
                printf '[Service]\n' >"$D/x.conf"
                printf '%s\n' "$@" >>"$D/x.conf"
                systemctl daemon-reload
                systemctl restart anvil-supervisor.service
                if ! wait_for 300 sup_up; then
                        res="DOES NOT START: $(journalctl -u anvil-supervisor.service -n 3 --no-pager -o cat | tr '\n' ' ')"
                elif run_tool alice "$U/tool.py" "$W/x.json"; then
                        res="run $(jq -r .status "$W/x.json") '$(jq -r .stdout "$W/x.json")' $(jq -r '.error // .reason // ""' "$W/x.json" | head -c 200)"
                        [ -n "${NET:-}" ] && run_tool alice "$U/net.py" "$W/n.json" &&
                                res="$res; net: $(jq -r .stdout "$W/n.json" | tr '\n' ' ') events $(jq -c '[.events[]? | .kind] | unique' "$W/n.json")"
                else
                        res="RUN FAILED: $(head -c 300 "$W/x.json.err") $(head -c 300 "$W/x.json")"
                fi
                echo "explore: $name: $res"
                rm -f "$D/x.conf"
        }
        step "explore"
        NET=1 try baseline
        for c in CAP_SYS_ADMIN CAP_SETUID CAP_SETGID CAP_CHOWN CAP_FOWNER CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH \
                CAP_KILL CAP_SYS_PTRACE CAP_SYS_RESOURCE CAP_AUDIT_CONTROL CAP_AUDIT_READ CAP_AUDIT_WRITE; do
                try "without $c" "CapabilityBoundingSet=~$c"
        done
        try PrivateNetwork PrivateNetwork=yes
        try PrivateMounts PrivateMounts=yes
        try ProtectKernelTunables ProtectKernelTunables=yes
        try ProtectProc ProtectProc=invisible
        try ProcSubset ProcSubset=pid
        try ProtectControlGroups ProtectControlGroups=yes
        try PrivateUsers PrivateUsers=yes
        try RestrictNamespaces RestrictNamespaces=yes
        NET=1 try LockPersonality LockPersonality=yes
        NET=1 try SystemCallArchitectures SystemCallArchitectures=native
        try IPAddressDeny IPAddressDeny=any IPAddressAllow=localhost
        NET=1 try "RestrictAddressFamilies AF_UNIX AF_NETLINK" RestrictAddressFamilies= "RestrictAddressFamilies=AF_UNIX AF_NETLINK"
        NET=1 try "SystemCallFilter ~@swap @reboot @module @debug" "SystemCallFilter=~@swap @reboot @module @debug"
        try "no PrivateDevices" PrivateDevices=no
        try "no MemoryDenyWriteExecute" MemoryDenyWriteExecute=no
        systemctl daemon-reload
        systemctl restart anvil-supervisor.service
        wait_for 300 sup_up || bad "the supervisor did not come back after the exploration"
fi

step "stop"
SUPCG=/sys/fs/cgroup/system.slice/anvil-supervisor.service
echo "below the supervisor's cgroup, running: $(cd "$SUPCG" 2>/dev/null && find . -mindepth 1 -type d | tr '\n' ' ')"
rm -rf /run/systemd/system/anvil-broker.service.d /run/systemd/system/anvil-supervisor.service.d
readme_block 7 # systemctl disable --now ...; make uninstall PREFIX=/usr
kill "$MODEL_PID" 2>/dev/null
wait "$MODEL_PID" 2>/dev/null
left=$(ps -eo pid=,uid=,comm= | awk '$2 >= 2000000000 || $3 ~ /^anvil/')
[ -z "$left" ] && ok "no jail or Anvil process left" || bad "left running: $left"
[ ! -e "$SUPCG" ] && ok "the supervisor's cgroup is gone" ||
        bad "left below the supervisor's cgroup: $(find "$SUPCG" | tr '\n' ' ')"
cgs=$(find /sys/fs/cgroup -name 'anvil-*' 2>/dev/null)
[ -z "$cgs" ] && ok "no anvil-* cgroup anywhere" || bad "cgroups left: $cgs"
mnts=$(grep -h anvil /proc/[0-9]*/mountinfo 2>/dev/null | sort -u)
[ -z "$mnts" ] && ok "no mount of Anvil's in any mount namespace" || bad "mounts left: $mnts"
for s in /run/anvil.sock /run/anvil; do
        [ ! -e "$s" ] && ok "$s is gone" || bad "$s is left"
done

systemctl daemon-reload
after=$(cd /mnt/upper/u && find . | sort)
# What the guest wrote that was not there before, less the build tree (make's own outputs),
# the journal, the users' homes, and what stays by design: the state and the system users.
new=$(comm -13 <(echo "$before") <(echo "$after") | grep -v -e "^\.$TOP/" -e '^\./var/log/' -e '^\./home/' \
        -e '^\./var/lib/anvil' -e '^\./etc/\(passwd\|group\|shadow\|gshadow\|subuid\|subgid\)-\?$' \
        -e '^\./var/lib/systemd/' -e '^\./var/cache/' -e '^\./var/mail/')
# Kept by design: the configuration the test edited (make uninstall removes only the
# shipped one, byte for byte) and the key file the README's block wrote.
for f in /etc/anvil/anvil.conf /etc/anvil/model.key; do
        [ -f "$f" ] && ok "kept: $f (not the shipped file)" || bad "$f was removed"
done
new=$(grep -vxF -e ./etc/anvil -e ./etc/anvil/anvil.conf -e ./etc/anvil/model.key <<<"$new")
anv=$(grep -i anvil <<<"$new")
[ -z "$anv" ] && ok "nothing of Anvil left in the overlay but its state: $(cd /mnt/upper/u && find ./var/lib/anvil -maxdepth 1 | tr '\n' ' ')" ||
        bad "left in the overlay after make uninstall: $anv"
echo "other files the guest wrote (not Anvil's): $(grep -vi anvil <<<"$new" | tr '\n' ' ' | head -c 600)"
finish
