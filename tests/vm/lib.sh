# The VM harness's shared part (sourced by tests/vm/*.sh): Debian's own kernel booted in qemu
# with this machine's root file system read-only over 9p (so the build and Python's data
# stack are the same), a small busybox initrd, and a 9p share (/mnt in the guest) for the
# script the guest runs (/mnt/in-vm.sh) and its output (/mnt/out.log).
#
#   vm_require NAME      root, qemu, a kernel and a static busybox, or says which Debian
#                        packages to install and returns 2
#   vm_prepare MODE      $V (a fresh directory) with the initrd; MODE is
#                          ro       the root read-only over 9p, a fresh tmpfs /tmp and /run;
#                                   /mnt/in-vm.sh is run as pid 1 (no init system)
#                          systemd  the root over 9p read-only below an overlayfs whose upper
#                                   is a tmpfs (the guest writes anywhere, only to the
#                                   overlay: never to this machine), an empty /etc/fstab, and
#                                   systemd as pid 1, which runs /mnt/in-vm.sh as the unit
#                                   kernel-command-line.service (systemd.run=) and powers off
#   vm_boot NAME APPEND  boots it (KVM when it works, else emulation: TCG), the kernel's
#                        command line extended by APPEND; the console in $V/console.log
#   vm_output NAME       prints the guest's out.log, or the console's tail if there is none
# The caller removes $V (trap 'rm -rf "$V"' EXIT).

vm_require() {
        [ "$(id -u)" = 0 ] || { echo "$1: needs root (the VM's 9p export keeps file owners)"; return 2; }
        VM_KERNEL=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
        local missing=()
        command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
        [ -n "$VM_KERNEL" ] || missing+=(linux-image-amd64)
        [ -x /bin/busybox ] && file /bin/busybox | grep -q static || missing+=(busybox-static)
        if [ ${#missing[@]} -gt 0 ]; then
                echo "$1: cannot run: missing: apt-get install --no-install-recommends ${missing[*]}"
                return 2
        fi
        VM_KVER=${VM_KERNEL#/boot/vmlinuz-}
}

# The modules the initrd loads, in order (skipped when built into the kernel).
VM_MODS="drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev
      drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci fs/netfs/netfs fs/fscache/fscache
      net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay"
VM_9P="trans=virtio,version=9p2000.L,msize=262144"

vm_prepare() {
        local mode=$1 order="" m f
        V=$(mktemp -d /tmp/anvil-vm.XXXXXX)
        mkdir -p "$V/initrd/bin" "$V/initrd/lib/mod" "$V/initrd/proc" "$V/initrd/sys" "$V/initrd/dev" \
                "$V/initrd/newroot" "$V/initrd/lower" "$V/initrd/upper" "$V/share"
        cp /bin/busybox "$V/initrd/bin/"
        for m in $VM_MODS; do
                f=$(ls "/lib/modules/$VM_KVER/kernel/$m.ko"* 2>/dev/null | head -1)
                [ -n "$f" ] || continue
                case $f in
                *.xz) xz -dc "$f" >"$V/initrd/lib/mod/$(basename "$m").ko" ;;
                *.zst) zstd -dcq "$f" >"$V/initrd/lib/mod/$(basename "$m").ko" ;;
                *) cp "$f" "$V/initrd/lib/mod/$(basename "$m").ko" ;;
                esac
                order="$order $(basename "$m")"
        done
        {
                echo '#!/bin/busybox sh'
                echo '/bin/busybox --install -s /bin'
                echo 'mount -t proc proc /proc'
                echo 'mount -t sysfs sys /sys'
                echo 'mount -t devtmpfs dev /dev'
                echo "for m in $order; do insmod /lib/mod/\$m.ko || echo \"insmod \$m failed\"; done"
                if [ "$mode" = systemd ]; then
                        echo "mount -t 9p -o $VM_9P,ro,cache=loose hostroot /lower || exec sh"
                        echo 'mount -t tmpfs -o mode=0755,size=1500m upper /upper'
                        echo 'mkdir -p /upper/u /upper/w'
                        echo 'mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w overlay /newroot || exec sh'
                        # The host's mounts are not the guest's; and a /.dockerenv (this
                        # machine may have one) would make systemd take the VM for a container,
                        # and read its command line from its own argv, not the kernel's.
                        echo ': >/newroot/etc/fstab'
                        echo 'rm -f /newroot/.dockerenv'
                        echo "mount -t 9p -o $VM_9P vmshare /newroot/mnt || exec sh"
                        echo 'mount --move /proc /newroot/proc'
                        echo 'mount --move /sys /newroot/sys'
                        echo 'mount --move /dev /newroot/dev'
                        echo 'exec switch_root /newroot /lib/systemd/systemd'
                else
                        echo "mount -t 9p -o $VM_9P,ro,cache=loose hostroot /newroot || exec sh"
                        echo 'mount -t tmpfs -o mode=1777 tmp /newroot/tmp'
                        echo 'mount -t tmpfs run /newroot/run'
                        echo 'mount --move /proc /newroot/proc'
                        echo 'mount --move /sys /newroot/sys'
                        echo 'mount --move /dev /newroot/dev'
                        echo "mount -t 9p -o $VM_9P vmshare /newroot/mnt || exec sh"
                        echo 'exec switch_root /newroot /bin/bash /mnt/in-vm.sh'
                fi
        } >"$V/initrd/init"
        chmod 755 "$V/initrd/init"
}

vm_boot() {
        local name=$1 append=$2
        (cd "$V/initrd" && find . | cpio -o -H newc 2>/dev/null | gzip) >"$V/initrd.gz"
        # KVM inside a VM may be there and still not boot a guest: a short try first.
        local accel=(-accel tcg,thread=multi -cpu max -smp 2)
        if [ -w /dev/kvm ]; then
                timeout 30 qemu-system-x86_64 -enable-kvm -cpu host,-arch-capabilities -smp 1 -m 256 -nographic \
                        -no-reboot -kernel "$VM_KERNEL" -append "console=ttyS0 panic=-1" >"$V/kvm.log" 2>&1
                grep -q "Linux version" "$V/kvm.log" && accel=(-enable-kvm -cpu host,-arch-capabilities -smp 2)
        fi
        echo "$name: booting $VM_KERNEL with ${accel[*]}"
        timeout "${VM_TIMEOUT:-3000}" qemu-system-x86_64 "${accel[@]}" -m "${VM_MEM:-3072}" -nographic -no-reboot \
                -kernel "$VM_KERNEL" -initrd "$V/initrd.gz" -append "console=ttyS0 panic=-1 quiet $append" \
                -virtfs "local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap" \
                -virtfs "local,path=$V/share,mount_tag=vmshare,security_model=passthrough" >"$V/console.log" 2>&1
}

vm_output() {
        if [ ! -s "$V/share/out.log" ]; then
                echo "$1: the VM produced no output; its console:"
                tail -40 "$V/console.log"
                return 1
        fi
        cat "$V/share/out.log"
}
