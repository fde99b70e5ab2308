#!/usr/bin/env bash
# One call on a machine with an NVIDIA GPU and Nsight Compute: profiles six
# cuda kernels (quantized mat-vec, int8 tile, f16 tile, flash attention
# prefill and decode, soft_max) with ncu and writes their memory and
# divergence counters to results/<gpu>/ncu-DATE.json (see
# "opbench ncu -h"). Where ncu may not read the counters
# (ERR_NVGPUCTRPERM) the record says so and the script goes on.
#
# Usage: scripts/gpu-ncu.sh [GPU-NAME] [opbench ncu flags...]
#
# GPU-NAME defaults to nvidia-smi's name of GPU 0 with spaces as dashes
# (NVIDIA-H100-80GB-HBM3). The GPU machine may have no network: build
# opbench beforehand (go build -o bin/opbench ./cmd/opbench) and bring
# bin/ along; without bin/opbench the script builds it with go.
set -euo pipefail
cd "$(dirname "$0")/.."

gpu="${1:-}"
if [ $# -gt 0 ]; then shift; fi
if [ -z "$gpu" ]; then
	if ! command -v nvidia-smi >/dev/null; then
		echo "gpu-ncu: no nvidia-smi; name the GPU: scripts/gpu-ncu.sh H100" >&2
		exit 2
	fi
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
fi
ncu=${NCU:-ncu}
if ! command -v "$ncu" >/dev/null; then
	for d in /usr/local/cuda/bin /opt/nvidia/nsight-compute/*; do
		if [ -x "$d/ncu" ]; then ncu="$d/ncu"; break; fi
	done
fi
opbench=bin/opbench
if [ ! -x "$opbench" ]; then
	mkdir -p bin
	go build -o "$opbench" ./cmd/opbench
fi
nvidia-smi -L 2>/dev/null || true
exec "$opbench" ncu -gpu "$gpu" -ncu "$ncu" -out "results/$gpu" "$@"
