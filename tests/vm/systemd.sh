#!/usr/bin/env bash
# The systemd units started for real: a VM boots systemd as pid 1 (cgroup v2 alone) on this
# machine's root, read-only over 9p below an overlay whose upper is a tmpfs, so that
# `make install PREFIX=/usr` in the guest writes only to the overlay. In the guest:
#   make install PREFIX=/usr; systemd-sysusers; daemon-reload; systemd-analyze verify
#   systemctl start anvil-broker.socket anvil-supervisor.service
#   as a user in anvil-users: anvilctl run (plain Python) through /run/anvil.sock, and an
#   agent task against a scripted model on 127.0.0.1 (tests/model_server.py)
#   systemd-analyze security on the live units (their exposure printed)
#   stop both: no jail process, no cgroup below the supervisor's, no mount of its, no socket
#   make uninstall: nothing of Anvil left in the overlay's upper layer but its state
#   (/var/lib/anvil) and the system users (which Debian never removes)
# With --explore, then, for each capability of the supervisor's bounding set and each
# hardening directive it does not have: a drop-in that removes (adds) it, the supervisor
# restarted, a run, and whether it still works (how the unit's choices were found).
#
# Usage (as root): tests/vm/systemd.sh [--explore]   (it builds build/, which the README's make uses)
# EXPLORE_ONLY='baseline|PrivateMounts|without CAP_KILL' limits --explore to those tries.
# Exit 0: every check passed; 1: one failed; 2: it cannot run here (it says why).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$TOP/build
EXPLORE=0
[ "${1:-}" = --explore ] && EXPLORE=1
. "$TOP/tests/vm/lib.sh"
vm_require systemd.sh || exit 2
# The README's `make` builds build/ in the guest: built here first, it has nothing to do there.
make -s -C "$TOP" all >/dev/null || { echo "systemd.sh: make all failed"; exit 1; }
[ -x /lib/systemd/systemd ] || { echo "systemd.sh: cannot run: no /lib/systemd/systemd (apt-get install systemd)"; exit 2; }
vm_prepare systemd
trap 'rm -rf "$V"' EXIT
mkdir -p "$V/share/upper"
# The overlay's upper layer, shown to the guest at /mnt/upper (moved before switch_root).
sed -i 's|^exec switch_root|mount --move /upper /newroot/mnt/upper\nexec switch_root|' "$V/initrd/init"
cp "$TOP/tests/vm/systemd-guest.sh" "$V/share/in-vm.sh"
chmod 755 "$V/share/in-vm.sh"
printf 'TOP=%q\nBUILD=%q\nEXPLORE=%q\nEXPLORE_ONLY=%q\n' "$TOP" "$BUILD" "$EXPLORE" "${EXPLORE_ONLY:-}" >"$V/share/env"
t0=$(date +%s)
VM_TIMEOUT=${VM_TIMEOUT:-2400} vm_boot systemd.sh "cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1 \
systemd.run=/mnt/in-vm.sh systemd.run_success_action=poweroff systemd.run_failure_action=poweroff \
systemd.show_status=0 systemd.log_level=warning"
echo "systemd.sh: the VM ran for $(($(date +%s) - t0)) s"
vm_output systemd.sh || exit 1
grep -q "^vm-exit 0$" "$V/share/out.log"
