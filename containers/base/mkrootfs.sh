#!/usr/bin/env bash
# Build qlab's base image without a registry, as Debian's official images are
# made: debootstrap a minimal Debian 12 (bookworm) and `docker import` it.
#
#   containers/base/mkrootfs.sh TAG [docker-import --change ARG]...
#
# The mirror is the one this machine's apt uses (its first .../debian URI),
# or QLAB_DEBIAN_MIRROR; security updates come from QLAB_DEBIAN_SECURITY_MIRROR
# (default: the mirror's host with /debian-security). Needs root, debootstrap
# and a Docker engine. Called by `qlab images build base` (workflows/containers.smk).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 TAG [--change ARG]..." >&2; exit 2; }
tag=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
suite=bookworm

host_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }
         /^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*\/debian\/?$/) { print $i; exit } }' "$f"
  done | head -n1
}
mirror=${QLAB_DEBIAN_MIRROR:-$(host_mirror)}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
security=${QLAB_DEBIAN_SECURITY_MIRROR:-${mirror}-security}

command -v debootstrap >/dev/null || { echo "$0: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "$0: debootstrap needs root" >&2; exit 2; }

root=$(mktemp -d /var/tmp/qlab-rootfs.XXXXXX)
chmod 0755 "$root"  # apt downloads as _apt
cleanup() {
  mountpoint -q "$root/proc" && umount "$root/proc"
  rm -rf "$root"
}
trap cleanup EXIT

echo "base: debootstrap --variant=minbase $suite from $mirror"
debootstrap --variant=minbase --components=main "$suite" "$root" "$mirror" >"$root.log" 2>&1 \
  || { tail -30 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"

# apt: the same suites as the host (release, updates, security); no
# recommends, no caches or lists left in image layers (as Debian's images).
rm -f "$root/etc/apt/sources.list"
cat >"$root/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
install -m 0644 "$here/apt.conf" "$root/etc/apt/apt.conf.d/90qlab"
install -m 0644 "$here/dpkg.cfg" "$root/etc/dpkg/dpkg.cfg.d/90qlab-excludes"
# no daemons start inside image builds
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"

echo "base: apt-get upgrade from $suite-updates and $suite-security"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
chroot "$root" /bin/sh -c 'export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8;
  apt-get update -qq && apt-get -y -qq upgrade >/dev/null && apt-get clean' \
  || { echo "$0: apt-get upgrade in the new root failed" >&2; exit 1; }
umount "$root/proc"
# the files excluded by dpkg.cfg that debootstrap installed before it applied
find "$root/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete 2>/dev/null || true
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$root/usr/share/man/"* "$root/usr/share/info/"* "$root/usr/share/locale/"*
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"* "$root/var/cache/debconf/"*-old \
  "$root/var/log/"*.log "$root/var/log/apt/"* "$root/tmp/"* "$root/var/tmp/"*
: >"$root/etc/resolv.conf"
echo qlab >"$root/etc/hostname"

echo "base: docker import as $tag"
tar --numeric-owner --xattrs -C "$root" -c . \
  | docker import --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' "$@" - "$tag" >/dev/null
