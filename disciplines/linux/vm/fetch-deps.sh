#!/bin/sh
# fetch-deps.sh - download what the Linux backend builds against and boots,
# into build/linux/ (cached; nothing here is committed):
#   build/linux/src/iproute2-<ver>/   Debian's iproute2 source (tc plugin headers)
#   build/linux/dl/linux-image-<kver>-unsigned_*.deb   Debian's kernel for the VM
# <kver> is the version of the installed linux-headers-amd64, so the VM
# boots exactly the kernel the modules were built against.
#
#   disciplines/linux/vm/fetch-deps.sh [BUILD_DIR]
#
# apt-get source needs a deb-src entry; one mirroring the existing Debian
# entry is added (once) when none is configured.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${1:-$repo/build/linux}
mkdir -p "$out/src" "$out/dl"

kver=$("$here/kver.sh")

# deb-src for bookworm, only if no deb-src entry exists yet.
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "fetch-deps: adding a deb-src entry for bookworm (/etc/apt/sources.list.d/qlab-deb-src.sources)"
	cat >/etc/apt/sources.list.d/qlab-deb-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	apt-get update -qq
fi

if ! ls -d "$out"/src/iproute2-*/tc >/dev/null 2>&1; then
	echo "fetch-deps: apt-get source iproute2"
	(cd "$out/src" && apt-get source -qq iproute2 >/dev/null 2>&1) ||
		(apt-get update -qq && cd "$out/src" && apt-get source -qq iproute2)
fi

if ! ls "$out"/dl/linux-image-"$kver"-unsigned_*.deb >/dev/null 2>&1; then
	echo "fetch-deps: apt-get download linux-image-$kver-unsigned"
	# _apt cannot write into root-owned build dirs: download in a temp dir it owns.
	tmp=$(mktemp -d "$out/dl/tmp.XXXXXX")
	chmod 777 "$tmp"
	(cd "$tmp" && apt-get download -qq "linux-image-$kver-unsigned" 2>&1 | grep -v unsandboxed || true)
	mv "$tmp"/*.deb "$out/dl/"
	rmdir "$tmp"
fi
ls -d "$out"/src/iproute2-*/tc >/dev/null
ls "$out"/dl/linux-image-"$kver"-unsigned_*.deb >/dev/null
