# kernbench: thin wrappers over the go tool. `make help` lists the targets.
GO       ?= go
PKGS     ?= ./...
BENCH    ?= .
BENCHTIME ?= 1s

.PHONY: help build test test-race validate bench roofline baseline gpu-counters gpu-check-build gpu-check gpu-check-dry gpu-ab-build gpu-ab ggml-side ggml-side-ops ggml-side-k14336 ggml-side-tiers ggml-side-newtypes ggml-side-float-n1 llama-models llama-side llama-models-more llama-side-more llama-models-7b llama-side-7b tier-check ppl-interop nvrtc-check cuda-iq-check metal-newtypes slurm-sweep lint fmt fuzz clean

help:
	@echo "build      compile every package and command"
	@echo "test       go test -timeout 30m ./... (the CI test command)"
	@echo "test-race  go test -race on the CPU backend and harness"
	@echo "validate   opbench validate: every op case on the CPU vs the float64 reference"
	@echo "bench      go test -bench \$$(BENCH) (BENCH=Op/MUL_MAT/q4_0 BENCHTIME=2s make bench)"
	@echo "roofline   opbench roofline: this machine's peak GFLOP/s and GB/s at 1 and 2 threads"
	@echo "baseline   the committed baseline sweeps in results/<machine>/ (see results/README.md)"
	@echo "gpu-counters  emulator counters and roofline estimates of every CUDA and Metal kernel at the llama-7b preset, in results/gpu-counters/"
	@echo "gpu-check-build  the binaries scripts/gpu-check.sh runs on a GPU machine without Go, in \$$(GPU_CHECK_BIN) (carry it)"
	@echo "gpu-check  on a GPU: device info, NVRTC report, validate, compute-sanitizer, llama-7b sweep beside PyTorch, ncu (see README)"
	@echo "gpu-check-dry  the same script against the emulated driver (cuda-emu), a tiny subset: the test of gpu-check without a GPU"
	@echo "gpu-ab-build  two builds for an A/B on a GPU: A from \$$(AB_BASE) (a commit, default HEAD), B from the working tree, gzipped into build/gpu-ab/ (carry it)"
	@echo "gpu-ab     on a GPU: validate B, sweep A and B, opbench compare, a 7B run -bench with each (scripts/gpu-ab.sh)"
	@echo "ggml-side  kernbench and ggml's test-backend-ops side by side, every op (GGML=path/to/test-backend-ops; see README; about 2 h)"
	@echo "ggml-side-ops  the same without the k=14336 matrix products (about 45 min)"
	@echo "ggml-side-k14336  the k=14336 matrix products alone, ggml-side's other half (about 40 min on a Zen 5)"
	@echo "ggml-side-tiers  the issue-25 MUL_MAT points (m=4096, k=14336, n=1 and 512) on every SIMD tier this CPU runs, beside ggml (about 15 min on a Zen 5)"
	@echo "ggml-side-newtypes  issue 26's formats (MXFP4, IQ*, TQ*), MUL_MAT n=1 and 512 (about an hour: each n=512 point takes about 4 min on 2 cores)"
	@echo "ggml-side-float-n1  f32, f16 and bf16 MUL_MAT n=1 (m=4096, k=4096 and 14336: decode streamed from DRAM) beside ggml, five rounds (about 5 min)"
	@echo "llama-models   the issue-25 side-by-side models in \$$(LLAMA_MODELS) (mkmodel presets, quantize)"
	@echo "llama-side     kernbench's run -bench and llama.cpp's llama-bench on those models, alternating (LLAMA_BENCH=path/to/llama-bench; see README)"
	@echo "llama-side-more  the same on 100m in q2_K and q3_K_M and a Mamba-2 model (llama-models-more)"
	@echo "llama-side-7b    the same on LLaMA-7B's shape in q4_0 and q4_K_M (llama-models-7b: 7.9 GB of mkmodel files, about 7 min), decode far out of any cache; shorter tests (LLAMA_7B_ARGS)"
	@echo "cuda-iq-check  every case of the MXFP4, IQ and TQ formats on cuda-emu down every kernel path (go test ./ops/cuda runs a sample)"
	@echo "nvrtc-check    every CUDA kernel through the real NVRTC for sm_80 and sm_90 (go test ./... does sm_90 only): no spills, no half-to-int conversions, blocks that fit"
	@echo "metal-newtypes every case of the issue-26 formats (mxfp4, iq4_nl, ..., iq1_m) on metal-emu (go test ./ops/metal runs a sample of them)"
	@echo "tier-check     the CPU fast paths vs the generic tier on those models: KL divergence, perplexity and greedy text (LLAMA_PERPLEXITY adds llama.cpp as a yardstick; scripts/tier-check.sh)"
	@echo "ppl-interop    issue 26's formats: perplexity of our quantized stories260K-wide in our avx2 and generic tiers and in llama-perplexity, within 0.1% (LLAMA_PERPLEXITY=path; scripts/ppl-interop.sh; about 45 min)"
	@echo "slurm-sweep  a sharded sweep as a Slurm job array, then a job that merges and plots (SWEEP='-preset llama-7b -n 1,32' SHARDS=3; see README)"
	@echo "lint       gofmt -l, go vet and staticcheck"
	@echo "fuzz       fuzz the quant dequantizers for 60 s"

