#!/usr/bin/env bash
# First contact with an NVIDIA GPU in one call (make gpu-check): seven
# stages, each under its own time limit, all of them under a total budget
# (GPU_CHECK_BUDGET, 295 s), writing summary.json as they go so that a
# run cut off still leaves what it measured:
#
#   devinfo    nvidia-smi, the tools' versions, where NVRTC loads from,
#              which backends open
#   kernels    NVRTC compiles every kernel file for the device's
#              architecture (sm_90a on an H100/H200 with NVRTC 12):
#              registers, spills, occupancy and SASS mix per kernel
#   validate   opbench validate -backend cuda-0: every case
#   sanitizer  compute-sanitizer memcheck, racecheck and synccheck over
#              a small validation (tile products, flash attention,
#              soft_max, argsort, rms_norm)
#   sweep      the issue's target points (q4_0/q8_0 mat-vec, f16
#              4096^3, flash attention 4096x4096), then the llama-7b
#              preset (q4_0, q8_0, f16 weights; 1 and 512 tokens), each
#              sweep followed by its baselines: PyTorch's
#              times on the same shapes beside ours
#              (scripts/torch_baseline.py: torch.matmul,
#              scaled_dot_product_attention, a device copy for the
#              bandwidth roof) and cuBLAS's on the products (opbench
#              cublas); without torch or cuBLAS they say so
#   ncu        opbench ncu: Nsight Compute's counters of ten kernels
#
# Records go to $OUT/results/<gpu>/gpu-check-DATE/ when $OUT is set (the
# lent machine's folder that comes back), else results/<gpu>/gpu-check-DATE/.
# <gpu> is nvidia-smi's name with spaces as dashes. With $OUT set, the
# records are also packed into $OUT/gpu-check-<gpu>-DATE.tgz when the
# script ends, or is stopped (TERM, INT): the device tool brings back at
# most 8 files, none deeper than two folders under $OUT, so the tarball
# is what comes back (tar xzf it under results/<gpu>/).
#
# The GPU machine has no Go: the binaries come from make gpu-check-build
# (build/gpu-check/, carried with the tree). Where they are missing and go
# is here, the script builds them.
#
#   gotests    the ops/cuda test binary (build/gpu-check/cuda.test) on
#              $GPU_CHECK_TESTS (default TestNVRTCCompilesEveryKernel),
#              with what is left of the budget (skipped if none is)
#
# The budget fits a 5-minute run; where more device time is at hand,
# GPU_CHECK_BUDGET=540 GPU_CHECK_SCALE=2 gives every stage twice its time.
#
# Usage: scripts/gpu-check.sh [-emu] [-quick] [-out DIR] [-budget SECONDS]
#        scripts/gpu-check.sh -check SUMMARY.json
#
#   -emu     run against the emulated driver (cuda-emu) instead of cuda-0:
#            the dry run that tests this script where there is no GPU
#            (a stage whose tool is missing is skipped or dry-run, and
#            says so); GPU_CHECK_BACKEND names any other backend
#   -quick   a tiny subset in every stage (one kernel file, a few cases,
#            small sweep points), for the dry run
#   -out     the folder under which results/<gpu>/... is written
#   -budget  the total seconds for all stages (default 295)
#   -check   exit 0 when a summary is complete and every stage in it
#            passed, was skipped for a missing tool or ran dry; else
#            print what is wrong and exit 1
#
# A stage's status in summary.json: ok; failed or timeout (exit 1);
# skipped (its tool is missing: no compute-sanitizer, no cuda.test);
# dry-run (its tool is missing and the command lines were tried on the
# emulator instead); not-run (the budget was spent: exit 1); running
# (the run was cut off in it).
#
# Exit status: 0 when every stage that ran passed, 1 when one failed or
# ran out of time, 2 for a bad command line.
set -uo pipefail
# Paths on the command line are the caller's; the stages run at the
# repository's root.
here=$PWD
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
cd "$(dirname "$0")/.."

# The stages, in order (run_stage calls at the end).
all_stages="devinfo kernels validate sanitizer sweep ncu gotests"

