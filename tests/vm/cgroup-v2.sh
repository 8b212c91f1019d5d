#!/usr/bin/env bash
# Runs end-to-end tests on cgroup v2 alone, in a VM, for hosts (like the machine this project
# is built on) whose memory, pids and cpu controllers are held by v1 hierarchies: the VM boots
# Debian's own kernel with cgroup_no_v1=all, so every controller is on v2, and no systemd. Its
# root file system is this machine's, read-only over 9p (so the build and Python's data stack
# are the same), with a fresh /tmp.
#
# Usage (as root, after `make check` has built build/test):
#   tests/vm/cgroup-v2.sh [t_NAME...]     default: the cgroup tests
# Needs the Debian packages qemu-system-x86, linux-image-amd64 and busybox-static (it says so
# if one is missing). Uses KVM when it works, else emulation (TCG: minutes, not seconds).
# Prints the VM's test output and ends with the suite's "N passed, N failed".
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${ANVIL_VM_BUILD:-$TOP/build/test}
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(t_cgroup_cpu t_cgroup_memory t_cgroup_cleanup t_cgroup_delegation t_forkbomb t_limits t_stop)
. "$TOP/tests/vm/lib.sh"
vm_require cgroup-v2.sh || exit 2
[ -x "$BUILD/anvil-supervisor" ] || { echo "cgroup-v2.sh: no $BUILD: run make check first"; exit 2; }
vm_prepare ro
trap 'rm -rf "$V"' EXIT
cat >"$V/share/in-vm.sh" <<EOF
#!/bin/bash
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /dev/shm /dev/pts
mount -t tmpfs shm /dev/shm
mount -t devpts devpts /dev/pts
ln -s /proc/self/fd /dev/fd
echo 1 >/proc/sys/kernel/sysrq
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
# The root pass only: the guest's root is this machine's, read-only, so the rootless pass
# cannot make its user (useradd cannot lock /etc/passwd).
export ANVIL_E2E_UID_BASE=${ANVIL_E2E_UID_BASE:-2000000000} ANVIL_E2E_SHOW=1 ANVIL_E2E_PASSES=root
{
        echo "VM: kernel \$(uname -r), cgroup v2 alone: \$(cat /sys/fs/cgroup/cgroup.controllers)"
        cd "$TOP" && tests/run.sh "$BUILD" ${tests[*]}
        echo "vm-exit \$?"
} >/mnt/out.log 2>&1
sync
echo o >/proc/sysrq-trigger
sleep 30
EOF
chmod 755 "$V/share/in-vm.sh"
echo "cgroup-v2.sh: tests: ${tests[*]}"
vm_boot cgroup-v2.sh "cgroup_no_v1=all"
vm_output cgroup-v2.sh || exit 1
grep -q "^vm-exit 0$" "$V/share/out.log"
