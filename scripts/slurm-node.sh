#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for the SLURM test
# (tests/test_slurm.py) and for trying workflows/profiles/slurm by hand.
#
#   scripts/slurm-node.sh start STATE_DIR   write /etc/slurm/slurm.conf, start munged (unless one
#                                            answers), slurmctld and slurmd; wait until the node is idle
#   scripts/slurm-node.sh stop STATE_DIR    cancel the cluster's jobs, stop the daemons this script
#                                            started (by the PIDs it recorded), remove the config it wrote
#   scripts/slurm-node.sh check             exit 0 when SLURM and munge are installed and we are root
#
# Debian 12's slurm-wlm 22.05 and munge (scripts/setup.sh installs them for
# `make test`); root; no systemd: the daemons run in the foreground (-D/-F)
# in sessions of their own, and STATE_DIR/pids records each one's PID. The
# pitfalls (../shared/design/ENVIRONMENT.md): the config must be
# /etc/slurm/slurm.conf (with SLURM_CONF elsewhere, job steps fail with
# "Could not establish a configuration source"); no accounting, so the
# executor runs with --slurm-no-account and status command squeue, and
# MinJobAge keeps finished jobs visible to squeue; the node's memory is
# declared (RealMemory), so a request that cannot fit stays pending with a
# reason the test reports. Exit 2 on misuse or a config that is not ours,
# 3 when SLURM cannot run here (what is missing is named), 1 when a daemon
# did not come up (its log's tail is printed).
set -euo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# qlab-single-node"

usage() { echo "usage: $0 start STATE_DIR | stop STATE_DIR | check" >&2; exit 2; }

check() {
  local missing=()
  for tool in slurmctld slurmd sbatch squeue scontrol scancel sinfo munged munge setpriv; do
    command -v "$tool" > /dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || missing+=("$tool")
  done
  if ((${#missing[@]})); then
    echo "slurm-node: not installed: ${missing[*]} (Debian: apt-get install slurm-wlm munge)" >&2
    return 3
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "slurm-node: the SLURM daemons need root (running as $(id -un))" >&2
    return 3
  fi
}

sbin() { command -v "$1" 2>/dev/null || echo "/usr/sbin/$1"; }

# the PID recorded for a daemon, when that process still runs that program
alive() {
  local pid
  pid=$(awk -v n="$2" '$1 == n {print $2}' "$1/pids" 2>/dev/null)
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ] && echo "$pid"
}

# start one daemon in the foreground, in a session of its own, and record its PID
launch() {
  local state=$1 name=$2; shift 2
  setsid "$@" > "$state/$name.out" 2>&1 < /dev/null &
  echo "$name $!" >> "$state/pids"
}

fail_with_log() {
  echo "slurm-node: $1; the end of $2:" >&2
  tail -n 15 "$2" >&2 2>/dev/null || true
  stop "$3" > /dev/null 2>&1 || true
  exit 1
}

start() {
  local state=$1
  check || exit $?
  mkdir -p "$state"
  state=$(cd "$state" && pwd)
  if [ -e "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
    echo "slurm-node: $CONF exists and is not qlab's single-node config: refusing to replace it" >&2
    exit 2
  fi
  for d in slurmctld slurmd; do
    if pid=$(alive "$state" "$d"); then
      echo "slurm-node: $d already runs from $state (pid $pid): stop it first ($0 stop $state)" >&2
      exit 2
    fi
  done
  if scontrol ping > /dev/null 2>&1; then
    echo "slurm-node: a slurmctld already answers on this machine (scontrol ping): not starting another" >&2
    exit 2
  fi
  : > "$state/pids"
  mkdir -p "$state/ctld" "$state/d" /etc/slurm

  # munge: the key Debian's package made (or a new one), the daemon unless one answers
  if ! munge -n 2>/dev/null | unmunge > /dev/null 2>&1; then
    if [ ! -s /etc/munge/munge.key ]; then
      mkdir -p /etc/munge
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
      chown munge:munge /etc/munge/munge.key
      chmod 0400 /etc/munge/munge.key
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    launch "$state" munged setpriv --reuid=munge --regid=munge --clear-groups "$(sbin munged)" --foreground
    for _ in $(seq 50); do
      munge -n 2>/dev/null | unmunge > /dev/null 2>&1 && break
      sleep 0.2
    done
    munge -n 2>/dev/null | unmunge > /dev/null 2>&1 || fail_with_log "munged did not answer" "$state/munged.out" "$state"
  fi

  local cpus mem
  cpus=$(nproc)
  # 90% of the machine's memory (slurmd drains a node that declares more than it has)
  mem=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
  cat > "$CONF" <<EOF
$MARK: written by scripts/slurm-node.sh, removed by its stop (state in $state)
ClusterName=qlab
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# finished jobs stay visible to squeue (the executor's status command) this long
MinJobAge=300
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=qlab Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  launch "$state" slurmctld "$(sbin slurmctld)" -D -i
  for _ in $(seq 50); do
    scontrol ping > /dev/null 2>&1 && break
    sleep 0.2
  done
  scontrol ping > /dev/null 2>&1 || fail_with_log "slurmctld did not answer" "$state/slurmctld.log" "$state"
  launch "$state" slurmd "$(sbin slurmd)" -D -N localhost
  local st=""
  for _ in $(seq 100); do
    st=$(sinfo -h -n localhost -o %T 2>/dev/null | head -n 1)
    case $st in
      idle*) break ;;
      down* | drain*) scontrol update nodename=localhost state=resume > /dev/null 2>&1 || true ;;
    esac
    sleep 0.3
  done
  case $st in
    idle*) ;;
    *) fail_with_log "the node is not idle after 30 s (state '${st:-none}', reason: $(sinfo -h -n localhost -o %E))" \
      "$state/slurmd.log" "$state" ;;
  esac
  echo "slurm-node: started ($(awk '{printf "%s %s, ", $1, $2}' "$state/pids")${cpus} CPUs, ${mem} MB); stop: $0 stop $state"
}

stop() {
  local state=$1 pid name
  [ -f "$state/pids" ] || { echo "slurm-node: nothing recorded in $state/pids" >&2; return 0; }
  # the jobs first: their slurmstepd processes outlive slurmd
  if alive "$state" slurmctld > /dev/null; then
    scancel --full --quiet --partition qlab 2>/dev/null || true
    for _ in $(seq 50); do
      [ -z "$(squeue -h -p qlab -t RUNNING,PENDING,COMPLETING -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  # daemons in the reverse order of their start, each by its recorded PID
  while read -r name pid; do
    if [ "$(alive "$state" "$name")" = "$pid" ]; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do
        [ -d "/proc/$pid" ] || break
        sleep 0.2
      done
      [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    fi
  done < <(tac "$state/pids")
  : > "$state/pids"
  if [ -f "$CONF" ] && grep -qF "$MARK" "$CONF"; then
    rm -f "$CONF"
  fi
  echo "slurm-node: stopped"
}

case ${1:-} in
  start) [ $# -eq 2 ] || usage; start "$2" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  check) [ $# -eq 1 ] || usage; check ;;
  *) usage ;;
esac
