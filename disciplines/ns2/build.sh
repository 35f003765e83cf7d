#!/bin/sh
# build.sh - build qlab's ns-2 (ns-2.35 from Debian's source, with the
# adapter Queue/Qlab, the runner's agents and the golden harness compiled
# in) into build/ns2/ (cached; nothing fetched is committed):
#   build/ns2/dl/ns2_2.35+dfsg.orig.tar.xz   Debian's orig tarball (apt-get source)
#   build/ns2/src/ns-2.35/                   unpacked, fixed, configured, built
#   build/ns2/ns                             the simulator, qlab's classes in it
#   build/ns2/golden.tcl, build/ns2/qlab-ns2-golden   the golden-vector program
#
#   disciplines/ns2/build.sh [BUILD_DIR]
#
# Needs the build dependencies scripts/setup.sh installs (tcl-dev tk-dev
# libotcl1-dev tclcl libtclcl1-dev libxext-dev libxt-dev libpcap0.8-dev
# libperl4-corelibs-perl xz-utils). `apt-get source` needs a deb-src entry;
# one for bookworm is added (once, as root) when none is configured. Only
# the orig tarball downloads (Debian's debian.tar.xz is gone from the
# mirrors: ENVIRONMENT.md), so it is checked against its SHA-256 (the .dsc's).
#
# The fixes the orig source needs with Debian 12's toolchain and libraries
# (ENVIRONMENT.md, "ns-2.35 (Debian)"): -DUSE_INTERP_RESULT (tclcl.h uses
# interp->result), ::hash( in mdart/mdart_adp.cc, HAVE_INT64 off in
# autoconf.h and an int maxpkts_ in packmime/packmime_OL.h (Debian's
# libtclcl has no int64 bind), -fpermissive -Wno-write-strings, g++ -std=gnu++11;
# configure gets a prefix tree of symbolic links to Debian's Tcl/Tk/OTcl/TclCL.
# ns-2's own sources are otherwise unchanged; qlab's are compiled into the
# same binary (OBJ_QLAB), the discipline core from disciplines/core unchanged.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/ns2}
mkdir -p "$out/dl" "$out/src"
out=$(cd "$out" && pwd)
ORIG=ns2_2.35+dfsg.orig.tar.xz
ORIG_SHA256=a3a097194c87fedbf2a7d3c8520790dc8688874cad0373af2db0ed33e463d52e
JOBS=${JOBS:-2}

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$ORIG_SHA256" ]; }

# ---- fetch --------------------------------------------------------------
if ! sha_ok "$out/dl/$ORIG"; then
	if [ -n "${QLAB_NS2_ORIG:-}" ]; then
		cp "$QLAB_NS2_ORIG" "$out/dl/$ORIG"
	else
		if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
			echo "build.sh: adding a deb-src entry for bookworm (/etc/apt/sources.list.d/qlab-deb-src.sources)"
			cat >/etc/apt/sources.list.d/qlab-deb-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
			apt-get update -qq
		fi
		echo "build.sh: apt-get source --download-only ns2 (the orig tarball; Debian's patches 404)"
		# _apt cannot write into root-owned build dirs: download in a temp dir it may write.
		tmp=$(mktemp -d "$out/dl/tmp.XXXXXX")
		chmod 777 "$tmp"
		(cd "$tmp" && apt-get source --download-only -qq ns2 >/dev/null 2>&1 ||
			{ apt-get update -qq && apt-get source --download-only -qq ns2 >/dev/null 2>&1; } || true)
		[ -f "$tmp/$ORIG" ] && mv "$tmp/$ORIG" "$out/dl/$ORIG"
		rm -rf "$tmp"
	fi
	sha_ok "$out/dl/$ORIG" || { echo "build.sh: no $ORIG with SHA-256 $ORIG_SHA256" >&2; exit 1; }
fi

