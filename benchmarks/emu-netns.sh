# shellcheck shell=bash
# Sourced by the qlab-emu benchmarks: three namespaces ${T}a -- ${T}m -- ${T}b
# joined by veth pairs (${T}a0-${T}ma, ${T}b0-${T}mb), offloads off, IPv6 off,
# static ARP between a (10.9.0.1) and b (10.9.0.2). The caller deletes them.
emu_netns_setup() {
  local T=$1 ns d dev mac_a mac_b
  for ns in a m b; do ip netns add "$T$ns"; ip -n "$T$ns" link set lo up; done
  ip link add "${T}a0" type veth peer name "${T}ma"
  ip link add "${T}b0" type veth peer name "${T}mb"
  ip link set "${T}a0" netns "${T}a"; ip link set "${T}ma" netns "${T}m"
  ip link set "${T}b0" netns "${T}b"; ip link set "${T}mb" netns "${T}m"
  ip -n "${T}a" addr add 10.9.0.1/24 dev "${T}a0"; ip -n "${T}b" addr add 10.9.0.2/24 dev "${T}b0"
  for d in a:a0 b:b0 m:ma m:mb; do
    ns=$T${d%%:*}; dev=$T${d##*:}
    ip -n "$ns" link set "$dev" up
    ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
  done
  for ns in a m b; do ip netns exec "$T$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1; done
  # Static ARP: no broadcast through the middle.
  mac_a=$(ip -n "${T}a" -o link show "${T}a0" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
  mac_b=$(ip -n "${T}b" -o link show "${T}b0" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
  ip -n "${T}a" neigh replace 10.9.0.2 lladdr "$mac_b" dev "${T}a0"
  ip -n "${T}b" neigh replace 10.9.0.1 lladdr "$mac_a" dev "${T}b0"
}
