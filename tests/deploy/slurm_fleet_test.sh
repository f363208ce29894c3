#!/usr/bin/env bash
# The Slurm deployment (deploy/slurm/) on a real single-node cluster started here: munged,
# slurmctld and slurmd from Debian's packages, run as root from a temporary directory (free ports,
# its own cluster name) and stopped at the end. A manifest of 24 problems (GEMM, attention,
# RMSNorm) is tuned, predicting, by a 4-task array with its dependent merge job
# (deploy/slurm/submit.sh). Task 2 is cancelled (scancel) mid-run, so the merge job never runs;
# task 2 is submitted again with a new merge job and resumes its shard. The bundle's winners must
# equal a one-process run's exactly and `fleet verify` must pass. Exits 77 (skipped) without root
# or without the slurm-wlm and munge packages (scripts/install_deps.sh installs them).
#   slurm_fleet_test.sh PATH/TO/kerntune
set -euo pipefail

kerntune=$(realpath "${1:?usage: slurm_fleet_test.sh PATH/TO/kerntune}")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
skip() {
  echo "skipped: $*"
  exit 77
}
[[ $(id -u) -eq 0 ]] || skip "starting munged, slurmctld and slurmd needs root"
for tool in munged slurmctld slurmd sbatch squeue scancel scontrol sinfo python3; do
  command -v "$tool" >/dev/null || skip "$tool is missing (apt-get install slurm-wlm munge)"
done

started=$(date +%s.%N)
elapsed() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }
work=$(mktemp -d /tmp/kt-slurm.XXXXXX)
chmod 755 "$work"
mkdir -p "$work"/{munge-key,munge-run,state,spool,log,out}
chmod 700 "$work/munge-key"
export SLURM_CONF=$work/slurm.conf
cluster=kt$$

