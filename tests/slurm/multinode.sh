#!/usr/bin/env bash
# multinode.sh — a throw-away MULTI-node Slurm cluster (Slurm 22.05, Debian 12, root, no systemd) on
# one machine, for GEMM Lab's cluster tests (tests/py/cluster/test_cluster_multinode.py).
#
# Every daemon lives in a network namespace of its own, created here and removed by `stop`:
#   <P>-ctl           slurmctld, host name <P>-ctl, address <NET>.1 — also the "login node":
#                     Slurm commands (sbatch, squeue, make sweep) run there (`login`, below)
#   <P>-n1 .. <P>-nN  one slurmd each, host name <P>-nI (its own UTS namespace), address <NET>.(10+I)
#   <P>-sw            the switch: a bridge that joins them (veth pairs); nothing else is attached,
#                     so the cluster reaches no address outside the namespaces, and nothing outside
#                     reaches it. The file system is shared: every node sees the same drop box path.
# Its own munged (private key and socket), its own slurm.conf and gres.conf under $DIR/etc (never
# /etc/slurm), its own ports inside the namespaces: it runs beside the single-node test cluster
# (tests/slurm/start-slurm.sh) without touching it.
# Fake GPUs: each node has SLURM_MN_GPUS GRES gpus of a fake model (gres type and node feature,
# from SLURM_MN_GPU_TYPES), device files symlinked to /dev/null; the grader honestly finds no GPU.
#
#   multinode.sh probe             exit 0 if the cluster can run here, else 77 and the reason
#   multinode.sh start             (re)start it; waits until every node is idle
#   multinode.sh stop              cancel jobs, stop every daemon, remove the namespaces
#   multinode.sh login CMD...      run CMD on the login node (SLURM_CONF set), e.g. `login sinfo`
#   multinode.sh kill-node NODE    a node failure: kill every process in NODE's namespace (slurmd,
#                                  its job steps, the jobs), then mark NODE down
#   multinode.sh start-node NODE   start NODE's slurmd again and return it to service
#   multinode.sh env               print the shell variables of the running cluster (. <(... env))
# Env knobs (defaults):
#   SLURM_MN_DIR (/tmp/gemmlab-slurm-mn)  SLURM_MN_PREFIX (glmn)  SLURM_MN_NET (10.213.47)
#   SLURM_MN_NODES (3)  SLURM_MN_CPUS (4 per node)  SLURM_MN_GPUS (2 per node)
#   SLURM_MN_GPU_TYPES ("a100 h100 h100": node I gets word I, the last word repeats)
#   SLURM_MN_TIMEOUT (60: seconds to wait for daemons and nodes)
set -euo pipefail
umask 022
DIR=${SLURM_MN_DIR:-/tmp/gemmlab-slurm-mn}
P=${SLURM_MN_PREFIX:-glmn}
NET=${SLURM_MN_NET:-10.213.47}
NODES=${SLURM_MN_NODES:-3}
CPUS=${SLURM_MN_CPUS:-4}
NGPU=${SLURM_MN_GPUS:-2}
read -r -a TYPES <<<"${SLURM_MN_GPU_TYPES:-a100 h100 h100}"
TMO=${SLURM_MN_TIMEOUT:-60}
CONF=$DIR/etc/slurm.conf
MEM_PER_NODE=4000   # MB declared per node (the daemons report what slurm.conf says: config_overrides)

say() { echo "multinode: $*"; }
die() { echo "multinode: $*" >&2; exit 1; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_in() { [ -s "$1" ] && cat "$1" || true; }
node_name() { echo "$P-n$1"; }
node_type() { local i=$1; [ "$i" -le "${#TYPES[@]}" ] && echo "${TYPES[$((i-1))]}" || echo "${TYPES[-1]}"; }
# Into a namespace's network only (nsenter, not `ip netns exec`, which would remount /sys and hide
# /sys/fs/cgroup from slurmd): the file system stays the machine's, as on nodes with a shared one.
in_net() { local ns=$1; shift; nsenter --net="/run/netns/$ns" "$@"; }
in_login() { in_net "$P-ctl" env SLURM_CONF="$CONF" "$@"; }

# ---- probe: can this machine run it? ------------------------------------------------------------
probe() {
  local why=""
  [ "$(id -u)" = 0 ] || why="needs root (network namespaces, daemons)"
  for c in ip unshare nsenter slurmctld slurmd sbatch munged runuser; do
    [ -n "$why" ] || command -v "$c" >/dev/null || why="$c is not installed (make setup installs Slurm and munge)"
  done
  if [ -z "$why" ]; then
    local ns="$P-probe-$$" err
    if ! err=$(ip netns add "$ns" 2>&1); then
      why="cannot create a network namespace (ip netns add: ${err:-failed}; needs CAP_SYS_ADMIN and CAP_NET_ADMIN)"
    else
      if ! err=$(ip -n "$ns" link add br-probe type bridge 2>&1); then
        why="cannot create a bridge in a network namespace: $err"
      elif ! err=$(ip -n "$ns" link add v-probe type veth peer name v-probe-peer 2>&1); then
        why="cannot create a veth pair in a network namespace: $err"
      elif ! err=$(nsenter --net="/run/netns/$ns" unshare --uts true 2>&1); then
        why="cannot create a UTS namespace (unshare --uts: $err)"
      fi
      ip netns del "$ns" 2>/dev/null || true
    fi
  fi
  if [ -n "$why" ]; then echo "$why"; return 77; fi
  return 0
}

# ---- stop ------------------------------------------------------------------------------------------
namespaces() { [ -s "$DIR/namespaces" ] && cat "$DIR/namespaces" || true; }

kill_namespace_procs() {  # every process in one of OUR namespaces (slurmd, slurmstepd, jobs), by PID
  local ns=$1 pids
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -z "$pids" ] && return 0
  kill -KILL $pids 2>/dev/null || true
  for _ in $(seq 50); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && return 0; sleep 0.1; done
}

