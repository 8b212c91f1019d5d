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
[ "$(id -u)" = 0 ] || { echo "cgroup-v2.sh: needs root (the VM's 9p export keeps file owners)"; exit 2; }
[ -x "$BUILD/anvil-supervisor" ] || { echo "cgroup-v2.sh: no $BUILD: run make check first"; exit 2; }
kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
[ -n "$kernel" ] || missing+=(linux-image-amd64)
[ -x /bin/busybox ] && file /bin/busybox | grep -q static || missing+=(busybox-static)
if [ ${#missing[@]} -gt 0 ]; then
        echo "cgroup-v2.sh: missing: apt-get install --no-install-recommends ${missing[*]}"
        exit 2
fi
kver=${kernel#/boot/vmlinuz-}
V=$(mktemp -d /tmp/anvil-vm.XXXXXX)
trap 'rm -rf "$V"' EXIT
mkdir -p "$V/initrd/bin" "$V/initrd/lib/mod" "$V/initrd/proc" "$V/initrd/sys" "$V/initrd/dev" \
        "$V/initrd/newroot" "$V/share"
cp /bin/busybox "$V/initrd/bin/"
mods="drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev
      drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci fs/netfs/netfs fs/fscache/fscache
      net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p"
order=""
for m in $mods; do
        f=$(ls "/lib/modules/$kver/kernel/$m.ko"* 2>/dev/null | head -1)
        # Built into this kernel: nothing to load.
        [ -n "$f" ] || continue
        case $f in
        *.xz) xz -dc "$f" >"$V/initrd/lib/mod/$(basename "$m").ko" ;;
        *.zst) zstd -dcq "$f" >"$V/initrd/lib/mod/$(basename "$m").ko" ;;
        *) cp "$f" "$V/initrd/lib/mod/$(basename "$m").ko" ;;
        esac
        order="$order $(basename "$m")"
done
cat >"$V/initrd/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $order; do insmod /lib/mod/\$m.ko || echo "insmod \$m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /newroot || exec sh
mount -t tmpfs -o mode=1777 tmp /newroot/tmp
mount -t tmpfs run /newroot/run
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 vmshare /newroot/mnt || exec sh
exec switch_root /newroot /bin/bash /mnt/in-vm.sh
EOF
chmod 755 "$V/initrd/init"
cat >"$V/share/in-vm.sh" <<EOF
#!/bin/bash
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /dev/shm /dev/pts
mount -t tmpfs shm /dev/shm
mount -t devpts devpts /dev/pts
ln -s /proc/self/fd /dev/fd
echo 1 >/proc/sys/kernel/sysrq
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
export ANVIL_E2E_UID_BASE=${ANVIL_E2E_UID_BASE:-2000000000} ANVIL_E2E_SHOW=1
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
(cd "$V/initrd" && find . | cpio -o -H newc 2>/dev/null | gzip) >"$V/initrd.gz"

qemu() {
        timeout 3000 qemu-system-x86_64 "$@" -m 3072 -nographic -no-reboot -kernel "$kernel" -initrd "$V/initrd.gz" \
                -append "console=ttyS0 panic=-1 quiet cgroup_no_v1=all" \
                -virtfs "local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap" \
                -virtfs "local,path=$V/share,mount_tag=vmshare,security_model=passthrough" >"$V/console.log" 2>&1
}
# KVM inside a VM may be there and still not boot a guest: a short try first.
accel=(-accel tcg,thread=multi -cpu max -smp 2)
if [ -w /dev/kvm ]; then
        timeout 30 qemu-system-x86_64 -enable-kvm -cpu host,-arch-capabilities -smp 1 -m 256 -nographic -no-reboot \
                -kernel "$kernel" -append "console=ttyS0 panic=-1" >"$V/kvm.log" 2>&1
        grep -q "Linux version" "$V/kvm.log" && accel=(-enable-kvm -cpu host,-arch-capabilities -smp 2)
fi
echo "cgroup-v2.sh: booting $kernel with ${accel[*]}; tests: ${tests[*]}"
qemu "${accel[@]}"
if [ ! -s "$V/share/out.log" ]; then
        echo "cgroup-v2.sh: the VM produced no output; its console:"
        tail -40 "$V/console.log"
        exit 1
fi
cat "$V/share/out.log"
grep -q "^vm-exit 0$" "$V/share/out.log"