# ---- unpack, fix, configure (once per tarball and recipe) -------------------
ns=$out/src/ns-2.35
recipe=$(sed -n '/^# ---- unpack/,/^# ---- qlab/p' "$0" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$ns/.qlab-configured" 2>/dev/null)" != "$recipe" ]; then
	echo "build.sh: unpacking and configuring ns-2.35"
	rm -rf "$ns"
	tar -C "$out/src" -xf "$out/dl/$ORIG"
	sed -i 's|^#define HAVE_INT64 1|/* HAVE_INT64 off (qlab: Debian libtclcl has no int64 bind) */|' "$ns/autoconf.h.in" 2>/dev/null || true
	sed -i 's|int64_t maxpkts_;|int maxpkts_;|' "$ns/packmime/packmime_OL.h"
	sed -i 's|= hash(|= ::hash(|' "$ns/mdart/mdart_adp.cc"
	pfx=$out/src/prefix
	L=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
	rm -rf "$pfx"
	mkdir -p "$pfx/tcl/include" "$pfx/tcl/lib" "$pfx/tk/include" "$pfx/tk/lib" \
		"$pfx/otcl/include" "$pfx/otcl/lib" "$pfx/tclcl/include" "$pfx/tclcl/lib" "$pfx/tclcl/bin"
	ln -s /usr/include/tcl8.6/*.h "$pfx/tcl/include/"
	ln -s /usr/include/tcl8.6/tcl-private/generic/*.h "$pfx/tcl/include/" 2>/dev/null || true
	ln -s /usr/include/tcl8.6/tcl-private/unix/*.h "$pfx/tcl/include/" 2>/dev/null || true
	ln -s "$L/libtcl8.6.so" "$pfx/tcl/lib/"
	ln -s /usr/share/tcltk/tcl8.6 "$pfx/tcl/lib/tcl8.6"
	ln -s /usr/include/tcl8.6/tk.h "$pfx/tk/include/"
	ln -s "$L/libtk8.6.so" "$pfx/tk/lib/"
	ln -s /usr/share/tcltk/tk8.6 "$pfx/tk/lib/tk8.6"
	ln -s /usr/include/otcl.h "$pfx/otcl/include/"
	ln -s "$L/libotcl.so" "$pfx/otcl/lib/"
	ln -s /usr/include/tclcl/*.h "$pfx/tclcl/include/"
	ln -s "$L/libtclcl.so" "$pfx/tclcl/lib/"
	ln -s /usr/bin/tcl2c++ "$pfx/tclcl/bin/"
	(cd "$ns" && ./configure --with-tcl="$pfx/tcl" --with-tcl-ver=8.6 --with-tk="$pfx/tk" \
		--with-tk-ver=8.6 --with-otcl="$pfx/otcl" --with-tclcl="$pfx/tclcl" >configure.log 2>&1) ||
		{ tail -30 "$ns/configure.log" >&2; exit 1; }
	sed -i 's|^#define HAVE_INT64 1|/* HAVE_INT64 off (qlab: Debian libtclcl has no int64 bind) */|' "$ns/autoconf.h"
	# qlab's objects first in the link; its core headers last on the include path
	sed -i 's|^OBJ =\t\$(OBJ_C)|OBJ =\t$(OBJ_QLAB) $(OBJ_C)|' "$ns/Makefile"
	sed -i 's|^\t-I./wpan$|\t-I./wpan -I./qlab/core|' "$ns/Makefile"
	grep -q 'OBJ_QLAB' "$ns/Makefile" && grep -q 'qlab/core' "$ns/Makefile" ||
		{ echo "build.sh: could not add qlab's objects to ns-2's Makefile" >&2; exit 1; }
	echo "$recipe" >"$ns/.qlab-configured"
fi

# ---- qlab's sources into the tree, and the build --------------------------------
mkdir -p "$ns/qlab/core"
# Copy only what changed, so make rebuilds only that; ns-2's Makefile tracks
# no header dependencies, so a changed header rebuilds every qlab object.
headers_changed=0
sync_file() {
	cmp -s "$1" "$2" && return 0
	cp "$1" "$2"
	case $2 in *.h) headers_changed=1 ;; esac
}
for f in "$here"/*.cc "$here"/*.h; do sync_file "$f" "$ns/qlab/$(basename "$f")"; done
core_srcs=$(make -s -f "$repo/disciplines/core/sources.mk" print-sources QCORE_DIR="$repo/disciplines/core" |
	tr ' ' '\n' | grep -v '^qcore_usage.c$' || true)
for f in "$repo"/disciplines/core/*.h $(printf "$repo/disciplines/core/%s\n" $core_srcs); do
	sync_file "$f" "$ns/qlab/core/$(basename "$f")"
done
if [ "$headers_changed" = 1 ]; then
	rm -f "$ns"/qlab/*.o "$ns"/qlab/core/*.o
fi
objs=""
for f in "$here"/*.cc; do objs="$objs qlab/$(basename "${f%.cc}").o"; done
for f in $core_srcs; do objs="$objs qlab/core/${f%.c}.o"; done
(cd "$ns" && make -j"$JOBS" ns OBJ_QLAB="$objs" \
	CCOPT="-O2 -Wno-write-strings -fpermissive -DUSE_INTERP_RESULT -w" CPP="g++ -std=gnu++11" \
	CC="gcc -std=gnu11")
install -m 0755 "$ns/ns" "$out/ns"
install -m 0644 "$here/golden.tcl" "$out/golden.tcl"
cat >"$out/qlab-ns2-golden.tmp" <<'EOF'
#!/bin/sh
# qlab-ns2-golden DISC [--param NAME=VALUE]... [--seed N] < events.csv > decisions.csv
# (the golden vectors through ns-2's Queue/Qlab: disciplines/ns2/qlab-golden.cc)
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/ns" "$here/golden.tcl" "$@"
EOF
chmod 0755 "$out/qlab-ns2-golden.tmp"
mv "$out/qlab-ns2-golden.tmp" "$out/qlab-ns2-golden"
echo "build.sh: $out/ns"
