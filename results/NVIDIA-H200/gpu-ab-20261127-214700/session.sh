#!/usr/bin/env bash
# One device call: validate B, A/B sweep of the session-4 kernels, variants,
# torch beside B, 7B model A/B, ncu on the new targets. Records in $OUT.
set -u
cd "$(dirname "$0")/.."
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
for d in build/gpu-ab/A build/gpu-ab/B; do for f in $d/*.gz; do gunzip -kf "$f" && chmod +x "${f%.gz}"; done; done
A=$PWD/build/gpu-ab/A; B=$PWD/build/gpu-ab/B
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
dir=$OUT/s5-$gpu; mkdir -p $dir
pack() { tar czf $OUT/s5-$gpu.tgz -C $OUT s5-$gpu && rm -rf $dir; }
trap 'pack; exit 1' TERM INT
SW=results/sweeps/cuda-fa-mmq-mmid.json
log() { echo "[$(el)s] $*" | tee -a $dir/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv; nproc; } > $dir/info.txt 2>&1
log validate B
KERNBENCH_CUDA_CACHE=/tmp/cB timeout 170 $B/opbench validate -backend cuda-0 -json $dir/validate-B.json > $dir/validate-B.txt 2>&1; log "rc=$? $(tail -n 2 $dir/validate-B.txt | tr '\n' ' ')"
for side in B A; do bin=$B; [ $side = A ] && bin=$A
  log sweep $side
  KERNBENCH_CUDA_CACHE=/tmp/c$side timeout 130 $bin/opbench sweep -backend cuda-0 -f $SW -time 100ms -min-samples 5 -roofline off -out $dir -name sweep-$side > $dir/sweep-$side.txt 2>&1; log "rc=$?"
done
$B/opbench compare $dir/sweep-A.json $dir/sweep-B.json > $dir/compare.txt 2>&1
log torch
timeout 60 python3 scripts/torch_baseline.py $dir/sweep-B.json $dir/sweep-B-torch.json --budget 45 > $dir/sweep-B-torch.txt 2>&1; log "rc=$?"
log variants
KERNBENCH_CUDA_CACHE=/tmp/cB KERNBENCH_CUDA_MMQ_SPLIT=1 timeout 40 $B/opbench sweep -backend cuda-0 -op mul_mat -type q4_0,q8_0 -m 4096 -k 4096,14336 -n 16,32,64 -time 100ms -min-samples 5 -roofline off -out $dir -name split1 > $dir/split1.txt 2>&1
KERNBENCH_CUDA_CACHE=/tmp/cB KERNBENCH_CUDA_HTILE=64x64 timeout 30 $B/opbench sweep -backend cuda-0 -op mul_mat_id -type f16,q4_0 -m 4096 -k 4096 -experts 8 -used 2 -n 32,512 -time 100ms -min-samples 5 -roofline off -out $dir -name mmid64 > $dir/mmid64.txt 2>&1
log "variants done"
log model
$B/mkmodel -preset llama-7b -type q4_0 -t $(nproc) -force -o /tmp/m7.gguf 2>&1 | tail -n 1 >> $dir/model.txt
for v in "" "KERNBENCH_CUDA_GRAPHS=off"; do for side in A B; do bin=$B; [ $side = A ] && bin=$A
  echo "== $side ${v}" >> $dir/model.txt
  env $v KERNBENCH_CUDA_CACHE=/tmp/c$side timeout 60 $bin/run -m /tmp/m7.gguf -backend cuda-0 -bench -p 512 -n 128 -r 3 -o md > /tmp/run.log 2>&1; grep '^|' /tmp/run.log | tail -n 2 >> $dir/model.txt || tail -n 3 /tmp/run.log >> $dir/model.txt
done; done
log "model done"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
log ncu
KERNBENCH_CUDA_CACHE=/tmp/cB timeout 100 $B/opbench ncu -gpu $gpu -ncu $ncu -out $dir -timeout 25s -only fa_prefill,mmq_splitk,mmq_splitk_sum,fa_decode_q8_0,mmid_f16,mmq,fa_decode > $dir/ncu.txt 2>&1; log "rc=$? $(tail -n 2 $dir/ncu.txt)"
pack
