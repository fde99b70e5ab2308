#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, and make slurm-sweep on
# it: munged (with a generated key), slurmctld and slurmd started directly
# (no systemd), a three-shard array of a small sweep and the dependent
# merge job, then a check that the merged set holds exactly the points of
# the same sweep run unsharded. Everything lives in a temporary folder
# (its own munge socket, ports, state and spool), and the daemons are
# stopped by their pids on exit.
#
# Needs root (slurmd runs jobs as their user) and Debian's packages, which
# it installs when missing. Settings: SLURM_TEST_TIMEOUT (seconds to wait
# for the jobs, default 300), SLURM_TEST_PORT (slurmctld's port; slurmd
# takes the next; default 16817), SLURM_TEST_KEEP=1 keeps the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
start=$(date +%s)

if [ "$(id -u)" != 0 ]; then
	echo "slurm-test: needs root (slurmd runs the jobs as their user)" >&2
	exit 1
fi
apt_updated=""
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
	apt-get update -qq
	apt_updated=1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge
fi
if ! command -v make >/dev/null; then
	[ -n "$apt_updated" ] || apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make
fi
slurmctld -V

timeout_s=${SLURM_TEST_TIMEOUT:-300}
port=${SLURM_TEST_PORT:-16817}
work=$(mktemp -d /tmp/kernbench-slurm.XXXXXX)
chmod 755 "$work"
pids=()
array="" merge=""
# drain cancels every job of this test's cluster (SLURM_CONF names it)
# and waits, bounded, until none is left, so that no job step outlives
# the daemons.
drain() {
	[ "${SLURM_CONF:-}" = "$work/slurm.conf" ] || return 0 # not before ours is up
	scancel --partition=kb 2>/dev/null
	for _ in $(seq 60); do
		[ -z "$(squeue -h -p kb 2>/dev/null)" ] && return 0
		sleep 0.5
	done
	echo "slurm-test: jobs still listed after 30 s: $(squeue -h -p kb 2>&1)"
}
cleanup() {
	set +e
	drain
	# Stop the daemons by pid, newest first, and wait for each.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[i]}" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -z "${SLURM_TEST_KEEP:-}" ]; then rm -rf "$work"; else echo "slurm-test: kept $work"; fi
}
trap cleanup EXIT

