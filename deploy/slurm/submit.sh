#!/usr/bin/env bash
# Submits a kerntune fleet to Slurm: an array of SHARDS tasks (fleet_shard.sbatch, one shard
# each) and the merge job (fleet_merge.sbatch) that runs when every task succeeded. Prints the two
# job ids. With --resubmit I: shard I alone again (after it was cancelled or failed; it resumes
# where it stopped) and a merge that waits for it.
#   submit.sh [--resubmit I] MANIFEST SHARDS OUT_DIR BUNDLE [SBATCH_OPTION...]
# The sbatch options go to the shard tasks (e.g. --gres=gpu:8 --partition=h200); the merge gets
# $KT_MERGE_SBATCH_ARGS. $KERNTUNE and $KT_RUN_ARGS reach the jobs (sbatch --export=ALL).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

resubmit=""
if [[ ${1:-} == --resubmit ]]; then
  resubmit=${2:?--resubmit needs a shard number}
  shift 2
fi
if (($# < 4)); then
  sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
manifest=$(realpath "$1")
shards=$2
out=$(realpath -m "$3")
bundle=$(realpath -m "$4")
shift 4
mkdir -p "$out"

export KT_MANIFEST=$manifest KT_SHARDS=$shards KT_OUT=$out KT_BUNDLE=$bundle
array=${resubmit:-1-$shards}
shard_job=$(sbatch --parsable --array="$array" --export=ALL --chdir="$out" "$@" \
  "$here/fleet_shard.sbatch")
shard_job=${shard_job%%;*}
# shellcheck disable=SC2086  # KT_MERGE_SBATCH_ARGS is a list of options
merge_job=$(sbatch --parsable --dependency="afterok:$shard_job" --kill-on-invalid-dep=yes \
  --export=ALL --chdir="$out" ${KT_MERGE_SBATCH_ARGS:-} "$here/fleet_merge.sbatch")
merge_job=${merge_job%%;*}
echo "shards $shard_job (array $array of $shards)"
echo "merge $merge_job (after shards $shard_job succeed) -> $bundle"