# check_summary FILE: is the run complete, every stage ok, skipped for a
# missing tool or dry-run?
check_summary() {
	local f=$1 bad=0 st line
	if [ ! -f "$f" ]; then echo "gpu-check -check: no $f" >&2; return 1; fi
	if ! grep -q '^"complete": true,$' "$f"; then echo "gpu-check -check: $f: the run did not complete" >&2; bad=1; fi
	for st in $all_stages; do
		line=$(grep "^{\"stage\": \"$st\"" "$f")
		case "$line" in
		"") echo "gpu-check -check: $f: no stage $st" >&2; bad=1 ;;
		*'"status": "ok"'* | *'"status": "dry-run"'* | *'"status": "skipped"'*) ;;
		*) echo "gpu-check -check: $f: $line" >&2; bad=1 ;;
		esac
	done
	if [ "$bad" = 0 ]; then echo "gpu-check -check: $f: complete, every stage passed, skipped or ran dry"; fi
	return $bad
}

backend=${GPU_CHECK_BACKEND:-cuda-0}
quick=${GPU_CHECK_QUICK:-}
budget=${GPU_CHECK_BUDGET:-295}
# Every stage's limit is multiplied by this: the dry run on the emulator
# (make gpu-check-dry) needs minutes where a GPU needs seconds.
scale=${GPU_CHECK_SCALE:-1}
outroot=.
if [ -n "${OUT:-}" ]; then outroot=$(abspath "$OUT"); fi
bin=${GPU_CHECK_BIN:-build/gpu-check}
while [ $# -gt 0 ]; do
	case "$1" in
	-emu) backend=cuda-emu ;;
	-quick) quick=1 ;;
	-out) outroot=$(abspath "${2:?-out wants a folder}"); shift ;;
	-budget) budget=${2:?-budget wants seconds}; shift ;;
	-check) check_summary "$(abspath "${2:?-check wants a summary.json}")"; exit $? ;;
	-h | -help | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpu-check: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
	shift
done
case "$budget" in '' | *[!0-9]*) echo "gpu-check: -budget wants whole seconds, not $budget" >&2; exit 2 ;; esac
case "$scale" in '' | *[!0-9]* | 0) echo "gpu-check: GPU_CHECK_SCALE wants a whole number, not $scale" >&2; exit 2 ;; esac
emu=""
case "$backend" in *-emu) emu=1 ;; esac

t0=$(date +%s)
now() { echo $(($(date +%s) - t0)); }

# ---------------------------------------------------------------------
# The binaries.

opbench=$bin/opbench
if [ ! -x "$opbench" ]; then
	if command -v go >/dev/null; then
		echo "gpu-check: no $opbench; building it (make gpu-check-build)" >&2
		mkdir -p "$bin" && go build -o "$opbench" ./cmd/opbench || exit 1
	else
		echo "gpu-check: no $opbench and no go here: run make gpu-check-build where Go is, and carry $bin" >&2
		exit 2
	fi
fi
bin=$(cd "$bin" && pwd)
opbench=$bin/opbench

# The GPU: its name names the results folder; its architecture is the
# one the backend compiles for (opbench kernels -arch device).
smi=""
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then smi=1; fi
if [ -n "$emu" ]; then
	gpu=$backend
	arch=${GPU_CHECK_ARCH:-sm_90}
else
	gpu=unknown-gpu
	if [ -n "$smi" ]; then gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-'); fi
	arch=${GPU_CHECK_ARCH:-device}
fi

dir=$outroot/results/$gpu/gpu-check-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)
summary=$dir/summary.json
# The kernel caches live outside the records (cubins are large): stage
# 2's builds serve the later stages.
export KERNBENCH_CUDA_CACHE=${KERNBENCH_CUDA_CACHE:-${TMPDIR:-/tmp}/kernbench-gpu-check-cache}
echo "gpu-check: $backend on $gpu, records in $dir, budget ${budget}s" >&2

# NVRTC and cuBLAS from PyTorch's wheels in a Python environment the
# search does not know (a virtualenv not activated): ask that Python.
if command -v python3 >/dev/null; then
	wheel_lib() { # module: the wheel's lib folder, or nothing
		python3 -c "import os, $1 as m; print(os.path.join(list(m.__path__)[0], 'lib'))" 2>/dev/null
	}
	if ! "$opbench" kernels -nvrtc >/dev/null 2>&1 && d=$(wheel_lib nvidia.cuda_nvrtc) && [ -d "$d" ]; then
		export KERNBENCH_NVRTC=$d
		echo "gpu-check: NVRTC from Python's wheel: $d" >&2
	fi
	if [ -z "$emu" ] && ! "$opbench" cublas -lib >/dev/null 2>&1 && d=$(wheel_lib nvidia.cublas) && [ -d "$d" ]; then
		export KERNBENCH_CUBLAS=$d
		echo "gpu-check: cuBLAS from Python's wheel: $d" >&2
	fi
