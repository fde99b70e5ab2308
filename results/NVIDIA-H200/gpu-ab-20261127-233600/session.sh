#!/usr/bin/env bash
# Session-end A/B in one short call: validate B on the changed ops, the hot
# points with B and A, new types on B, the 7B decode with A and B, ncu details.
set -u
cd "$(dirname "$0")/.."
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
for d in build/gpu-ab/A build/gpu-ab/B; do for f in $d/*.gz; do gunzip -kf "$f" && chmod +x "${f%.gz}"; done; done
A=$PWD/build/gpu-ab/A; B=$PWD/build/gpu-ab/B
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
dir=$OUT/f5-$gpu; mkdir -p $dir
pack() { tar czf $OUT/f5-$gpu.tgz -C $OUT f5-$gpu && rm -rf $dir; }
trap 'pack; exit 1' TERM INT
log() { echo "[$(el)s] $*" | tee -a $dir/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; } > $dir/info.txt 2>&1
SW=results/sweeps/cuda-hot.json
log validate B
KERNBENCH_CUDA_CACHE=/tmp/cB timeout 110 $B/opbench validate -backend cuda-0 -op mul_mat,mul_mat_id,flash_attn_ext,get_rows -json $dir/validate-B.json > $dir/validate-B.txt 2>&1; log "rc=$? $(tail -n 1 $dir/validate-B.txt)"
for side in B A; do bin=$B; [ $side = A ] && bin=$A
  log sweep $side
  KERNBENCH_CUDA_CACHE=/tmp/c$side timeout 55 $bin/opbench sweep -backend cuda-0 -f $SW -time 60ms -min-samples 5 -roofline off -out $dir -name sweep-$side > $dir/sweep-$side.txt 2>&1; log "rc=$?"
done
$B/opbench compare $dir/sweep-A.json $dir/sweep-B.json > $dir/compare.txt 2>&1
if [ -n "${NEWTYPES:-}" ]; then log newtypes
  KERNBENCH_CUDA_CACHE=/tmp/cB timeout 30 $B/opbench sweep -backend cuda-0 -op mul_mat -type $NEWTYPES -m 4096 -k 4096 -n 1,512 -time 60ms -min-samples 5 -roofline off -out $dir -name newtypes > $dir/newtypes.txt 2>&1; log "rc=$?"
fi
log model
$B/mkmodel -preset llama-7b -type q4_0 -t $(nproc) -force -o /tmp/m7.gguf 2>&1 | tail -n 1 >> $dir/model.txt
for side in A B; do bin=$B; [ $side = A ] && bin=$A
  echo "== $side" >> $dir/model.txt
  KERNBENCH_CUDA_CACHE=/tmp/c$side timeout 40 $bin/run -m /tmp/m7.gguf -backend cuda-0 -bench -p 512 -n 128 -r 2 -o md > /tmp/run.log 2>&1; grep '^|' /tmp/run.log | tail -n 2 >> $dir/model.txt || tail -n 3 /tmp/run.log >> $dir/model.txt
done
log ncu
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
KERNBENCH_CUDA_CACHE=/tmp/cB timeout 80 $B/opbench ncu -gpu $gpu -ncu $ncu -out $dir -timeout 30s -details -only mmq,fa_prefill,fa_decode_q8_0,mmvq > $dir/ncu.txt 2>&1; log "rc=$?"
pack