build:
	$(GO) build $(PKGS)

test:
	$(GO) test -timeout 30m $(PKGS)

test-race:
	$(GO) test -race ./ops/... ./harness/...

validate:
	$(GO) run ./cmd/opbench validate

metal-newtypes:
	KERNBENCH_METAL_NEWTYPES_ALL=1 $(GO) test -run 'TestNewTypes|TestWholeBlockDecoders' -count=1 -v ./ops/metal

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) $(PKGS)

roofline:
	$(GO) run ./cmd/opbench roofline -t 1,2

baseline: roofline
	$(GO) run ./cmd/opbench sweep -op mul_mat -type q4_0,q8_0 -m 4096 -n 1,512 -k 4096 -t 2 -name baseline-mul_mat -plot
	$(GO) run ./cmd/opbench sweep -preset llama-7b -n 1,32 -tier generic,avx2 -t 2 -name baseline-llama-7b -plot

GPU_COUNTERS_N ?= 1,512

gpu-counters:
	$(GO) run ./cmd/opbench profile -backend cuda-emu -preset llama-7b -n $(GPU_COUNTERS_N) -gpu h100,a100,l4 -json results/gpu-counters/llama-7b-cuda-emu.json -csv results/gpu-counters/llama-7b-cuda-emu.csv > results/gpu-counters/llama-7b-cuda-emu.txt
	$(GO) run ./cmd/opbench profile -backend metal-emu -preset llama-7b -n $(GPU_COUNTERS_N) -gpu m2max,m3max -json results/gpu-counters/llama-7b-metal-emu.json -csv results/gpu-counters/llama-7b-metal-emu.csv > results/gpu-counters/llama-7b-metal-emu.txt

# First contact with a GPU (README, "On a GPU"): the binaries are built
# here, where Go is, and carried to the GPU machine, which has none.
GPU_CHECK_BIN     ?= build/gpu-check
GPU_CHECK_DRY_OUT ?= build/gpu-check-dry

gpu-check-build:
	@mkdir -p $(GPU_CHECK_BIN)
	CGO_ENABLED=0 $(GO) build -buildvcs=true -trimpath -ldflags='-s -w' -o $(GPU_CHECK_BIN)/opbench ./cmd/opbench
	CGO_ENABLED=0 $(GO) test -c -trimpath -ldflags='-s -w' -o $(GPU_CHECK_BIN)/cuda.test ./ops/cuda
	@du -sh $(GPU_CHECK_BIN)

# No go here: the binaries must be in $(GPU_CHECK_BIN) already.
gpu-check:
	GPU_CHECK_BIN=$(GPU_CHECK_BIN) scripts/gpu-check.sh

gpu-check-dry: gpu-check-build
	rm -rf $(GPU_CHECK_DRY_OUT)
	GPU_CHECK_BIN=$(GPU_CHECK_BIN) GPU_CHECK_BUDGET=3000 GPU_CHECK_SCALE=10 scripts/gpu-check.sh -emu -quick -out $(GPU_CHECK_DRY_OUT)
	scripts/gpu-check.sh -check $(GPU_CHECK_DRY_OUT)/results/cuda-emu/gpu-check-*/summary.json

# An A/B on a GPU (scripts/gpu-ab.sh): A is built from the commit AB_BASE
# in a temporary shared clone (go build stamped no commit into a binary
# built in a git worktree here, so its records named the device's tree),
# B from this working tree; gzipped, since the device tool carries at
# most 64 MiB.
AB_BASE ?= HEAD
AB_DIR  ?= build/gpu-ab