fi

# ---------------------------------------------------------------------
# The summary: one JSON object, rewritten after every stage, one stage
# per line.

stages=()
json_str() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/}
	# Other control characters (a terminal's escapes) are not JSON.
	printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\010\013\014\016-\037')"
}
write_summary() { # complete [running-stage-line]
	local tmp=$summary.tmp i
	{
		printf '{\n"schema": "kernbench-gpu-check/1",\n'
		printf '"gpu": %s,\n"backend": %s,\n"arch": %s,\n' "$(json_str "$gpu")" "$(json_str "$backend")" "$(json_str "$arch")"
		printf '"quick": %s,\n"budget_s": %s,\n"started": %s,\n"elapsed_s": %s,\n"complete": %s,\n' \
			"$([ -n "$quick" ] && echo true || echo false)" "$budget" "$(json_str "$(date -u -d @"$t0" +%Y-%m-%dT%H:%M:%SZ)")" "$(now)" "$1"
		printf '"stages": [\n'
		local all=("${stages[@]}")
		if [ -n "${2:-}" ]; then all+=("$2"); fi
		for i in "${!all[@]}"; do
			printf '%s%s\n' "${all[$i]}" "$([ "$i" -lt $((${#all[@]} - 1)) ] && echo ,)"
		done
		printf ']\n}\n'
	} >"$tmp" && mv "$tmp" "$summary"
}
stage_line() { # name status rc seconds limit note outputs...
	local name=$1 status=$2 rc=$3 secs=$4 limit=$5 note=$6 outs="" o
	shift 6
	for o in "$@"; do
		if [ -e "$dir/$o" ]; then outs="$outs${outs:+, }$(json_str "$o")"; fi
	done
	printf '{"stage": %s, "status": %s, "rc": %s, "seconds": %s, "limit_s": %s, "outputs": [%s], "note": %s}' \
		"$(json_str "$name")" "$(json_str "$status")" "$rc" "$secs" "$limit" "$outs" "$(json_str "$note")"
}

failed=0
# run_stage NAME LIMIT NOTE FUNCTION [optional]: runs FUNCTION under
# LIMIT seconds (cut to what is left of the budget; an optional stage
# with no budget left is skipped) in its own process group; the
# function's output goes to NAME.log. FUNCTION sets the note by writing
# $dir/NAME.note, and a status other than ok by writing $dir/NAME.status
# (skipped, dry-run).
run_stage() {
	local name=$1 limit=$(($2 * scale)) note=$3 fn=$4 optional=${5:-} left start rc status secs
	left=$((budget - $(now)))
	if [ "$left" -lt 10 ]; then
		if [ -n "$optional" ]; then
			stages+=("$(stage_line "$name" skipped -1 0 0 "the ${budget}s budget is spent (an optional stage)")")
		else
			stages+=("$(stage_line "$name" not-run -1 0 0 "the ${budget}s budget is spent")")
			failed=1
		fi
		write_summary false
		echo "gpu-check: $name: not run, the budget is spent" >&2
		return
	fi
	if [ "$limit" -gt "$left" ]; then limit=$left; fi
	write_summary false "$(stage_line "$name" running -1 0 "$limit" "$note")"
	echo "gpu-check: $name (limit ${limit}s) ..." >&2
	start=$(date +%s)
	STAGE_LIMIT=$limit STAGE_START=$start timeout -k 5 "$limit" bash -c "$(declare -f "$fn"); $(declare -p opbench bin dir backend gpu arch quick emu smi); $fn" >"$dir/$name.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	status=ok
	if [ -f "$dir/$name.status" ]; then status=$(cat "$dir/$name.status"); rm -f "$dir/$name.status"; fi
	if [ -f "$dir/$name.note" ]; then note="$note; $(cat "$dir/$name.note")"; rm -f "$dir/$name.note"; fi
	case $rc in
	0) ;;
	124 | 137) status=timeout; failed=1 ;;
	*) status=failed; failed=1 ;;
	esac
	stages+=("$(stage_line "$name" "$status" "$rc" "$secs" "$limit" "$note" "$name.log" $(cd "$dir" && ls -1 | grep "^$name" | grep -v "\.log$"))")
	write_summary false
	echo "gpu-check: $name: $status (exit $rc, ${secs}s; $dir/$name.log)" >&2
	tail -n 5 "$dir/$name.log" | sed 's/^/    /' >&2
}

