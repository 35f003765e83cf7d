#!/bin/sh
# mkinitramfs.sh - the VM's initramfs: busybox-static, tc and ip with their
# shared libraries and ld.so, qlab's modules and tc plugins, the static test
# tools, Debian's own veth/dummy/netem/htb/tbf/prio modules from the kernel
# image package, and the guest test scripts (guest/).
#
#   disciplines/linux/vm/mkinitramfs.sh BUILD_DIR KERNEL_TREE OUT.gz
#
# BUILD_DIR is build/linux (kmod/, tc/, tools/ in it); KERNEL_TREE the
# extracted linux-image package.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=$1
ktree=$2
out=$3
kver=$(ls "$ktree/lib/modules")
root=$(mktemp -d "$build/vm/root.XXXXXX")
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/bin "$root"/sbin "$root"/dev "$root"/proc "$root"/sys \
	"$root"/run "$root"/tmp "$root"/etc "$root"/lib/qlab "$root"/lib/extra \
	"$root"/usr/lib/tc "$root"/guest "$root"/var
cp /bin/busybox "$root/bin/busybox"
for app in sh mount; do ln -s busybox "$root/bin/$app"; done

# tc and ip with everything they load (ldd's paths, ld.so included).
copy_with_libs() {
	install -D -m 755 "$1" "$root$1"
	ldd "$1" | awk '/=>/ { print $3 } /^\t\/[^ ]*ld-linux/ { print $1 }' |
		while read -r lib; do
			[ -n "$lib" ] && [ -e "$lib" ] || continue
			install -D -m 755 "$(readlink -f "$lib")" "$root$lib"
		done
}
copy_with_libs /sbin/tc
copy_with_libs /bin/ip
[ -e "$root/lib64" ] || ln -s lib "$root/lib64"

cp "$build"/kmod/*.ko "$root/lib/qlab/"
cp "$build"/tc/q_*.so "$root/usr/lib/tc/"
for t in "$build"/tools/*; do [ -e "$t" ] && cp "$t" "$root/bin/"; done
for m in drivers/net/veth drivers/net/dummy net/sched/sch_netem \
	net/sched/sch_htb net/sched/sch_tbf net/sched/sch_prio; do
	cp "$ktree/lib/modules/$kver/kernel/$m.ko" "$root/lib/extra/"
done
cp "$here"/guest/* "$root/guest/"
cp "$here/guest/init" "$root/init"
chmod 755 "$root/init" "$root"/guest/*

(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
