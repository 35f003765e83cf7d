#!/bin/sh
# mkrootfs.sh - the virtual testbed's disk image, built once and cached:
#   build/testbed/rootfs.ext4   Debian 12 (debootstrap minbase) with sshd,
#                               python3 (Ansible), iproute2, iperf3, kmod,
#                               chrony (the clock, from the controller's server),
#                               tcpdump (testbed_capture_pcap), Mininet and
#                               bridge-utils (the mnkernel backend),
#                               Debian's kernel modules of <kver>, and
#                               /sbin/qlab-init (testbed/vm/qlab-init)
#   build/testbed/initrd.gz     busybox + virtio/ext4 modules: mounts /dev/vda
#   build/testbed/vmlinuz       Debian's kernel <kver> (the one qlab's
#                               modules are built against: vm/kver.sh)
#   build/testbed/ssh/          the controller's key and the VMs' host key
#   build/testbed/rootfs-dkms.ext4   with --dkms: the same with dkms, make,
#                               gcc and the headers of <kver>, for a router
#                               that builds qlab's modules itself
#                               (`qlab testbed up --dkms`)
# Every VM boots its image (the router's may be the DKMS one) with QEMU's
# -snapshot: nothing a run writes survives a shutdown, so each `qlab
# testbed up` starts from a clean host.
#
#   testbed/vm/mkrootfs.sh [--dkms] [BUILD_DIR]     (root; Debian's archive reachable)
set -eu
image=rootfs
if [ "${1:-}" = --dkms ]; then
	image=rootfs-dkms
	shift
