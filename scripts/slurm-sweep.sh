#!/usr/bin/env bash
# A sharded opbench sweep as a Slurm job array, then a dependent job that
# merges the shards and plots them (README, "Sweeps on a cluster").
#
#   scripts/slurm-sweep.sh [submit]   submit both jobs (make slurm-sweep)
#   scripts/slurm-sweep.sh shard      one array task: its shard of the sweep
#   scripts/slurm-sweep.sh merge      the merge job: opbench merge -plot
#
# Settings, from the environment (make slurm-sweep passes SWEEP and SHARDS):
#   SWEEP        opbench sweep's flags ("-preset llama-7b -n 1,32"), or a
#                sweep file (-f), required; flags are split on spaces
#   SHARDS       the number of shards (array tasks), default 3
#   RUN_DIR      a folder every node sees: the opbench binary, the shards'
#                record sets and the logs (default slurm-runs/DATE-TIME)
#   OUT          where the merged set goes, as OUT/<machine-id>/NAME.json
#                (default results)
#   NAME         the merged set's name (default the sweep's ID)
#   SBATCH_ARGS  more sbatch flags for both jobs, such as
#                "--partition=cpu --time=2:00:00 --exclusive"
#   OPBENCH      an opbench binary to use (default: go build one into RUN_DIR)
#
# Each array task runs "opbench sweep $SWEEP": opbench reads its shard
# from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT itself. The merge
# job runs only when every task succeeded (--dependency=afterok); a failed
# task leaves it pending with an unmet dependency, so the submitter prints
# how to cancel both. It prints the two job IDs and writes them to
# RUN_DIR/array.jobid and RUN_DIR/merge.jobid.
set -euo pipefail

mode=${1:-submit}

sweep_flags() {
	if [ -f "$SWEEP" ]; then
		echo "-f $SWEEP"
	else
		echo "$SWEEP"
	fi
}

case "$mode" in
submit)
	root=$(cd "$(dirname "$0")/.." && pwd)
	: "${SWEEP:?set SWEEP to opbench sweep flags or a sweep file (see README, Sweeps on a cluster)}"
	SHARDS=${SHARDS:-3}
	case "$SHARDS" in
	'' | *[!0-9]*) echo "SHARDS=$SHARDS is not a positive integer" >&2; exit 2 ;;
	esac
	if [ "$SHARDS" -lt 1 ]; then
		echo "SHARDS=$SHARDS is not a positive integer" >&2
		exit 2
	fi
	RUN_DIR=${RUN_DIR:-$root/slurm-runs/$(date -u +%Y%m%d-%H%M%S)}
	mkdir -p "$RUN_DIR/logs" "$RUN_DIR/shards"
	RUN_DIR=$(cd "$RUN_DIR" && pwd)
	OUT=${OUT:-$root/results}
	case "$OUT" in /*) ;; *) OUT=$root/$OUT ;; esac
	if [ -f "$SWEEP" ]; then
		SWEEP=$(cd "$(dirname "$SWEEP")" && pwd)/$(basename "$SWEEP")
	fi
	if [ -z "${OPBENCH:-}" ]; then
		OPBENCH=$RUN_DIR/opbench
		(cd "$root" && go build -o "$OPBENCH" ./cmd/opbench)
	fi
	# The point list once, here, so that a bad SWEEP fails before any job.
	# shellcheck disable=SC2046
	"$OPBENCH" sweep $(sweep_flags) -list -shard "0/$SHARDS" >/dev/null
	export SWEEP SHARDS RUN_DIR OUT OPBENCH KERNBENCH_ROOT=$root NAME=${NAME:-}
	# shellcheck disable=SC2086
	array=$(sbatch --parsable --array="0-$((SHARDS - 1))" --job-name=kernbench-sweep --chdir="$root" \
		--output="$RUN_DIR/logs/shard-%a.log" ${SBATCH_ARGS:-} "$0" shard)
	array=${array%%;*}
	# shellcheck disable=SC2086
	merge=$(sbatch --parsable --dependency="afterok:$array" --job-name=kernbench-merge --chdir="$root" \
		--output="$RUN_DIR/logs/merge.log" ${SBATCH_ARGS:-} "$0" merge)
	merge=${merge%%;*}
	echo "$array" >"$RUN_DIR/array.jobid"
	echo "$merge" >"$RUN_DIR/merge.jobid"
	echo "submitted: array job $array ($SHARDS shards), merge job $merge (after all succeed)"
	echo "run folder: $RUN_DIR (logs in logs/, shards in shards/); merged set: $OUT/<machine-id>/"
	echo "if a shard fails, the merge never starts: scancel $array $merge"
	;;
shard)
	: "${SLURM_ARRAY_TASK_ID:?not an array task}"
	cd "${KERNBENCH_ROOT:?}"
	# shellcheck disable=SC2046
	exec "$OPBENCH" sweep $(sweep_flags) -out "$RUN_DIR/shards" -name "shard-$SLURM_ARRAY_TASK_ID"
	;;
merge)
	cd "${KERNBENCH_ROOT:?}"
	set -- "$RUN_DIR"/shards/shard-*.json
	if [ -n "${NAME:-}" ]; then
		exec "$OPBENCH" merge -plot -name "$NAME" "$OUT" "$@"
	fi
	exec "$OPBENCH" merge -plot "$OUT" "$@"
	;;
*)
	echo "usage: $0 [submit|shard|merge]" >&2
	exit 2
	;;
esac
