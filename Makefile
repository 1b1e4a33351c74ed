# burstpool: shared, warm, burstable node pools for query engines.
# `make help` lists every target.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO       ?= go
OUTPUT   ?= _output
GOTEST   ?= $(GO) test -count=1
BENCH    ?= .
# Every package of this module that has a benchmark (the tools and
# test/promrules are modules of their own).
BENCHPKG ?= $(addprefix ./,$(sort $(dir $(shell git grep -l -E '^func Benchmark' -- '*_test.go' ':!tools/' ':!test/promrules/'))))


.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Build every pinned binary the suites run (cached by version; slow only the first time).
	hack/tool.sh all

.PHONY: generate
generate: ## Regenerate deep copies, CRDs, the XRD and the function input CRD.
	$(GO) generate ./...

.PHONY: build
build: ## Build the function, the capacity provider and the helper binaries into _output/bin.
	mkdir -p $(OUTPUT)/bin
	CGO_ENABLED=0 $(GO) build -trimpath -o $(OUTPUT)/bin/ ./functions/... ./cmd/...

# The end-to-end suite is the longest package by far: it is named first so
# that go test, which starts packages in the order given, begins it at once
# and runs the others beside it rather than before it.
.PHONY: test
test: ## Run every test: unit, integration (real API server), render and end to end.
	hack/tool.sh all
	KUBEBUILDER_ASSETS=$$(hack/tool.sh envtest) $(GOTEST) -timeout 40m ./test/e2e/ $$($(GO) list ./... | grep -v '/test/e2e$$')
	$(MAKE) --no-print-directory promrules
	$(MAKE) --no-print-directory bench-once
	hack/render.sh
	hack/validate.sh apis/definition.yaml apis/composition.yaml crossplane.yaml package/function/crossplane.yaml package/provider/crossplane.yaml
	hack/validate-node-iam.sh --rendered
	@echo "make test: all suites passed"

# The packages below whose tests need binaries, and so run in `make test`
# only: internal/controller/... (the controllers on envtest's kube-apiserver
# and etcd) and test/harness/fnrun (the function composing from what an
# envtest API server holds).
.PHONY: unit
unit: ## Run the tests that need no binaries (pure packages).
	$(GOTEST) $$($(GO) list ./internal/... ./functions/... ./build/... ./test/fixture/... ./test/harness/... ./test/reference/... ./test/layout/... | grep -Ev '/internal/controller(/|$$)|/test/harness/fnrun$$')
	$(MAKE) --no-print-directory promrules

# test/promrules is a module of its own: Prometheus's go.mod would raise
# the Kubernetes, gRPC and OpenTelemetry versions the shipped binaries
# build with.
.PHONY: promrules
promrules: ## Load the example PrometheusRule into Prometheus's rule checker (rulefmt, the PromQL parser).
	cd test/promrules && $(GOTEST) ./...

.PHONY: e2e
e2e: ## Run the end-to-end suite on a local control plane.
	hack/tool.sh all
	$(GOTEST) -timeout 30m -v ./test/e2e/...

# Apart from the test run: go test runs test binaries one at a time when
# -bench is set.
.PHONY: bench-once
bench-once: ## Run every benchmark once (-benchtime=1x), so that none rots unseen: fails when one fails.
	$(GOTEST) -run '^$$' -bench . -benchtime=1x $(BENCHPKG)

.PHONY: bench
bench: ## Run the benchmarks of the pure cores and the function.
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(BENCHPKG)

# The size of the capacity provider's load test (TestLoad): executors,
# nodes and pools, from the test's own variables when they are set. The
# timeout grows with the size: 20 minutes, and one more for every 5,000
# executors.
LOADTEST_PODS    ?= $(or $(BURSTPOOL_LOADTEST_PODS),10000)
LOADTEST_NODES   ?= $(or $(BURSTPOOL_LOADTEST_NODES),1000)
LOADTEST_POOLS   ?= $(or $(BURSTPOOL_LOADTEST_POOLS),40)
LOADTEST_TIMEOUT ?= $(shell echo $$(( 20 + $(LOADTEST_PODS) / 5000 )))m

.PHONY: loadtest
loadtest: loadtest-provider ## Load the capacity provider with 10,000 executors (LOADTEST_PODS, _NODES, _POOLS), and the function with 10,000 QueryServices, on a real API server.
	KUBEBUILDER_ASSETS=$$(hack/tool.sh envtest) BURSTPOOL_LOADTEST=1 $(GOTEST) -timeout 20m -run TestTenOfTenThousandAPIServer -v ./functions/pool-compose/