fail() {
	echo "slurm-test: FAIL: $*" >&2
	for f in "$work"/slurmctld.log "$work"/slurmd.log "$work"/run*/logs/*.log; do
		[ -f "$f" ] || continue
		echo "---- $f (last lines)" >&2
		tail -n 30 "$f" >&2
	done
	exit 1
}

# munge: a generated key, our own socket.
mkdir -p "$work/munge"
chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
sock=$work/munge/munge.socket
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$sock" \
	--pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed" >"$work/munge/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "munged did not start"

# slurm.conf: one node with this machine's CPUs, one partition.
host=$(uname -n | cut -d. -f1)
cpus=$(nproc)
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<CONF
ClusterName=kernbench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=kbnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=kb Nodes=kbnode Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N kbnode -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
ok=""
for _ in $(seq 120); do
	state=$(sinfo -h -n kbnode -o %T 2>/dev/null || true)
	case "$state" in idle*) ok=1; break ;; esac
	sleep 0.5
done
[ -n "$ok" ] || fail "node kbnode not idle after 60 s (state: ${state:-none})"
echo "slurm-test: cluster up: node kbnode, $cpus CPUs, partition kb ($(($(date +%s) - start)) s)"

# The sweep: small and quick; the same flags unsharded for the check.
sweep="-op rms_norm,rope,soft_max -n 1,2,3 -t 1 -time 20ms -min-samples 3 -roofline off"
go build -o "$work/opbench" ./cmd/opbench
# shellcheck disable=SC2086
"$work/opbench" sweep $sweep -out "$work/whole" -name whole >/dev/null 2>"$work/whole.log" || fail "unsharded sweep: $(cat "$work/whole.log")"

mkdir -p "$work/run"
make --no-print-directory slurm-sweep SWEEP="$sweep" SHARDS=3 RUN_DIR="$work/run" OUT="$work/merged" NAME=merged OPBENCH="$work/opbench"
array=$(cat "$work/run/array.jobid")
merge=$(cat "$work/run/merge.jobid")

# wait_jobs waits for the array and its merge job, with a time limit. A
# failed shard would leave the afterok merge pending forever: it cancels
# both and returns 1 (2 past the time limit, 3 when the merge failed).
job_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 | sort | uniq -c | tr -s ' ' | tr '\n' ';'; }
wait_jobs() {
	local deadline=$(($(date +%s) + timeout_s)) as ms
	while :; do
		ms=$(job_state "$merge")
		as=$(job_state "$array")
		case "$as" in *FAILED* | *CANCELLED* | *TIMEOUT* | *NODE_FAIL* | *OUT_OF_MEMORY*)
			echo "slurm-test: a shard failed (array $array: $as): cancelling it and merge job $merge"
			scancel "$array" "$merge"
			return 1 ;;
		esac
		case "$ms" in
		*COMPLETED*) return 0 ;;
		*FAILED* | *CANCELLED* | *TIMEOUT*) echo "slurm-test: merge job $merge: $ms"; return 3 ;;
		esac
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "slurm-test: jobs not done after $timeout_s s (array: $as merge: $ms)"
			scancel "$array" "$merge"
			return 2
		fi
		sleep 1
	done
}
wait_jobs || fail "the sharded sweep's jobs did not complete"
array="" merge="" # done: nothing to cancel
echo "slurm-test: array and merge jobs completed"

# The merged set holds exactly the unsharded sweep's points: compare
# joins them and names any point only in one.
merged=$(ls "$work"/merged/*/merged.json 2>/dev/null | head -1)
[ -n "$merged" ] || fail "no merged set in $work/merged"
[ -f "${merged%.json}.csv" ] || fail "no merged CSV beside $merged"
ls "$(dirname "$merged")"/merged*.png >/dev/null 2>&1 || ls "$(dirname "$merged")"/merged*.svg >/dev/null 2>&1 || fail "the merge job plotted nothing"
n=$(grep -c '"validation":' "$work/whole/whole.json")
m=$(grep -c '"validation":' "$merged")
"$work/opbench" compare "$work/whole/whole.json" "$merged" >"$work/compare.txt" || fail "compare: $(cat "$work/compare.txt")"
if grep -q '^only in' "$work/compare.txt"; then
	fail "merged and unsharded points differ: $(grep '^only in' "$work/compare.txt")"
fi
grep -q " over $n points" "$work/compare.txt" || fail "compare did not join all $n points: $(tail -1 "$work/compare.txt")"
[ "$n" = "$m" ] || fail "unsharded $n records, merged $m"
for i in 0 1 2; do
	grep -q "\"shard\": $i," "$work/run/shards/shard-$i.json" || fail "shard-$i.json does not say it is shard $i"
done
echo "slurm-test: 3 shards merged into $m records, the unsharded sweep's $n points ($(($(date +%s) - start)) s)"

# A failing shard: task 1's opbench exits 1. The wait must see it and
# cancel the merge job, which would otherwise wait forever.
cat >"$work/failing-opbench" <<SH
#!/bin/sh
if [ "\$SLURM_ARRAY_TASK_ID" = 1 ]; then echo "shard 1 fails on purpose" >&2; exit 1; fi
exec "$work/opbench" "\$@"
SH
chmod +x "$work/failing-opbench"
mkdir -p "$work/run-fail"
make --no-print-directory slurm-sweep SWEEP="$sweep" SHARDS=3 RUN_DIR="$work/run-fail" OUT="$work/merged-fail" OPBENCH="$work/failing-opbench" >/dev/null
array=$(cat "$work/run-fail/array.jobid")
merge=$(cat "$work/run-fail/merge.jobid")
if wait_jobs; then
	fail "a failed shard went unnoticed"
fi
for _ in $(seq 30); do
	case "$(job_state "$merge")" in *CANCELLED*) break ;; esac
	sleep 0.5
done
case "$(job_state "$merge")" in *CANCELLED*) ;; *) fail "merge job $merge not cancelled after a failed shard: $(job_state "$merge")" ;; esac
[ ! -e "$work/merged-fail" ] || fail "the merge ran after a failed shard"
array="" merge=""
drain
echo "slurm-test: PASS: 3 shards merged into $m records, the unsharded sweep's $n points ($(($(date +%s) - start)) s)"