gpu-ab-build:
	rm -rf $(AB_DIR) && mkdir -p $(AB_DIR)/A $(AB_DIR)/B
	tmp=$$(mktemp -d) && git clone -q --shared --no-checkout . $$tmp/a && git -C $$tmp/a checkout -q --detach $(AB_BASE) && \
		(cd $$tmp/a && for c in opbench run; do CGO_ENABLED=0 $(GO) build -buildvcs=true -trimpath -ldflags='-s -w' -o $(abspath $(AB_DIR))/A/$$c ./cmd/$$c || exit 1; done); \
		st=$$?; rm -rf $$tmp; exit $$st
	for c in opbench run mkmodel; do CGO_ENABLED=0 $(GO) build -buildvcs=true -trimpath -ldflags='-s -w' -o $(AB_DIR)/B/$$c ./cmd/$$c || exit 1; done
	gzip -9 $(AB_DIR)/A/* $(AB_DIR)/B/*
	@du -sh $(AB_DIR)

gpu-ab:
	GPU_AB_A=$(AB_DIR)/A GPU_AB_B=$(AB_DIR)/B scripts/gpu-ab.sh

GGML ?= $(KERNBENCH_GGML)

ggml-side:
	@if [ -z "$(GGML)" ]; then echo "set GGML=path/to/test-backend-ops (see README, Side by side with ggml)"; exit 2; fi
	$(GO) run ./cmd/opbench ggml -ggml $(GGML) -f results/sweeps/ggml-side-by-side.json -name ggml-side-by-side -plot

# The matrix products on every SIMD tier this CPU runs (avx2, and avx512
# and vnni where the CPU has AVX-512) beside ggml's; SIMD_TIERS are the
# cpu-* backends opbench backends marks available, generic left out.
SIMD_TIERS ?= $(shell $(GO) run ./cmd/opbench backends 2>/dev/null | awk '$$1 ~ /^cpu-/ && $$1 != "cpu-generic" && $$2 == "yes" {printf "%s%s", s, $$1; s=","}')
ggml-side-tiers:
	@if [ -z "$(GGML)" ]; then echo "set GGML=path/to/test-backend-ops (see README, Side by side with ggml)"; exit 2; fi
	$(GO) run ./cmd/opbench ggml -ggml $(GGML) -f results/sweeps/ggml-side-by-side-tiers.json -backend $(SIMD_TIERS) -rounds 4 -name ggml-side-by-side-tiers

ggml-side-newtypes:
	@if [ -z "$(GGML)" ]; then echo "set GGML=path/to/test-backend-ops (see README, Side by side with ggml)"; exit 2; fi
	$(GO) run ./cmd/opbench ggml -ggml $(GGML) -f results/sweeps/ggml-side-by-side-newtypes.json -rounds 3 -name ggml-side-by-side-newtypes

ggml-side-ops:
	@if [ -z "$(GGML)" ]; then echo "set GGML=path/to/test-backend-ops (see README, Side by side with ggml)"; exit 2; fi
	$(GO) run ./cmd/opbench ggml -ggml $(GGML) -f results/sweeps/ggml-side-by-side-ops.json -name ggml-side-by-side-ops -plot

ggml-side-float-n1:
	@if [ -z "$(GGML)" ]; then echo "set GGML=path/to/test-backend-ops (see README, Side by side with ggml)"; exit 2; fi
	$(GO) run ./cmd/opbench ggml -ggml $(GGML) -f results/sweeps/ggml-side-by-side-float-n1.json -rounds 5 -name ggml-side-by-side-float-n1

ggml-side-k14336:
	@if [ -z "$(GGML)" ]; then echo "set GGML=path/to/test-backend-ops (see README, Side by side with ggml)"; exit 2; fi
	$(GO) run ./cmd/opbench ggml -ggml $(GGML) -f results/sweeps/ggml-side-by-side-k14336.json -name ggml-side-by-side-k14336

# The whole-model side by side with llama.cpp (README, "Side by side with
# llama.cpp"). The models are made once into LLAMA_MODELS (outside the
# repository); LLAMA_ARGS are opbench llama's flags.
LLAMA_BENCH  ?= $(KERNBENCH_LLAMA_BENCH)
LLAMA_MODELS ?= /tmp/kernbench-llama-models
LLAMA_ARGS   ?= -p 512 -n 128 -r 3 -rounds 2
LLAMA_NAME   ?= llama-side-by-side
TESTDATA     ?= $(firstword $(wildcard ../shared/testdata ../../shared/testdata ../../../shared/testdata))
LLAMA_FILES   = $(TESTDATA)/stories260K.gguf $(addprefix $(LLAMA_MODELS)/,100m-q4_0.gguf 100m-q4_K_M.gguf moe-100m-q4_0.gguf mamba-24x768-f16.gguf gpt-oss-100m-f16.gguf 100m-bf16.gguf)

llama-models: $(LLAMA_FILES)

# Beyond the six: the q2_K and q3_K kernels in a decode, and Mamba-2.
LLAMA_MORE_FILES = $(addprefix $(LLAMA_MODELS)/,100m-q2_K.gguf 100m-q3_K_M.gguf mamba2-24x768-f16.gguf)
LLAMA_MORE_NAME ?= llama-side-by-side-more

llama-models-more: $(LLAMA_MORE_FILES)

# A real-sized decode: LLaMA-7B's shape (6.7B parameters, 3.8-4.1 GB a
# file), whose weights no cache holds, so both sides stream them from
# DRAM; mkmodel writes the 4-bit files directly (no 13 GB f16 file).
LLAMA_7B_FILES = $(addprefix $(LLAMA_MODELS)/,llama-7b-q4_0.gguf llama-7b-q4_K_M.gguf)
LLAMA_7B_ARGS ?= -p 128 -n 64 -r 2 -rounds 3
LLAMA_7B_NAME ?= llama-side-by-side-7b

llama-models-7b: $(LLAMA_7B_FILES)

$(LLAMA_7B_FILES): $(LLAMA_MODELS)/llama-7b-%.gguf:
	@mkdir -p $(LLAMA_MODELS)
	$(GO) run ./cmd/mkmodel -o $@ -preset llama-7b -type $* -force

# Keep the f16 files the quantized ones are made from.
.SECONDARY: $(LLAMA_MODELS)/100m-f16.gguf $(LLAMA_MODELS)/moe-100m-f16.gguf

$(LLAMA_MODELS)/100m-bf16.gguf:
	@mkdir -p $(LLAMA_MODELS)
	$(GO) run ./cmd/mkmodel -o $@ -preset 100m -type bf16

$(LLAMA_MODELS)/%-f16.gguf:
	@mkdir -p $(LLAMA_MODELS)
	$(GO) run ./cmd/mkmodel -o $@ -preset $* -type f16

$(addprefix $(LLAMA_MODELS)/,100m-q4_0.gguf 100m-q4_K_M.gguf 100m-q2_K.gguf 100m-q3_K_M.gguf): $(LLAMA_MODELS)/100m-%.gguf: $(LLAMA_MODELS)/100m-f16.gguf
	$(GO) run ./cmd/quantize $< $@ $*

$(LLAMA_MODELS)/moe-100m-q4_0.gguf: $(LLAMA_MODELS)/moe-100m-%.gguf: $(LLAMA_MODELS)/moe-100m-f16.gguf
	$(GO) run ./cmd/quantize $< $@ $*

llama-side: llama-models
	@if [ -z "$(LLAMA_BENCH)" ]; then echo "set LLAMA_BENCH=path/to/llama-bench (see README, Side by side with llama.cpp)"; exit 2; fi
	@if [ ! -f "$(TESTDATA)/stories260K.gguf" ]; then echo "no shared/testdata/stories260K.gguf above this folder: set TESTDATA"; exit 2; fi
	$(GO) build -o $(LLAMA_MODELS)/run ./cmd/run
	$(GO) run ./cmd/opbench llama -llama-bench $(LLAMA_BENCH) -run $(LLAMA_MODELS)/run $(LLAMA_ARGS) -name $(LLAMA_NAME) $(LLAMA_FILES)

llama-side-more: llama-models-more
	@if [ -z "$(LLAMA_BENCH)" ]; then echo "set LLAMA_BENCH=path/to/llama-bench (see README, Side by side with llama.cpp)"; exit 2; fi
	$(GO) build -o $(LLAMA_MODELS)/run ./cmd/run
	$(GO) run ./cmd/opbench llama -llama-bench $(LLAMA_BENCH) -run $(LLAMA_MODELS)/run $(LLAMA_ARGS) -name $(LLAMA_MORE_NAME) $(LLAMA_MORE_FILES)

llama-side-7b: llama-models-7b
	@if [ -z "$(LLAMA_BENCH)" ]; then echo "set LLAMA_BENCH=path/to/llama-bench (see README, Side by side with llama.cpp)"; exit 2; fi
	$(GO) build -o $(LLAMA_MODELS)/run ./cmd/run
	$(GO) run ./cmd/opbench llama -llama-bench $(LLAMA_BENCH) -run $(LLAMA_MODELS)/run $(LLAMA_7B_ARGS) -name $(LLAMA_7B_NAME) $(LLAMA_7B_FILES)

# The CPU's fast paths against its generic tier on the issue-25 models
# (scripts/tier-check.sh): the KL divergence and perplexity.
# LLAMA_PERPLEXITY (llama.cpp's llama-perplexity) adds its KL divergence
# from the same reference as a yardstick.
TIER_OUT ?= $(LLAMA_MODELS)/tier-check.md
LLAMA_PERPLEXITY ?= $(KERNBENCH_LLAMA_PERPLEXITY)

tier-check: llama-models
	$(GO) build -o $(LLAMA_MODELS)/run ./cmd/run
	$(GO) build -o $(LLAMA_MODELS)/perplexity ./cmd/perplexity
	TIER_RUN=$(LLAMA_MODELS)/run TIER_PERPLEXITY=$(LLAMA_MODELS)/perplexity TIER_TEXT=$(TESTDATA)/wiki.test.raw TIER_OUT=$(TIER_OUT) TIER_LLAMA_PERPLEXITY=$(LLAMA_PERPLEXITY) \
		scripts/tier-check.sh $(LLAMA_FILES)

# Issue 26's formats in kernbench's perplexity and llama.cpp's
# (scripts/ppl-interop.sh): stories260K-wide quantized by our quantize.
PPLI_DIR ?= $(LLAMA_MODELS)
PPLI_OUT ?= $(PPLI_DIR)/ppl-interop.md

ppl-interop:
	@if [ -z "$(LLAMA_PERPLEXITY)" ]; then echo "set LLAMA_PERPLEXITY=path/to/llama-perplexity (see README, Side by side with llama.cpp)"; exit 2; fi
	mkdir -p $(PPLI_DIR)
	$(GO) build -o $(PPLI_DIR)/perplexity ./cmd/perplexity
	$(GO) build -o $(PPLI_DIR)/quantize ./cmd/quantize
	PPLI_PERPLEXITY=$(PPLI_DIR)/perplexity PPLI_QUANTIZE=$(PPLI_DIR)/quantize PPLI_LLAMA_PERPLEXITY=$(LLAMA_PERPLEXITY) \
		PPLI_TEXT=$(TESTDATA)/wiki.test.raw PPLI_MODEL=$(TESTDATA)/stories260K-wide.gguf PPLI_OUT=$(PPLI_OUT) \
		scripts/ppl-interop.sh

# Every CUDA kernel through NVRTC for both targets (the default test
# compiles for sm_90 alone, to keep go test ./... short).
nvrtc-check:
	KERNBENCH_NVRTC_ARCHS=sm_80,sm_90 KERNBENCH_STRICT=1 $(GO) test -count=1 -timeout 30m -run '^TestNVRTCCompilesEveryKernel$$' ./ops/cuda

# Every GET_ROWS, MUL_MAT and MUL_MAT_ID case of the issue-26 formats on
# cuda-emu, down every path (go test runs a sample).
cuda-iq-check:
	KERNBENCH_CUDA_IQ_FULL=1 $(GO) test -count=1 -timeout 30m -run '^TestIQKernels$$' ./ops/cuda

# A sharded sweep on a Slurm cluster (README, "Sweeps on a cluster"):
# SWEEP is opbench sweep's flags or a sweep file, SHARDS the array's size;
# RUN_DIR, OUT, NAME, SBATCH_ARGS and OPBENCH are read by the script.
SHARDS ?= 3

slurm-sweep:
	@if [ -z "$(SWEEP)" ]; then echo "set SWEEP to opbench sweep's flags or a sweep file, SHARDS to the number of shards (see README, Sweeps on a cluster)"; exit 2; fi
	SWEEP='$(SWEEP)' SHARDS='$(SHARDS)' scripts/slurm-sweep.sh submit

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

fmt:
	gofmt -w .

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDequantizeRow -fuzztime 60s ./quant

clean:
	$(GO) clean -testcache