# ---------------------------------------------------------------------
# The stages. Each runs in a bash of its own (run_stage passes it the
# variables above); it exits non-zero to fail.

stage_devinfo() {
	set -u
	{
		echo "== date"; date -u
		echo "== uname"; uname -a
		if [ -n "$smi" ]; then
			echo "== nvidia-smi"; nvidia-smi
			echo "== nvidia-smi --query-gpu"
			nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit,pcie.link.gen.max --format=csv
		else
			echo "== nvidia-smi: not here"
		fi
		for t in nvcc ncu compute-sanitizer; do
			echo "== $t"
			p=$(command -v "$t" || ls /usr/local/cuda/bin/"$t" 2>/dev/null || true)
			if [ -n "$p" ]; then "$p" --version 2>&1 | tail -n 3; else echo "not here"; fi
		done
		echo "== python3, torch"
		python3 -c 'import sys; print(sys.version.split()[0])
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
except Exception as e:
    print("no torch:", e)' 2>&1 || echo "no python3"
		echo "== opbench kernels -nvrtc"
		"$opbench" kernels -nvrtc 2>&1
		echo "== opbench cublas -lib"
		"$opbench" cublas -lib 2>&1
		echo "== opbench backends"
		"$opbench" backends 2>&1
	} >"$dir/devinfo.txt"
	if [ -n "$smi" ]; then
		nvidia-smi -q >"$dir/devinfo-nvidia-smi-q.txt" 2>&1
	fi
	cat "$dir/devinfo.txt"
	if ! grep -Eq "^ *$backend +yes" "$dir/devinfo.txt"; then
		echo "$backend cannot open here (see opbench backends in devinfo.txt)" >"$dir/devinfo.note"
		exit 1
	fi
}

stage_kernels() {
	set -u
	local files=()
	if [ -n "$quick" ]; then files=(-file rms_norm.cu); fi
	"$opbench" kernels -arch "$arch" "${files[@]}" -json "$dir/kernels.json" >"$dir/kernels.txt"
	local rc=$?
	cat "$dir/kernels.txt"
	if [ -f "$dir/kernels.json" ]; then
		echo "$(grep -c '"kernel":' "$dir/kernels.json") kernels for $(grep -m1 -o '"arch": *"[^"]*"' "$dir/kernels.json" | sed 's/.*: *//; s/"//g'), $(grep -c '"spill_stores": *[1-9]' "$dir/kernels.json") spilling" >"$dir/kernels.note"
	fi
	exit $rc
}

stage_validate() {
	set -u
	local sel=()
	if [ -n "$quick" ]; then sel=(-op rms_norm,soft_max -case 'ne=[64,7,4,1]'); fi
	"$opbench" validate -backend "$backend" "${sel[@]}" -json "$dir/validate.json" >"$dir/validate.txt"
	local rc=$?
	tail -n 20 "$dir/validate.txt"
	echo "$(grep -c '"status": "OK"' "$dir/validate.json") of $(grep -c '"status":' "$dir/validate.json") cases OK" >"$dir/validate.note"
	exit $rc
}

stage_sanitizer() {
	set -u
	local sel=(-op mul_mat,flash_attn_ext,soft_max,argsort,rms_norm -type q4_0,f16)
	if [ -n "$quick" ]; then sel=(-op rms_norm -type f32); fi
	local san rc=0 per
	san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
	per=$(((STAGE_LIMIT - 5) / 3))
	if [ -z "$san" ]; then
		if [ -z "$emu" ]; then
			echo "skipped" >"$dir/sanitizer.status"
			echo "no compute-sanitizer here" >"$dir/sanitizer.note"
			exit 0
		fi
		# On the emulator the checked build checks the same (bounds,
		# shared-memory races, barriers): the command line is tried
		# without the wrapper.
		echo "dry-run" >"$dir/sanitizer.status"
		echo "no compute-sanitizer: the validation ran on $backend's checked build instead" >"$dir/sanitizer.note"
		for tool in memcheck racecheck synccheck; do
			echo "== $tool (dry run): $opbench validate -backend $backend ${sel[*]}"
			timeout "$per" "$opbench" validate -backend "$backend" "${sel[@]}" >"$dir/sanitizer-$tool.txt" 2>&1 || rc=1
			tail -n 2 "$dir/sanitizer-$tool.txt"
		done
		exit $rc
	fi
	local notes=""
	for tool in memcheck racecheck synccheck; do
		echo "== $tool"
		timeout -k 5 "$per" "$san" --tool "$tool" --error-exitcode 3 --print-limit 30 \
			"$opbench" validate -backend "$backend" "${sel[@]}" >"$dir/sanitizer-$tool.txt" 2>&1
		r=$?
		tail -n 4 "$dir/sanitizer-$tool.txt"
		case $r in
		0) notes="$notes $tool ok;" ;;
		3) notes="$notes $tool found errors;"; rc=1 ;;
		124 | 137) notes="$notes $tool timed out;"; rc=1 ;;
		*) notes="$notes $tool exit $r;"; rc=1 ;;
		esac
	done
	echo "${notes# }" >"$dir/sanitizer.note"
	exit $rc
}

