#!/usr/bin/env bash
# site-slurm.sh start|stop — a stand-in for a machine's OWN Slurm, the one a login node runs: its own
# configuration, munge and state, on Slurm's default ports (6817/6818). Only for the test that proves
# the test cluster (start-slurm.sh) leaves such a Slurm alone
# (tests/py/cluster/test_cluster_slurm.py::test_a_sites_own_slurm_is_left_untouched). Like every test file
# it lives in its own directory, never in /etc: its configuration is $DIR/etc/slurm.conf. It refuses
# to start where something listens on the default ports already (a Slurm of the machine's own), and
# `stop` stops only the daemons `start` started, then removes $DIR.
set -euo pipefail
DIR=${SITE_SLURM_DIR:-/tmp/gemmlab-site-slurm}
CONF=$DIR/etc/slurm.conf
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
case "${1:-}" in
start)
  [ "$(id -u)" = 0 ] || { echo "site-slurm: must run as root" >&2; exit 1; }
  for port in 6817 6818; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "site-slurm: port $port is in use: this machine runs a Slurm of its own; not starting a stand-in" >&2; exit 3
    fi
  done
  rm -rf "$DIR"; mkdir -p "$DIR"/{state,spool,log,etc}; chmod 0755 "$DIR" "$DIR/etc"
  M=$DIR/munge; install -d -o munge -g munge -m 0755 "$M"
  dd if=/dev/urandom of="$M/munge.key" bs=1024 count=1 status=none
  chown munge:munge "$M/munge.key"; chmod 0400 "$M/munge.key"
  runuser -u munge -- /usr/sbin/munged --key-file="$M/munge.key" --socket="$M/munge.socket" \
    --pid-file="$M/munged.pid" --log-file="$M/munged.log" --seed-file="$M/munged.seed"
  for _ in $(seq 50); do [ -s "$M/munged.pid" ] && break; sleep 0.1; done
  H=$(hostname -s)
  NODE=$(slurmd -C | head -1)
  CPUS=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$NODE")
  MEM=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$NODE")
  cat > "$CONF" <<EOC
# a stand-in site cluster (tests/slurm/site-slurm.sh)
ClusterName=site
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$M/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$((MEM / CPUS / 2))
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
NodeName=$H NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$((MEM / 2)) State=UNKNOWN
PartitionName=site Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOC
  chmod 0644 "$CONF"
  slurmctld -c -f "$CONF"
  slurmd -f "$CONF"
  for _ in $(seq 300); do
    [ "$(SLURM_CONF=$CONF sinfo -h -n "$H" -o %T 2>/dev/null || true)" = idle ] && { echo "site-slurm: idle"; exit 0; }
    sleep 0.2
  done
  echo "site-slurm: did not become idle" >&2; exit 1 ;;
stop)
  export SLURM_CONF=$CONF
  CTLD=$(cat "$DIR/slurmctld.pid" 2>/dev/null || true); SLD=$(cat "$DIR/slurmd.pid" 2>/dev/null || true)
  MUN=$(cat "$DIR/munge/munged.pid" 2>/dev/null || true)
  if alive "$CTLD"; then
    scancel -p site 2>/dev/null || true
    scontrol shutdown 2>/dev/null || true
  fi
  for p in $CTLD $SLD; do
    for _ in $(seq 50); do alive "$p" || break; sleep 0.1; done
    alive "$p" && kill -KILL "$p" || true
  done
  alive "$MUN" && kill -TERM "$MUN" || true
  rm -rf "$DIR"
  echo "site-slurm: stopped" ;;
*) echo "usage: site-slurm.sh start|stop" >&2; exit 2 ;;
esac
