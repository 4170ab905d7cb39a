#!/usr/bin/env bash
# Scale-out check: a throwaway single-node SLURM cluster on this machine (munged, slurmctld
# and slurmd with their config, state and sockets in a temp dir, talking over localhost),
# then a slice of the smoke DAG twice in two scratch copies of the repo: once locally, once through
#   snakemake --workflow-profile workflow/profiles/slurm --executor slurm
# Every table CSV must match (timing columns aside: python -m attnlab.compare).
# The slice runs every kind of job but the ledger and report (corpus, tokenizer, token cache,
# training, Winograd split and training, a measurement, tables, a figure): 16 jobs. Each SLURM job
# starts its own Snakemake, so the whole smoke DAG (~100 jobs) through SLURM is an hour; TARGETS=
# (empty) runs it all.
# Needs root (apt-get, daemons). Everything it starts is stopped on exit.
#   bash .ci/slurm.sh            # uses ./.venv (made by `make env`), or VENV=/path/to/venv
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${VENV:-$ROOT/.venv}
PLUGINS=$ROOT/.venv-slurm  # the executor plugins, beside (not inside) the project's environment
[[ -x $VENV/bin/snakemake ]] || make env
export ATTNLAB_CORPUS="${ATTNLAB_CORPUS:-$(cd .. && pwd)/shared/data/tinyshakespeare/input.txt}"
export MPLBACKEND=Agg
TARGETS=${TARGETS-figures/smoke/average_ladder.png results/smoke/tables/winograd_role.csv results/smoke/tables/norm_grad_init.csv}
start=$(date +%s)

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null
fi
# The plugins' own dependencies (pandas, numpy, pyyaml, throttler, snakemake-interface-*) are
# already in the project's environment, so only the two plugin packages go in, pinned.
if [[ ! -d $PLUGINS/snakemake_executor_plugin_slurm ]]; then
  "$VENV/bin/pip" install -q --no-deps --target "$PLUGINS" \
    snakemake-executor-plugin-slurm==2.8.0 snakemake-executor-plugin-slurm-jobstep==0.6.1
fi

TMP=$(mktemp -d /tmp/attnlab-slurm.XXXXXX)
chmod 700 "$TMP"
PIDS=()
cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for f in "$TMP"/slurmd.pid "$TMP"/slurmctld.pid "$TMP"/munged.pid; do
    [[ -f $f ]] && kill "$(cat "$f")" 2>/dev/null || true
  done
  if (( rc != 0 )); then
    echo "--- slurmctld.log"; tail -20 "$TMP/slurmctld.log" 2>/dev/null || true
    echo "--- slurmd.log"; tail -20 "$TMP/slurmd.log" 2>/dev/null || true
    find "$TMP/slurm/.snakemake/slurm_logs" -name '*.log' -exec tail -n 20 {} + 2>/dev/null || true
  fi
  sleep 2  # the daemons may still write their state while they exit: a busy folder must not fail the check
  rm -rf "$TMP" 2>/dev/null || true
  exit $rc
}
trap cleanup EXIT

# munge: a private key, socket and daemon (no system service is touched)
mkdir -m 700 "$TMP/munge"
dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$TMP/munge/munge.key"
munged --force --key-file="$TMP/munge/munge.key" --socket="$TMP/munge/munge.socket" \
  --pid-file="$TMP/munged.pid" --log-file="$TMP/munged.log" --seed-file="$TMP/munge/seed"

NODE=$(hostname -s)
CPUS=$(nproc)
MEM_MB=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 3 / 4 ))
mkdir -p "$TMP/state" "$TMP/spool"
cat > "$TMP/slurm.conf" <<EOF
ClusterName=attnlab
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$TMP/munge/munge.socket
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/slurmctld.log
SlurmdLogFile=$TMP/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
# no accounting database: finished jobs stay visible to squeue (the plugin's status query)
MinJobAge=600
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$TMP/slurm.conf
# The jobstep plugin strips SLURM_* (SLURM_CONF too) before its nested srun, so srun would look
# for /etc/slurm/slurm.conf; a wrapper first on PATH points it back here without touching /etc.
mkdir "$TMP/bin"
printf '#!/bin/sh\nexport SLURM_CONF=%s\nexec %s "$@"\n' "$SLURM_CONF" "$(command -v srun)" > "$TMP/bin/srun"
chmod +x "$TMP/bin/srun"
export PATH=$TMP/bin:$PATH
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N "$NODE"
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -qx idle && break
  sleep 1
done
sinfo -h -o "%P %D %c %m %T" | grep -q idle || { echo "slurm node did not come up"; sinfo; exit 1; }
echo "single-node SLURM up after $(( $(date +%s) - start )) s: $(sinfo -h -o '%P %D nodes, %c cpus, %m MB, %T')"

# two scratch copies of the repo: results must not mix with the checkout's own
copy() { mkdir -p "$1" && cp -r Snakefile profiles environment.yml configs workflow src "$1"/; }
copy "$TMP/local"
copy "$TMP/slurm"

t0=$(date +%s)
# shellcheck disable=SC2086  # TARGETS is a list of paths
(cd "$TMP/local" && PYTHONPATH=$TMP/local/src nice -n 10 "$VENV/bin/snakemake" --cores 2 $TARGETS --config profile=smoke -q rules)
t1=$(date +%s)
echo "local smoke DAG: $(( t1 - t0 )) s"
# shellcheck disable=SC2086
(cd "$TMP/slurm" && PYTHONPATH=$TMP/slurm/src:$PLUGINS nice -n 10 "$VENV/bin/snakemake" \
  --workflow-profile workflow/profiles/slurm --executor slurm $TARGETS --config profile=smoke \
  --slurm-status-command squeue --slurm-init-seconds-before-status-checks 2 \
  --seconds-between-status-checks 2 -q rules)
t2=$(date +%s)
echo "SLURM smoke DAG: $(( t2 - t1 )) s ($(squeue -h --states=all | wc -l) SLURM jobs)"
# every job must have gone through SLURM, and finished there
squeue -h --states=all -o "%T" | sort | uniq -c
if squeue -h --states=all -o "%T" | grep -vqx COMPLETED; then echo "a SLURM job did not complete"; exit 1; fi

PYTHONPATH=$ROOT/src "$VENV/bin/python" -m attnlab.compare "$TMP/local/results/smoke/tables" "$TMP/slurm/results/smoke/tables"
echo "slurm.sh: same tables locally and through SLURM; $(( $(date +%s) - start )) s in all"