stage_sweep() {
	set -u
	# Two sweeps, each with its baselines, so that one cut off leaves the
	# other: the issue's target points first (q4_0 and q8_0 mat-vec, f16
	# 4096^3, flash-attention prefill at 4096 queries and keys), then the
	# llama-7b preset (q4_0, q8_0 and f16 weights; 1 and 512 tokens).
	if [ -n "$quick" ]; then
		cat >"$dir/sweep-targets-points.json" <<-'EOF'
			{"sweeps": [
			  {"ops": ["mul_mat"], "types": ["f16", "q4_0"], "dims": {"m": [64], "n": [1, 8], "k": [64]}},
			  {"ops": ["flash_attn_ext"], "types": ["f16"], "dims": {"d": [64], "heads": [2], "kv_heads": [2], "n": [4], "kv": [32]}}
			]}
		EOF
		cat >"$dir/sweep-llama-7b-points.json" <<-'EOF'
			{"sweeps": [{"ops": ["rms_norm", "soft_max"], "dims": {"k": [256], "n": [4], "kv": [64], "heads": [2]}}]}
		EOF
	else
		cat >"$dir/sweep-targets-points.json" <<-'EOF'
			{"sweeps": [
			  {"ops": ["mul_mat"], "types": ["q4_0", "q8_0"], "dims": {"m": [4096], "n": [1], "k": [4096]}},
			  {"ops": ["mul_mat"], "types": ["f16"], "dims": {"m": [4096], "n": [4096], "k": [4096]}},
			  {"ops": ["flash_attn_ext"], "types": ["f16"], "dims": {"d": [128], "heads": [32], "kv_heads": [32], "n": [4096], "kv": [4096]}}
			]}
		EOF
		cat >"$dir/sweep-llama-7b-points.json" <<-'EOF'
			{"sweeps": [{"preset": "llama-7b", "types": ["q4_0", "q8_0", "f16"], "dims": {"n": [1, 512]}}]}
		EOF
	fi
	local rc=0 name share notes=""
	for name in targets llama-7b; do
		# Of the stage: 25% and 40% for our sweeps, the rest for the
		# baselines (cuBLAS 10 s at most, PyTorch what is left).
		share=$((STAGE_LIMIT * 25 / 100))
		if [ "$name" = llama-7b ]; then share=$((STAGE_LIMIT * 40 / 100)); fi
		echo "== sweep $name (${share}s)"
		timeout -k 5 "$share" "$opbench" sweep -backend "$backend" -f "$dir/sweep-$name-points.json" -time 100ms -min-samples 3 \
			-out "$dir" -name "sweep-$name" -roofline off || rc=1
		if [ ! -f "$dir/sweep-$name.json" ]; then
			notes="$notes sweep-$name wrote no records;"
			continue
		fi
		# cuBLAS on the products (opbench cublas; absent: it says so,
		# exit 0).
		timeout -k 5 10 "$opbench" cublas -f "$dir/sweep-$name.json" -json "$dir/sweep-$name-cublas.json" >"$dir/sweep-$name-cublas.txt" 2>&1 || rc=1
		cat "$dir/sweep-$name-cublas.txt"
		notes="$notes $(head -n 1 "$dir/sweep-$name-cublas.txt");"
		if ! command -v python3 >/dev/null; then
			notes="$notes no python3, no PyTorch times;"
			continue
		fi
		local left=$((STAGE_LIMIT - ($(date +%s) - STAGE_START) - 5)) torch_budget
		torch_budget=$left
		if [ "$name" = targets ]; then torch_budget=$((left / 3)); fi
		python3 scripts/torch_baseline.py "$dir/sweep-$name.json" "$dir/sweep-$name-torch.json" --budget "$((torch_budget > 5 ? torch_budget : 5))" |
			tee "$dir/sweep-$name-torch.txt" || rc=1
		notes="$notes $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("error") or "torch %s on %s, copy %.0f GB/s" % (d["torch"], d["device"], d["copy_gbps"] or 0))' "$dir/sweep-$name-torch.json" 2>&1);"
		if [ "$name" = targets ]; then notes="$notes $(grep '^summary: ' "$dir/sweep-$name-torch.txt" | tail -n 1);"; fi
	done
	if [ -n "$quick" ] && command -v python3 >/dev/null; then python3 scripts/torch_baseline.py --self-test || rc=1; fi
	echo "${notes# }" >"$dir/sweep.note"
	exit $rc
}

