# kernbench: thin wrappers over the go tool. `make help` lists the targets.
GO       ?= go
PKGS     ?= ./...
BENCH    ?= .
BENCHTIME ?= 1s

.PHONY: help build test test-race validate bench lint fmt fuzz clean

help:
	@echo "build      compile every package and command"
	@echo "test       go test ./... (the CI test command)"
	@echo "test-race  go test -race on the CPU backend and harness"
	@echo "validate   opbench validate: every op case on the CPU vs the float64 reference"
	@echo "bench      go test -bench \$$(BENCH) (BENCH=MulMat BENCHTIME=2s make bench)"
	@echo "lint       gofmt -l and go vet"
	@echo "fuzz       fuzz the quant dequantizers for 60 s"

build:
	$(GO) build $(PKGS)

test:
	$(GO) test $(PKGS)

test-race:
	$(GO) test -race ./ops/... ./harness/...

validate:
	$(GO) run ./cmd/opbench validate

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) $(PKGS)

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

fmt:
	gofmt -w .

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDequantizeRow -fuzztime 60s ./quant

clean:
	$(GO) clean -testcache
