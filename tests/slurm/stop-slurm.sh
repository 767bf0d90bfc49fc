#!/usr/bin/env bash
# stop-slurm.sh — stop the cluster started by tests/slurm/start-slurm.sh: cancel its jobs, shut down its
# daemons, stop its munged. Talks to that cluster only (SLURM_CONF in SLURM_CI_DIR) and kills only the
# PIDs recorded in $SLURM_CI_DIR/*.pid: a Slurm the tests did not start is never stopped.
set -u
DIR=${SLURM_CI_DIR:-/tmp/gemmlab-slurm-ci}
export SLURM_CONF=$DIR/etc/slurm.conf              # ours only, never /etc/slurm
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pidof_file() { [ -s "$1" ] && cat "$1" || true; }
CTLD=$(pidof_file "$DIR/slurmctld.pid"); SLD=$(pidof_file "$DIR/slurmd.pid"); MUN=$(pidof_file "$DIR/munged.pid")

if alive "$CTLD"; then
  JOBS=$(squeue -h -o %A 2>/dev/null | sort -u)
  if [ -n "$JOBS" ]; then
    scancel $JOBS 2>/dev/null
    for _ in $(seq 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  scontrol shutdown 2>/dev/null                    # stops slurmctld and slurmd
fi
for p in $CTLD $SLD; do                            # wait, then escalate, by PID only
  for _ in $(seq 50); do alive "$p" || break; sleep 0.1; done
  alive "$p" && kill -TERM "$p" && sleep 1
  alive "$p" && kill -KILL "$p"
done
if alive "$MUN"; then
  kill -TERM "$MUN"
  for _ in $(seq 50); do alive "$MUN" || break; sleep 0.1; done
fi
rm -f "$DIR/slurmctld.pid" "$DIR/slurmd.pid" "$DIR/munged.pid"
echo "stop-slurm: done"