stage_ncu() {
	set -u
	local ncu
	ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)
	if [ -n "$emu" ] || [ -z "$ncu" ]; then
		echo "dry-run" >"$dir/ncu.status"
		echo "no ncu here, or the emulated driver: the command lines only" >"$dir/ncu.note"
		"$opbench" ncu -gpu "$gpu" -out "$dir" -dry-run
		exit $?
	fi
	local only=()
	if [ -n "$quick" ]; then only=(-only soft_max); fi
	"$opbench" ncu -gpu "$gpu" -ncu "$ncu" -out "$dir" -timeout "$(((STAGE_LIMIT - 5) / 6))s" "${only[@]}"
}

stage_gotests() {
	set -u
	local tests=${GPU_CHECK_TESTS:-^TestNVRTCCompilesEveryKernel\$}
	if [ ! -x "$bin/cuda.test" ]; then
		echo "skipped" >"$dir/gotests.status"
		echo "no $bin/cuda.test (make gpu-check-build)" >"$dir/gotests.note"
		exit 0
	fi
	if [ -n "$quick" ]; then tests='^TestNVRTCSearchOrder$'; fi
	echo "cuda.test -test.run '$tests'" >"$dir/gotests.note"
	# The test binary runs in its package's folder, as go test does.
	(cd ops/cuda && "$bin/cuda.test" -test.run "$tests" -test.v -test.timeout "$((STAGE_LIMIT - 5))s")
}

# ---------------------------------------------------------------------

# pack: the records as one tarball in $OUT (see the head of this file).
pack() {
	if [ -n "${OUT:-}" ] && [ -d "$dir" ]; then
		tar czf "$(abspath "$OUT")/gpu-check-$gpu-${dir##*/gpu-check-}.tgz" -C "$(dirname "$dir")" "$(basename "$dir")" &&
			echo "gpu-check: records packed into $OUT/gpu-check-$gpu-${dir##*/gpu-check-}.tgz" >&2
	fi
}
trap 'pack; exit 1' TERM INT

write_summary false
run_stage devinfo 15 "device, driver, tools, NVRTC, backends" stage_devinfo
run_stage kernels 45 "NVRTC: registers, spills, occupancy per kernel" stage_kernels
run_stage validate 45 "opbench validate -backend $backend" stage_validate
run_stage sanitizer 40 "compute-sanitizer memcheck, racecheck, synccheck" stage_sanitizer
run_stage sweep 80 "llama-7b preset and target points, PyTorch beside" stage_sweep
run_stage ncu 70 "Nsight Compute counters of ten kernels" stage_ncu
run_stage gotests 60 "ops/cuda's test binary" stage_gotests optional
write_summary true
echo "gpu-check: done in $(now)s; $summary" >&2
pack
exit $failed
