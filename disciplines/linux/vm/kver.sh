#!/bin/sh
# kver.sh - the kernel version qlab's modules are built for and the VM boots:
# $KVER if set, else the newest installed Debian linux-headers-*-amd64.
set -eu
if [ -n "${KVER:-}" ]; then
	echo "$KVER"
	exit 0
fi
v=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -1)
if [ -z "$v" ]; then
	echo "kver.sh: no /usr/src/linux-headers-*-amd64 (apt-get install linux-headers-amd64)" >&2
	exit 1
fi
echo "$v"
