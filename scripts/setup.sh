#!/usr/bin/env bash
# Install what qlab needs on a Debian 12 machine, idempotently.
#   scripts/setup.sh            Debian packages + the Python venv (.venv)
#   scripts/setup.sh --test     also what only the tests need (make test): SLURM and munge,
#                               for the single-node cluster of tests/test_slurm.py
# Quiet when nothing is missing; long steps say what they do.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: simulators, toolchain, R + tidyverse, pandoc (`ns3` ships
# /usr/libexec/ns3/*-raw-sock-creator, which ns-3's CMake targets reference);
# Mininet and traffic tools (the mininet backend); kernel headers, QEMU and
# busybox (the Linux qdiscs' VM tests; dpkg-dev for `apt-get source iproute2`; kmod for
# modinfo, which checks the modules built in the kmod image); chrony (the virtual
# testbed's NTP server, which the VMs' clocks follow: qlab/testbed_vm.py); dkms
# (the testbed's DKMS path, built here by make test-testbed);
# libxml2/sqlite3/python3 headers, which ns-3's CMake targets name without
# libns3-dev depending on them; libtcmalloc-minimal4, the ns-3 runners' allocator
# (disciplines/ns3/CMakeLists.txt); debootstrap (the Docker base image); ns-2.35's
# build dependencies (disciplines/ns2/build.sh builds it from Debian's source);
# chromium (the rendered site checked in a headless browser, tests/test_e2e.py);
# plotly, htmlwidgets and DT (the report's interactive figures and sortable tables;
# python3-plotly for its plotly.js 2.6: r-cran-plotly's own 1.31 cannot run its binding);
# lintr (the R code's lint in make test, scripts/lint-r.sh).
DEB_PACKAGES=(
  build-essential cmake pkg-config
  libns3-dev ns3 libgsl-dev nlohmann-json3-dev libtcmalloc-minimal4
  r-base-core r-cran-tidyverse r-cran-knitr r-cran-rmarkdown r-cran-testthat
  r-cran-yaml r-cran-jsonlite r-cran-lintr r-cran-plotly r-cran-htmlwidgets r-cran-dt
  python3-plotly
  pandoc python3-venv valgrind shellcheck
  mininet ethtool bridge-utils iperf3 iputils-ping
  linux-headers-amd64 kmod qemu-system-x86 busybox-static dpkg-dev chrony dkms
  libxml2-dev libsqlite3-dev libpython3-dev debootstrap
  tcl-dev tk-dev libxext-dev libxt-dev libpcap0.8-dev libotcl1-dev tclcl libtclcl1-dev
  libperl4-corelibs-perl xz-utils chromium
)

# Only for `make test`: Debian's SLURM (22.05) and munge, the single-node
# cluster scripts/slurm-node.sh starts for tests/test_slurm.py; rsync, which
# snakemake-storage-plugin-fs runs (the Kubernetes profile's storage, tests/test_kubernetes.py).
TEST_PACKAGES=(slurm-wlm munge rsync)
case ${1:-} in
  --test) DEB_PACKAGES+=("${TEST_PACKAGES[@]}") ;;
  "") ;;
  *) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac

# one dpkg-query for them all (a `make reproduce` with nothing to do checks
# this first: a process per package cost about a second)
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${DEB_PACKAGES[@]}" 2>/dev/null \
  | awk '$2 == "install" && $3 == "ok" && $4 == "installed" {print $1}' || true)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  grep -qxF "$p" <<<"$installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} Debian packages (${missing[*]}); this takes a few minutes on a fresh machine"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/qlab-apt.log 2>&1 \
    || { echo "setup: apt-get install failed; see /tmp/qlab-apt.log" >&2; tail -20 /tmp/qlab-apt.log >&2; exit 1; }
fi

# Python venv with pinned tools. Debian's interpreter, so Debian's modules
# (Mininet, later) and qlab's see the same Python.
VENV=.venv
stamp="$VENV/.requirements.sha256"
want=$(sha256sum requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: creating the Python environment in $VENV (pinned: requirements.txt)"
  /usr/bin/python3 -m venv "$VENV"
  # wheel first, so sdists build as wheels instead of the legacy setup.py path
  "$VENV/bin/pip" install -q --disable-pip-version-check wheel
  "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -e .
  echo "$want" > "$stamp"
fi
