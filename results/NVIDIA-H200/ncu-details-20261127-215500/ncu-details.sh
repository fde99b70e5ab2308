#!/usr/bin/env bash
# Nsight Compute details (stall reasons, occupancy, pipes) on the kernels to tune next.
set -u
cd "$(dirname "$0")/.."
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
for f in build/gpu-ab/B/*.gz; do gunzip -kf "$f" && chmod +x "${f%.gz}"; done
B=$PWD/build/gpu-ab/B
dir=$OUT/ncu5; mkdir -p $dir
pack() { tar czf $OUT/ncu5.tgz -C $OUT ncu5 && rm -rf $dir; }
trap 'pack; exit 1' TERM INT
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SchedulerStats --section InstructionStats"
prof() { name=$1; kre=$2; shift 2
  echo "[$(el)s] $name" | tee -a $dir/steps.txt
  KERNBENCH_CUDA_CACHE=/tmp/cB timeout 90 $ncu $SEC --kernel-name "regex:$kre" --launch-count 1 -o $dir/$name -f \
    $B/opbench sweep -backend cuda-0 -time 1ms -min-samples 3 -ref-budget -1 -roofline off -out /tmp/ncuw -name $name "$@" > $dir/$name.log 2>&1
  echo "rc=$?" >> $dir/steps.txt
  $ncu --import $dir/$name.ncu-rep --csv --page details > $dir/$name.csv 2>&1
}
prof mmq 'kb_mmq(128)?_q4_0' -op mul_mat -type q4_0 -m 4096 -k 4096 -n 512
prof fa_prefill 'kb_flash_attn_mma_' -op flash_attn_ext -type f16 -d 128 -heads 32 -kv_heads 8 -n 512 -kv 4096
prof fa_prefill_q8 'kb_flash_attn_mma_' -op flash_attn_ext -type q8_0 -d 128 -heads 32 -kv_heads 8 -n 512 -kv 4096
prof fa_decode_q8 'kb_flash_attn_vec_q8_0_' -op flash_attn_ext -type q8_0 -d 128 -heads 32 -kv_heads 8 -n 1 -kv 4096
prof mmvq 'kb_mmvq1?_q4_0' -op mul_mat -type q4_0 -m 4096 -k 4096 -n 1
prof mmh 'kb_mmh128x[0-9]+(w4)?_f16' -op mul_mat -type f16 -m 4096 -k 4096 -n 512
pack
