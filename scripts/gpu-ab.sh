#!/usr/bin/env bash
# A/B on a GPU in one call: two builds of opbench and run (A, the
# baseline; B, the change) on the same warm GPU, so that every ratio comes
# from one machine and one session:
#
#   validate   B's opbench validate -backend cuda-0 (every case)
#   sweep      the sweep file (default results/sweeps/gpu-ab.json: the
#              token path's mat-vecs, the prompt's tile products, flash
#              attention for decode and prefill) with A, then B, then
#              opbench compare A B (B's speed over A's, per point)
#   model      mkmodel's preset (GPU_AB_PRESET, llama-7b; GPU_AB_TYPE,
#              q4_0), then run -bench -p 512 -n 128 with A and B
#              alternating, once per variant: GPU_AB_VARIANTS is a
#              ';'-separated list of environment settings ("" is the
#              default; e.g. "KERNBENCH_CUDA_GRAPHS=off;")
#   ncu        B's opbench ncu (skipped without ncu)
#
# Usage: GPU_AB_A=build/gpu-base GPU_AB_B=build/gpu-check scripts/gpu-ab.sh
#
# A folder holds opbench and run (B also mkmodel), plain or gzipped
# (NAME.gz is unpacked next to it: the device tool carries at most 64
# MiB). Each build keeps its own kernel cache, so each compiles once.
# Records go to $OUT/gpu-ab-<gpu>-DATE/ packed as $OUT/gpu-ab-<gpu>-DATE.tgz
# (the device tool brings back nothing deeper than two folders), or to
# results/<gpu>/gpu-ab-DATE/ without $OUT. GPU_AB_STEPS picks steps
# (default "validate sweep model ncu"); GPU_AB_BACKEND, cuda-0;
# GPU_AB_TIME, each sweep point's measured time (default 100ms);
# GPU_AB_NCU_ARGS, more flags for opbench ncu (e.g. "-details -only
# mmq,fa_prefill": the sections and the instructions per mma).
#
# Time on an H200 (2026-11-27): validate 5 s; each sweep of the default
# file 40-75 s (the first points compile kernels); mkmodel 11 s; each
# run -bench 10-15 s; ncu about 20 s. All steps with one variant: about
# 200 s, plus the machine's start (about 40 s). Run the whole script under
# `timeout -s TERM` a little inside the call's limit: a stopped run still
# packs what it wrote.
set -uo pipefail
cd "$(dirname "$0")/.."
a=${GPU_AB_A:?set GPU_AB_A to the baseline binaries folder}
b=${GPU_AB_B:?set GPU_AB_B to the changed binaries folder}
sweep=${GPU_AB_SWEEP:-results/sweeps/gpu-ab.json}
backend=${GPU_AB_BACKEND:-cuda-0}
steps=${GPU_AB_STEPS:-validate sweep model ncu}
preset=${GPU_AB_PRESET:-llama-7b}
mtype=${GPU_AB_TYPE:-q4_0}
variants=${GPU_AB_VARIANTS:-}
ptime=${GPU_AB_TIME:-100ms}

for d in "$a" "$b"; do
	for f in "$d"/*.gz; do
		[ -e "$f" ] || continue
		gunzip -kf "$f" && chmod +x "${f%.gz}"
	done
	for t in opbench run; do
		if [ ! -x "$d/$t" ]; then echo "gpu-ab: no $d/$t" >&2; exit 2; fi
	done
done
a=$(cd "$a" && pwd)
b=$(cd "$b" && pwd)

gpu=unknown-gpu
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
fi
stamp=$(date -u +%Y%m%d-%H%M%S)
if [ -n "${OUT:-}" ]; then dir=$OUT/gpu-ab-$gpu-$stamp; else dir=results/$gpu/gpu-ab-$stamp; fi
mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)
pack() {
	if [ -n "${OUT:-}" ]; then
		tar czf "$dir.tgz" -C "$(dirname "$dir")" "$(basename "$dir")" && rm -rf "$dir" &&
			echo "gpu-ab: records packed into $dir.tgz" >&2
	fi
}
trap 'pack; exit 1' TERM INT
cache() { echo "${TMPDIR:-/tmp}/kernbench-gpu-ab-cache-$1"; }
{
	echo "gpu-ab: $gpu, backend $backend, A=$a B=$b, sweep $sweep, steps: $steps"
	date -u
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>/dev/null
	for d in "$a" "$b"; do echo "$d: $(ls -l "$d" | tail -n +2 | awk '{print $NF, $5}' | tr '\n' ' ')"; done
} | tee "$dir/info.txt" >&2

rc=0
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }

if has validate; then
	echo "== validate (B)" >&2
	KERNBENCH_CUDA_CACHE=$(cache B) "$b/opbench" validate -backend "$backend" -json "$dir/validate-B.json" >"$dir/validate-B.txt" 2>&1 || rc=1
	tail -n 3 "$dir/validate-B.txt" >&2
fi

if has sweep; then
	for side in A B; do
		bin=$a
		[ "$side" = B ] && bin=$b
		echo "== sweep ($side)" >&2
		KERNBENCH_CUDA_CACHE=$(cache $side) "$bin/opbench" sweep -backend "$backend" -f "$sweep" -time "$ptime" -min-samples 5 \
			-roofline off -out "$dir" -name "sweep-$side" >"$dir/sweep-$side.txt" 2>&1 || rc=1
	done
	"$b/opbench" compare "$dir/sweep-A.json" "$dir/sweep-B.json" | tee "$dir/compare.txt" >&2 || rc=1
fi

if has model; then
	if [ -x "$b/mkmodel" ]; then
		model=${TMPDIR:-/tmp}/gpu-ab-$preset-$mtype.gguf
		[ -f "$model" ] || "$b/mkmodel" -preset "$preset" -type "$mtype" -t "$(nproc)" -force -o "$model" 2>&1 | tail -n 1 >&2
		# One variant per ';'-separated field, empty ones included.
		while IFS= read -r v; do
			for side in A B; do
				bin=$a
				[ "$side" = B ] && bin=$b
				echo "== run -bench ($side${v:+, $v})" | tee -a "$dir/model.txt" >&2
				if env $v KERNBENCH_CUDA_CACHE="$(cache $side)" timeout 120 "$bin/run" -m "$model" -backend "$backend" \
					-bench -p 512 -n 128 -r 3 -o md >"$dir/run.log" 2>&1; then
					grep '^|' "$dir/run.log" | tail -n 2 | tee -a "$dir/model.txt" >&2
				else
					rc=1
					tail -n 3 "$dir/run.log" | tee -a "$dir/model.txt" >&2
				fi
			done
		done < <(printf '%s\n' "${variants//;/$'\n'}")
		rm -f "$dir/run.log"
	else
		echo "gpu-ab: no $b/mkmodel: model step skipped" >&2
	fi
fi

if has ncu; then
	ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
	if [ -n "$ncu" ]; then
		echo "== ncu (B)" >&2
		# shellcheck disable=SC2086 # GPU_AB_NCU_ARGS is a list of flags
		KERNBENCH_CUDA_CACHE=$(cache B) "$b/opbench" ncu -gpu "$gpu" -ncu "$ncu" -out "$dir" -timeout 60s ${GPU_AB_NCU_ARGS:-} >"$dir/ncu.txt" 2>&1 || rc=1
		tail -n 3 "$dir/ncu.txt" >&2
	else
		echo "gpu-ab: no ncu: skipped" >&2
	fi
fi
pack
exit $rc