.PHONY: loadtest-provider
loadtest-provider: ## Load the capacity provider (its binary, as a process) with LOADTEST_PODS executors on LOADTEST_NODES nodes in LOADTEST_POOLS pools; prints convergence, RSS and heap per executor.
	KUBEBUILDER_ASSETS=$$(hack/tool.sh envtest) BURSTPOOL_LOADTEST=1 BURSTPOOL_LOADTEST_PODS=$(LOADTEST_PODS) \
		BURSTPOOL_LOADTEST_NODES=$(LOADTEST_NODES) BURSTPOOL_LOADTEST_POOLS=$(LOADTEST_POOLS) \
		$(GOTEST) -timeout $(LOADTEST_TIMEOUT) -run '^TestLoad$$' -v ./internal/controller/poolcapacity/

.PHONY: loadtest-100k
loadtest-100k: ## Load the capacity provider with 100,000 executors on 10,000 nodes in 1,000 pools (about 10 minutes).
	$(MAKE) --no-print-directory loadtest-provider LOADTEST_PODS=100000 LOADTEST_NODES=10000 LOADTEST_POOLS=1000

.PHONY: render
render: ## Render every examples/render scenario with crossplane render and validate the output.
	hack/render.sh

.PHONY: validate
validate: ## Validate the XRD, Composition and package metadata with crossplane beta validate, offline.
	hack/validate.sh apis/definition.yaml apis/composition.yaml crossplane.yaml package/function/crossplane.yaml package/provider/crossplane.yaml

.PHONY: package
package: ## Build the Configuration, Function and Provider packages (.xpkg) into _output/packages.
	hack/package.sh

.PHONY: release
release: ## Build and push every package and the warmup image for linux/amd64 and linux/arm64: make release VERSION=v0.1.0 REGISTRY=ghcr.io/burstpool.
	VERSION=$(VERSION) REGISTRY=$(REGISTRY) hack/release.sh

.PHONY: demo
demo: ## Bring up a local control plane, install burstpool and burst a pool (the main job).
	hack/tool.sh all
	$(GO) run ./test/cmd/demo --dir $(OUTPUT)/demo

.PHONY: demo-down
demo-down: ## Stop the local control plane that make demo started.
	$(GO) run ./test/cmd/demo --dir $(OUTPUT)/demo down

.PHONY: lint
lint: ## Run golangci-lint (.golangci.yml).
	$$(hack/tool.sh golangci-lint) run ./...

.PHONY: verify
verify: ## Tidy, regenerate, vet, lint and format, then fail if anything changed.
	$(GO) mod tidy
	cd test/promrules && $(GO) mod tidy && $(GO) vet ./...
	$(GO) generate ./...
	$(GO) vet ./...
	$$(hack/tool.sh golangci-lint) run ./...
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	git diff --exit-code

.PHONY: bench-grpc
bench-grpc: ## Benchmark the pool-compose binary over gRPC on loopback against three floors and function-go-templating (minutes; prints a table).
	gt=$$(hack/tool.sh function-go-templating) && \
	BURSTPOOL_GO_TEMPLATING=$$gt BURSTPOOL_BENCH_GRPC=1 $(GOTEST) -timeout 30m -run '^TestGRPCBench$$' -v ./functions/pool-compose/

.PHONY: soak
soak: ## Burst several pools at random for SOAK_ARGS' --duration (default 10m) while the leading provider replica is killed every 90 s; prints RSS over time and checks counts, cost and composed objects at the end.
	hack/tool.sh all
	$(GO) run ./test/cmd/soak --dir $(OUTPUT)/soak $(SOAK_ARGS)

.PHONY: bench-warm
bench-warm: ## Replay a week of demand (examples/warm) under each warm policy on a simulated cloud: warm-slot cost, warm starts, p50/p90 to Running (prints a table); then eight more weeks of the same shape, and Scheduled at other levels (a minute or two).
	$(GOTEST) -run '^$$' -bench '^BenchmarkReplayWeek$$' -benchtime=1x ./test/warmweek/
	$(GOTEST) -timeout 20m -run '^TestOtherWeeks$$' -v ./test/warmweek/

.PHONY: bench-burst
bench-burst: ## Measure burst latency (executor pod to Running) on the local control plane with modelled node launch and image pull, cold vs pools with and without warm slots (minutes; prints a table).
	hack/tool.sh all
	$(GO) run ./test/cmd/benchburst --dir $(OUTPUT)/bench-burst $(BENCH_BURST_ARGS)