stop() {
  local ctld
  ctld=$(pid_in "$DIR/run/slurmctld.pid")
  if alive "$ctld" && ip netns list | grep -qw "$P-ctl"; then
    local jobs
    jobs=$(in_login squeue -h -o %A 2>/dev/null | sort -u || true)
    if [ -n "$jobs" ]; then
      in_login scancel $jobs 2>/dev/null || true
      for _ in $(seq 50); do [ -z "$(in_login squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
    fi
    in_login scontrol shutdown 2>/dev/null || true
  fi
  for f in "$DIR"/run/slurmctld.pid "$DIR"/run/slurmd-*.pid; do  # wait, then escalate, by PID only
    [ -e "$f" ] || continue
    local p; p=$(pid_in "$f")
    for _ in $(seq 50); do alive "$p" || break; sleep 0.1; done
    alive "$p" && kill -TERM "$p" 2>/dev/null && sleep 1
    alive "$p" && kill -KILL "$p" 2>/dev/null
    rm -f "$f"
  done
  for ns in $(namespaces); do       # whatever is left in our namespaces (job processes), then them
    kill_namespace_procs "$ns"
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -f "$DIR/namespaces"
  local mun; mun=$(pid_in "$DIR/run/munged.pid")
  if alive "$mun"; then
    kill -TERM "$mun"
    for _ in $(seq 50); do alive "$mun" || break; sleep 0.1; done
  fi
  rm -f "$DIR/run/munged.pid"
  say "stopped"
}

# ---- start -----------------------------------------------------------------------------------------
add_ns() { ip netns add "$1"; echo "$1" >> "$DIR/namespaces"; }

network() {
  add_ns "$P-sw"
  ip -n "$P-sw" link add br0 type bridge
  ip -n "$P-sw" link set br0 up
  ip -n "$P-sw" link set lo up
  local i=0
  for host in ctl $(seq 1 "$NODES"); do
    local ns name addr
    if [ "$host" = ctl ]; then ns=$P-ctl; addr=$NET.1; else ns=$P-n$host; addr=$NET.$((10 + host)); fi
    add_ns "$ns"
    ip -n "$P-sw" link add "v$i" type veth peer name eth0 netns "$ns"
    ip -n "$P-sw" link set "v$i" master br0 up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    i=$((i + 1))
  done
}

start_munge() {
  install -d -o munge -g munge -m 0755 "$DIR/munge"
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chown munge:munge "$DIR/munge/munge.key"; chmod 0400 "$DIR/munge/munge.key"
  # /tmp is world-writable (sticky): --force accepts that for the key's parent directories.
  runuser -u munge -- /usr/sbin/munged --force --socket="$DIR/munge/munge.socket" \
    --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munge/munged.pid" \
    --seed-file="$DIR/munge/munged.seed" --log-file="$DIR/munge/munged.log"
  for _ in $(seq 50); do [ -s "$DIR/munge/munged.pid" ] && break; sleep 0.1; done
  cp "$DIR/munge/munged.pid" "$DIR/run/munged.pid"
  munge -S "$DIR/munge/munge.socket" -n | unmunge -S "$DIR/munge/munge.socket" >/dev/null \
    || die "the private munged does not answer (log: $DIR/munge/munged.log)"
}

write_config() {
  mkdir -p "$DIR/etc"
  local gres="" nodes=""
  for i in $(seq 1 "$NODES"); do
    local n t; n=$(node_name "$i"); t=$(node_type "$i")
    mkdir -p "$DIR/dev/$n" "$DIR/spool/$n"
    for g in $(seq 0 $((NGPU - 1))); do ln -sfn /dev/null "$DIR/dev/$n/nvidia$g"; done
    gres+="NodeName=$n Name=gpu Type=$t File=$DIR/dev/$n/nvidia[0-$((NGPU - 1))]"$'\n'
    nodes+="NodeName=$n NodeHostname=$n NodeAddr=$NET.$((10 + i)) CPUs=$CPUS RealMemory=$MEM_PER_NODE Gres=gpu:$t:$NGPU Feature=$t State=UNKNOWN"$'\n'
  done
  printf 'AutoDetect=off\n%s' "$gres" > "$DIR/etc/gres.conf"
  cat > "$CONF" <<EOF
# generated by tests/slurm/multinode.sh: $NODES nodes in network namespaces $P-n1..$P-n$NODES
ClusterName=gemmlab-mn
SlurmctldHost=$P-ctl($NET.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket,cred_expire=10
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=200
SchedulerType=sched/backfill
# Requeued jobs wait cred_expire (AuthInfo) seconds, then the next scheduling pass: keep both short.
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,sched_interval=1,bf_interval=1
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
KillWait=5
JobRequeue=1
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
GresTypes=gpu
$nodes
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  chmod 0644 "$CONF" "$DIR/etc/gres.conf"
}

start_node() {  # start_node NAME: slurmd in NAME's namespaces (network: made by network(); UTS: here)
  local n=$1
  in_net "$n" unshare --uts sh -c "hostname '$n' && exec slurmd -f '$CONF' -N '$n'" \
    || die "slurmd of $n did not start (log: $DIR/log/slurmd-$n.log)"
}

node_states() { in_login sinfo -h -N -o '%N %T' 2>/dev/null | sort -u || true; }

wait_idle() {  # wait_idle NODE...: until each is idle (or mixed/allocated: up and in service)
  local want=("$@") st ok
  for _ in $(seq $((TMO * 5))); do
    st=$(node_states); ok=1
    for n in "${want[@]}"; do grep -qE "^$n (idle|mixed|allocated)$" <<<"$st" || ok=0; done
    [ $ok = 1 ] && return 0
    sleep 0.2
  done
  echo "multinode: nodes not up after ${TMO}s:" >&2; echo "$st" >&2
  tail -n 15 "$DIR/log/slurmctld.log" >&2 || true
  return 1
}

start() {
  local t0; t0=$(date +%s.%N)
  local why; why=$(probe) || { echo "multinode: cannot run here: $why" >&2; exit 77; }
  stop >/dev/null 2>&1 || true
  rm -rf "$DIR"; mkdir -p "$DIR"/{state,spool,log,dev,run,etc}
  : > "$DIR/namespaces"
  start_munge
  network
  write_config
  in_net "$P-ctl" unshare --uts sh -c "hostname '$P-ctl' && exec slurmctld -c -f '$CONF'" \
    || die "slurmctld did not start (log: $DIR/log/slurmctld.log)"
  local names=()
  for i in $(seq 1 "$NODES"); do names+=("$(node_name "$i")"); start_node "$(node_name "$i")"; done
  wait_idle "${names[@]}" || exit 1
  write_env
  awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$NODES" 'BEGIN{printf "multinode: %d nodes idle in %.1fs\n", n, b-a}'
  in_login sinfo -N -o '%N %T %G %f'
}

write_env() {
  cat > "$DIR/env" <<EOF
SLURM_MN_DIR=$DIR
SLURM_MN_PREFIX=$P
SLURM_MN_LOGIN=$P-ctl
SLURM_MN_CONF=$CONF
SLURM_MN_NODES="$(for i in $(seq 1 "$NODES"); do printf '%s ' "$(node_name "$i")"; done)"
SLURM_MN_TYPES="$(for i in $(seq 1 "$NODES"); do printf '%s ' "$(node_type "$i")"; done)"
EOF
}

kill_node() {
  local n=$1
  grep -qx "$n" <<<"$(namespaces)" || die "no node $n in this cluster ($(namespaces | tr '\n' ' '))"
  [ "$n" != "$P-ctl" ] && [ "$n" != "$P-sw" ] || die "$n is not a compute node"
  kill_namespace_procs "$n"
  rm -f "$DIR/run/slurmd-$n.pid"
  in_login scontrol update NodeName="$n" State=DOWN Reason="node failure (multinode.sh kill-node)"
  say "killed $n (every process in its namespace) and marked it DOWN"
}

revive_node() {
  local n=$1
  start_node "$n"
  in_login scontrol update NodeName="$n" State=RESUME 2>/dev/null || true
  wait_idle "$n"
  say "$n is back"
}

case "${1:-}" in
  probe) probe ;;
  start) start ;;
  stop) stop ;;
  login) shift; [ $# -gt 0 ] || die "usage: $0 login CMD..."; exec nsenter --net="/run/netns/$P-ctl" env SLURM_CONF="$CONF" "$@" ;;
  kill-node) [ $# = 2 ] || die "usage: $0 kill-node NODE"; kill_node "$2" ;;
  start-node) [ $# = 2 ] || die "usage: $0 start-node NODE"; revive_node "$2" ;;
  env) [ -s "$DIR/env" ] || die "not running (no $DIR/env)"; cat "$DIR/env" ;;
  *) echo "usage: $0 probe|start|stop|login CMD...|kill-node NODE|start-node NODE|env" >&2; exit 2 ;;
esac