fi

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/testbed}
linux=$repo/build/linux
mirror=${QLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
kver=$("$repo/disciplines/linux/vm/kver.sh")
packages=openssh-server,python3,iproute2,iperf3,kmod,procps,iputils-ping,ethtool,tini,chrony,tcpdump,mininet,bridge-utils
# the DKMS image: the build tools from bookworm; the kernel's headers are
# unpacked from Debian's packages of <kver> below (debootstrap sees only
# bookworm itself, and <kver> may come from its security or updates suites)
[ "$image" = rootfs ] || packages=$packages,dkms,make,gcc,gcc-12,libc6-dev

[ "$(id -u)" = 0 ] || { echo "mkrootfs.sh: needs root (debootstrap, chroot)" >&2; exit 1; }
for tool in debootstrap mkfs.ext4 depmod busybox ssh-keygen; do
	command -v "$tool" >/dev/null || { echo "mkrootfs.sh: $tool not found (apt-get install debootstrap e2fsprogs kmod busybox-static openssh-client)" >&2; exit 1; }
done
stamp="$kver $packages $(cat "$here/qlab-init" "$0" | md5sum | cut -d' ' -f1)"
stampf=$out/stamp${image#rootfs}
if [ -e "$out/$image.ext4" ] && [ "$(cat "$stampf" 2>/dev/null)" = "$stamp" ]; then
	echo "mkrootfs: cached ($out/$image.ext4)"
	exit 0
fi
mkdir -p "$out"
deb=$(ls "$linux"/dl/linux-image-"$kver"-unsigned_*.deb 2>/dev/null | tail -1)
[ -n "$deb" ] || { echo "mkrootfs.sh: no Debian kernel package in $linux/dl (run disciplines/linux/vm/fetch-deps.sh)" >&2; exit 1; }
work=$(mktemp -d "$out/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Debian's kernel tree (vmlinuz and modules) with its modules.dep.
dpkg-deb -x "$deb" "$work/kernel"
depmod -b "$work/kernel" "$kver"
cp "$work/kernel/boot/vmlinuz-$kver" "$out/vmlinuz.tmp"

# The root file system: minbase, the packages, the kernel's modules.
base=$out/debootstrap-$(echo "$packages" | md5sum | cut -c1-8)
if [ ! -e "$base/.done" ]; then
	rm -rf "$base"
	debootstrap --variant=minbase --include="$packages" bookworm "$base" "$mirror"
	touch "$base/.done"
fi
root=$work/root
cp -a "$base" "$root"
rm -f "$root/.done"
mkdir -p "$root/lib/modules"
cp -a "$work/kernel/lib/modules/$kver" "$root/lib/modules/"
install -m 755 "$here/qlab-init" "$root/sbin/qlab-init"
if [ "$image" = rootfs-dkms ]; then
	# linux-headers-<kver>, its -common and the linux-kbuild it depends on,
	# as this machine's apt finds them (the files only: dkms needs
	# /lib/modules/<kver>/build, not dpkg's record of them)
	hdr=linux-headers-$kver
	deps=$(apt-cache depends "$hdr" | awk '$1 == "Depends:" && $2 ~ /^linux-(headers-.*-common|kbuild-)/ { print $2 }')
	[ -n "$deps" ] || { echo "mkrootfs.sh: apt knows no $hdr (apt-get update?)" >&2; exit 1; }
	mkdir -p "$work/hdr"
	(cd "$work/hdr" && apt-get download -qq -o APT::Sandbox::User=root "$hdr" $deps) ||
		{ echo "mkrootfs.sh: apt-get download $hdr $deps failed" >&2; exit 1; }
	# --keep-directory-symlink: /lib is a symlink to usr/lib (merged /usr)
	for d in "$work"/hdr/*.deb; do dpkg-deb --fsys-tarfile "$d" | tar -x --keep-directory-symlink -C "$root"; done
	[ -e "$root/lib/modules/$kver/build/Makefile" ] ||
		{ echo "mkrootfs.sh: the headers of $kver did not unpack a build tree" >&2; exit 1; }
fi
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

# SSH: root by the controller's key only; one host key for every VM (the
# controller's known_hosts names it for each VM's loopback port).
mkdir -p "$out/ssh"
[ -e "$out/ssh/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C qlab-testbed -f "$out/ssh/id_ed25519"
[ -e "$out/ssh/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C qlab-testbed-host -f "$out/ssh/host_ed25519"
rm -f "$root"/etc/ssh/ssh_host_*
cp "$out/ssh/host_ed25519" "$root/etc/ssh/ssh_host_ed25519_key"
cp "$out/ssh/host_ed25519.pub" "$root/etc/ssh/ssh_host_ed25519_key.pub"
chmod 600 "$root/etc/ssh/ssh_host_ed25519_key"
mkdir -p "$root/root/.ssh"
cp "$out/ssh/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
chmod 700 "$root/root/.ssh"
cat >"$root/etc/ssh/sshd_config.d/qlab.conf" <<'SSHD'
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
SSHD

# The image: sized for the tree plus room for a run's traces.
size_mb=$(($(du -sm "$root" | cut -f1) + 512))
rm -f "$out/$image.ext4.tmp"
mkfs.ext4 -q -L qlab-root -d "$root" "$out/$image.ext4.tmp" "${size_mb}M"

# The initramfs: busybox, the modules that reach /dev/vda and ext4, an init
# that mounts it and hands over to /sbin/qlab-init.
ird=$work/initrd
mkdir -p "$ird/bin" "$ird/dev" "$ird/proc" "$ird/sys" "$ird/newroot" "$ird/lib/modules/$kver"
cp /bin/busybox "$ird/bin/busybox"
ln -s busybox "$ird/bin/sh"
mods=$work/kernel/lib/modules/$kver
for m in virtio_pci virtio_blk ext4; do
	modprobe -S "$kver" -d "$work/kernel" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	rel=${ko#"$mods"/}
	install -D -m 644 "$ko" "$ird/lib/modules/$kver/$rel"
	echo "$rel"
done >"$ird/modules.order"
cat >"$ird/init" <<'INIT'
#!/bin/sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
k=/lib/modules/$(/bin/busybox uname -r)
while read -r m; do /bin/busybox insmod "$k/$m" 2>/dev/null; done </modules.order
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do /bin/busybox sleep 0.1; i=$((i + 1)); done
/bin/busybox mount -t ext4 /dev/vda /newroot || { echo "qlab initrd: cannot mount /dev/vda"; /bin/busybox poweroff -f; }
/bin/busybox umount /proc /sys
/bin/busybox mount --move /dev /newroot/dev
exec /bin/busybox switch_root /newroot /sbin/qlab-init
INIT
chmod 755 "$ird/init"
(cd "$ird" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$out/initrd.gz"

mv "$out/vmlinuz.tmp" "$out/vmlinuz"
mv "$out/$image.ext4.tmp" "$out/$image.ext4"
echo "$kver" >"$out/kver"
echo "$stamp" >"$stampf"
echo "mkrootfs: $out/$image.ext4 ($size_mb MiB, kernel $kver)"
