#!/bin/bash
# Submits one distributed Harness-S experiment on Slurm: the coordinator first, then the worker
# array, which starts once the coordinator runs (so that idle workers do not wait for a
# coordinator still in the queue) and which the coordinator cancels when the experiment is done.
#
#   deploy/slurm/submit.sh EXPERIMENT_FILE [WORKERS]
#
# WORKERS (default 8) is the number of array tasks; extra sbatch options for the workers can be
# given in HARNESS_S_WORKER_SBATCH_ARGS (e.g. "--partition=cpu --cpus-per-task=32"), for the
# coordinator in HARNESS_S_COORDINATOR_SBATCH_ARGS. The Postgres URL is read by the jobs
# themselves (see the comments in the .sbatch files); it never appears on a command line.

set -euo pipefail

experiment="${1:?usage: submit.sh EXPERIMENT_FILE [WORKERS]}"
workers="${2:-8}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
experiment="$(realpath "$experiment")"

# shellcheck disable=SC2086 # the extra arguments are meant to be split
coordinator=$(sbatch --parsable ${HARNESS_S_COORDINATOR_SBATCH_ARGS:-} \
    "$here/harness-s-coordinator.sbatch" "$experiment")
coordinator="${coordinator%%;*}"

# shellcheck disable=SC2086
array=$(sbatch --parsable ${HARNESS_S_WORKER_SBATCH_ARGS:-} \
    --array="0-$((workers - 1))" \
    --job-name="harness-s-worker-$coordinator" \
    --dependency="after:$coordinator" \
    "$here/harness-s-worker.sbatch")
array="${array%%;*}"

echo "coordinator: job $coordinator"
echo "workers:     job array $array ($workers tasks, start when the coordinator does)"
echo "progress:    harness-s experiment status"