cleanup() {
  set +e
  scancel --quiet --user=root 2>/dev/null
  for pidfile in "$work/spool/slurmd.pid" "$work/state/slurmctld.pid" "$work/munge-run/munged.pid"; do
    [[ -s $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  sleep 1
  if [[ -n ${KT_KEEP_SLURM_DIR:-} ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for log in "$work"/log/*.log "$work"/out/*.out; do
    [[ -f $log ]] && { echo "--- $log"; tail -n 30 "$log"; } >&2
  done
  exit 1
}

# ---- the cluster -----------------------------------------------------------------------------
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ports = []
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
    ports.append(s.getsockname()[1])
print(*ports)')
dd if=/dev/urandom of="$work/munge-key/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge-key/munge.key"
munged --force --socket="$work/munge-run/munge.socket" --key-file="$work/munge-key/munge.key" \
  --pid-file="$work/munge-run/munged.pid" --seed-file="$work/munge-run/munged.seed" \
  --log-file="$work/log/munged.log"
cat >"$SLURM_CONF" <<CONF
ClusterName=$cluster
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge-run/munge.socket
CryptoType=crypto/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/state/slurmctld.pid
SlurmdPidFile=$work/spool/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
KillWait=5
$(slurmd -C | head -n 1) State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
  [[ $(sinfo -h -o %T 2>/dev/null) == idle ]] && break
  sleep 0.2
done
[[ $(sinfo -h -o %T 2>/dev/null) == idle ]] || fail "the node did not come up idle"
cluster_s=$(elapsed "$started")
echo "cluster $cluster up in ${cluster_s}s: $(sinfo -h -o '%N %c CPUs %T')"

# ---- the manifest and the one-process reference ------------------------------------------------
manifest=$work/fleet.manifest
cat >"$manifest" <<'MANIFEST'
kerntune-manifest 1
# 24 problems of three ops on one target, two candidates each
tune candidates=2
device h200
gemm 4096x4096x4096
gemm 8192x8192x8192
gemm 2048x2048x2048
gemm 4100x4096x4096
gemm 1536x1536x8192
gemm 512x512x32768
gemm 64x14336x4096
gemm 16x4096x4096
gemm 1x4096x4096
gemm 1000x1536x512 layout=nn
attention b=4,h=16,s=4096,d=128 causal
attention b=2,hq=32,hkv=8,s=2048,d=128 causal
attention b=8,h=16,s=1024,d=64
attention b=1,hq=32,hkv=8,sq=1,sk=8192,d=128
attention b=2,h=8,s=512,d=256 causal
attention b=16,h=8,s=512,d=64 causal
attention b=1,h=32,sq=128,sk=4096,d=128
rmsnorm rows=4096,hidden=4096
rmsnorm rows=8192,hidden=8192 residual
rmsnorm rows=1,hidden=5120
rmsnorm rows=8192,hidden=1000
rmsnorm rows=4097,hidden=4104 residual
rmsnorm rows=16384,hidden=2048 dtype=fp16
rmsnorm rows=32768,hidden=16384
MANIFEST
export KERNTUNE=$kerntune KT_RUN_ARGS=--predict KERNTUNE_LOG_LEVEL=warn
export KERNTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1  # predicting, as CI, on any machine
reference_start=$(date +%s.%N)
"$kerntune" fleet run --predict --manifest "$manifest" --db "$work/reference.db" \
  >"$work/log/reference.out" 2>&1 || fail "the one-process run failed"
reference_s=$(elapsed "$reference_start")

# ---- the array and its merge; task 2 cancelled mid-run -----------------------------------------
out=$work/out
bundle=$work/bundle.db
shard_done() {  # items of shard $1 with a winner
  "$kerntune" fleet status --manifest "$manifest" --shards 4 --dir "$out" --json 2>/dev/null |
    python3 -c "import json, sys; print(json.load(sys.stdin)['shards'][$1 - 1]['done'])"
}
job_state() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
cluster_start=$(date +%s.%N)
submitted=$(bash "$repo/deploy/slurm/submit.sh" "$manifest" 4 "$out" "$bundle" --cpus-per-task=1)
echo "$submitted"
array=$(awk '/^shards/ {print $2}' <<<"$submitted")
merge=$(awk '/^merge/ {print $2}' <<<"$submitted")
cancelled=""
for _ in $(seq 1500); do
  if [[ $(job_state "${array}_2") == RUNNING ]] && (($(shard_done 2) >= 1)); then
    scancel "${array}_2"
    cancelled=$(shard_done 2)
    break
  fi
  sleep 0.2
done
[[ -n $cancelled ]] || fail "task 2 never ran with a finished item to cancel"
((cancelled < 6)) || fail "task 2 had finished its 6 items before it could be cancelled"
echo "cancelled task ${array}_2 after $cancelled of its 6 items"
for _ in $(seq 1500); do
  [[ -z $(squeue -h -j "$array" 2>/dev/null) ]] && break
  sleep 0.2
done
for _ in $(seq 100); do
  state=$(job_state "$merge")
  [[ $state == PENDING || $state == RUNNING ]] || break
  sleep 0.2
done
[[ $(job_state "$merge") != COMPLETED ]] || fail "the merge ran although task 2 was cancelled"
[[ ! -e $bundle ]] || fail "a bundle was written although task 2 was cancelled"
for task in 1 3 4; do
  [[ $(job_state "${array}_$task") == COMPLETED ]] || fail "task $task: $(job_state "${array}_$task")"
done

# ---- task 2 again, with a new merge --------------------------------------------------------------
resubmitted=$(bash "$repo/deploy/slurm/submit.sh" --resubmit 2 "$manifest" 4 "$out" "$bundle" \
  --cpus-per-task=1)
echo "$resubmitted"
again=$(awk '/^shards/ {print $2}' <<<"$resubmitted")
merge=$(awk '/^merge/ {print $2}' <<<"$resubmitted")
for _ in $(seq 3000); do
  state=$(job_state "$merge")
  [[ $state == PENDING || $state == RUNNING || -z $state ]] || break
  sleep 0.2
done
[[ $(job_state "$merge") == COMPLETED ]] || fail "the merge job ended $(job_state "$merge")"
cluster_s=$(elapsed "$cluster_start")
log2=$(ls "$out"/kerntune-shard-"${again}"_2.out)
skipped=$(grep -c "done before" "$log2" || true)
resumed=$(grep -c "resumed a killed run" "$log2" || true)
((skipped >= cancelled)) || fail "task 2 again skipped $skipped items, $cancelled were done"

# ---- the bundle equals the reference -----------------------------------------------------------
winners() {
  "$kerntune" cache ls --json --db "$1" | python3 -c '
import json, sys
for w in json.load(sys.stdin)["winners"]:
    print(w["device"], w["problem"], w["config"], w["median_us"], w["measured"])'
}
diff <(winners "$work/reference.db") <(winners "$bundle") >"$work/log/winners.diff" ||
  fail "the bundle's winners differ from the one-process run's: $(head -5 "$work/log/winners.diff")"
count=$(winners "$bundle" | wc -l)
((count == 24)) || fail "the bundle holds $count winners, not 24"
"$kerntune" fleet verify "$bundle" >"$work/log/verify.out" 2>&1 || fail "fleet verify failed"
echo "[ figures  ] one-process run ${reference_s}s; array, cancel, resubmit and merge ${cluster_s}s;" \
  "task 2 skipped $skipped items and resumed $resumed killed runs; all ${SECONDS}s"
echo "slurm fleet: 24 winners equal the one-process run's; bundle verified"
