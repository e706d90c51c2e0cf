# kubectl fleet. `make demo` runs the plugin on the sandbox fleet; `make test`
# runs every test. Both build what they need first: etcd, kube-apiserver and
# golangci-lint from the Go module proxy, the MCP clients from npm, cached in
# bin/.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

MODULE       := github.com/kubectl-fleet/kubectl-fleet
BIN          := $(CURDIR)/bin
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT       ?= $(shell git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)
DATE         ?= $(shell git log -1 --format=%cI 2>/dev/null | grep . || echo unknown)
LDFLAGS      := -s -w -X $(MODULE)/internal/version.version=$(VERSION) -X $(MODULE)/internal/version.commit=$(COMMIT) -X $(MODULE)/internal/version.date=$(DATE)

# The sandbox's apiserver: Kubernetes v1.36.3 built from the module proxy.
KUBE_VERSION := v1.36.3
KUBE_LDFLAGS := -s -w -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36 \
	-X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=2026-01-01T00:00:00Z

# The CRDs installed on every sandbox apiserver, pinned under testdata/crds.
CAPI_VERSION           := v1.14.2
KUSTOMIZE_CTRL_VERSION := v1.9.6
SOURCE_CTRL_VERSION    := v1.9.6
HELM_CTRL_VERSION      := v1.6.4
# And the Open Cluster Management CRDs, under testdata/crds/ocm: installed
# only on sandbox clusters with ocmHub: true.
OCM_API_VERSION        := v1.3.0
OCM_MSA_VERSION        := v0.10.0
# And the Argo CD CRDs (Application, ApplicationSet, AppProject), under
# testdata/crds/argocd: installed only on sandbox clusters with argocd: true.
ARGOCD_VERSION         := v3.5.7
# And the inventories' CRDs, each installed only on sandbox clusters that ask
# for it: the Cluster Inventory API's ClusterProfile (clusterInventory: true,
# testdata/crds/clusterinventory), Sveltos's SveltosCluster (sveltos: true,
# testdata/crds/sveltos) and HyperShift's HostedCluster (hypershift: true,
# testdata/crds/hypershift; its Default feature set, the one the operator
# installs unless told TechPreviewNoUpgrade).
CLUSTER_INVENTORY_VERSION := v0.1.2
SVELTOS_VERSION           := v1.14.0
HYPERSHIFT_VERSION        := v0.1.81
CAPI_CRDS   := clusters clusterclasses machines machinedeployments machinesets machinepools
# And, under testdata/crds/capi, installed only on sandbox clusters with
# capiControllers: true, what CAPI's controllers (make capi-bins) watch
# beyond those, as DIR/FILE of the cluster-api module (CAPD's from the
# cluster-api/test module). Not ClusterClass's templates, MachinePools'
# infrastructure nor ExtensionConfigs: the managers run without the
# ClusterTopology, MachinePool and RuntimeSDK feature gates.
CAPI_CORE_CRDS := cluster.x-k8s.io_machinehealthchecks cluster.x-k8s.io_machinedrainrules \
	addons.cluster.x-k8s.io_clusterresourcesets addons.cluster.x-k8s.io_clusterresourcesetbindings \
	ipam.cluster.x-k8s.io_ipaddresses ipam.cluster.x-k8s.io_ipaddressclaims
CAPI_PROVIDER_CRDS := bootstrap/kubeadm/config/crd/bases/bootstrap.cluster.x-k8s.io_kubeadmconfigs \
	bootstrap/kubeadm/config/crd/bases/bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates \
	controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates
CAPD_CRDS := devclusters devmachines devmachinetemplates
# A provider's CRDs carry the CAPI contracts they implement as labels, which
# the core controllers read to pick the version of a reference; upstream's
# kustomize (config/crd/kustomization.yaml) adds them, the bases have none.
CAPI_CONTRACT_LABELS := awk '/^metadata:$$/ && !done { print; print "  labels:"; \
	print "    cluster.x-k8s.io/v1beta1: v1beta1"; print "    cluster.x-k8s.io/v1beta2: v1beta2"; done = 1; next } { print }'
SOURCE_CRDS := gitrepositories ocirepositories helmrepositories helmcharts buckets externalartifacts
OCM_CRDS    := cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml \
	cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml \
	cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml \
	cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml
ARGOCD_CRDS := application applicationset appproject

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# $(call debian,COMMAND,PACKAGE[,APT-FLAGS]) installs PACKAGE from Debian
# unless COMMAND is on PATH.
debian = if ! command -v $(1) >/dev/null; then \
		echo "installing $(2) from Debian"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(3) $(2) >/dev/null; \
	fi

# One build configuration for every go command here (the plugin, the
# sandbox, the tests, the release archives, the tools), so that Go's build
# cache compiles each package once: static, and with -trimpath as releases
# are built. Mixed, the plugin's thousand packages were compiled twice.
export CGO_ENABLED := 0
# Once: a make that make test runs (argocd-tools-background) inherits it.
export GOFLAGS     := -trimpath $(filter-out -trimpath,$(GOFLAGS))

.PHONY: build
build: ## Build bin/kubectl-fleet and bin/fleet-sandbox.
	go build -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-fleet ./cmd/kubectl-fleet
	go build -o $(BIN)/fleet-sandbox ./cmd/fleet-sandbox

.PHONY: demo
demo: build sandbox-bins ## Start the demo fleet, run `kubectl fleet tree` through kubectl, stop the fleet.
	hack/demo.sh

.PHONY: test
test: argocd-tools-background lint sandbox-bins flux-bins capi-bins argocd-controllers krew-bins flux-cli-bins mcp-clients tmux chromium inotify ## Unit tests and end-to-end tests on sandbox fleets of real apiservers.
	go test -count=1 -timeout 60m ./...
	@echo "benchmarks, once each, as tests that they still run (numbers: make bench)"
	go test -count=1 -run '^$$' -bench . -benchtime 1x ./internal/fleet ./internal/render ./internal/execguard ./internal/argocd
	go test -count=1 -short -run '^$$' -bench SignalToExit -benchtime 1x ./internal/cmd
	FLEET_BENCH_TENANTS=100 FLEET_BENCH_LOOP=5 FLEET_BENCH_OUT=$(BIN)/benchmarks-test.md \
		go test -count=1 -run '^$$' -bench Fleet -benchtime 1x -timeout 20m ./internal/bench
	FLEET_BENCH_HUB_APPS=20 FLEET_BENCH_APP_RESOURCES=10 FLEET_BENCH_MASTER_TENANTS=10 FLEET_BENCH_FLUX_TENANTS=10 FLEET_BENCH_FLUX_OBJECTS=10 \
		FLEET_BENCH_CHURN_RATE=5 FLEET_BENCH_WATCH_WINDOW=3s FLEET_BENCH_REALSIZE_OUT=$(BIN)/benchmarks-realsize-test.md \
		go test -count=1 -run '^$$' -bench RealSize -benchtime 1x -timeout 20m ./internal/bench

# The live screen's end-to-end test types into kubectl fleet tree --watch
# and reads it through tmux, as a person would.
.PHONY: tmux
tmux:
	@$(call debian,tmux,tmux)

# kubectl fleet ui's end-to-end tests drive a real headless Chromium
# (chromedp), Debian's, with a font for the labels.
.PHONY: chromium
chromium:
	@$(call debian,chromium,chromium fonts-liberation,--no-install-recommends)

# make watch-screenshot: docs/watch.png, kubectl fleet tree --watch on the
# demo fleet in a tmux terminal, drawn by a real Chromium, from a real run.
.PHONY: watch-screenshot
watch-screenshot: build sandbox-bins chromium tmux ## Take docs/watch.png: kubectl fleet tree --watch on the demo fleet, in tmux.
	go run ./hack/watch-screenshot -out docs/watch.png

# make ui-screenshot: docs/ui.png, the demo fleet's map in a real
# Chromium, from a real run (hack/ui-screenshot runs make demo's fleet).
.PHONY: ui-screenshot
ui-screenshot: build sandbox-bins chromium ## Take docs/ui.png: kubectl fleet ui on the demo fleet, in headless Chromium.
	go run ./hack/ui-screenshot -out docs/ui.png

# Each sandbox kube-apiserver holds 3 inotify instances (its certificate
# file watchers); the end-to-end tests run about 40 at once, past Linux's
# default of 128 per user, and a test that watches files itself then fails
# with "too many open files". Raised to 1024 where it is lower.
INOTIFY_INSTANCES := 1024
.PHONY: inotify
inotify:
	@if [ "$$(cat /proc/sys/fs/inotify/max_user_instances 2>/dev/null || echo $(INOTIFY_INSTANCES))" -lt $(INOTIFY_INSTANCES) ]; then \
		echo "raising fs.inotify.max_user_instances to $(INOTIFY_INSTANCES) for the sandbox's apiservers"; \
		$(SUDO) sysctl -q -w fs.inotify.max_user_instances=$(INOTIFY_INSTANCES); \
	fi

# Every parser of untrusted input, as PACKAGE:TARGET: the kubeconfig policy,
# CAPI Clusters and Flux objects as an apiserver serves them, PATHs, the
# sandbox spec, the git write path's YAML edit, the terminal escaper,
# exec's write guard, and Argo CD cluster Secrets' config.
FUZZ_TARGETS := ./internal/kubeconfig:FuzzPolicy ./internal/capi:FuzzClusterObject ./internal/flux:FuzzFluxObjects \
	./internal/fleet:FuzzParsePath ./internal/sandbox:FuzzParseSpec ./internal/manifest:FuzzSetSuspend ./internal/escape:FuzzString \
	./internal/execguard:FuzzExecVerb ./internal/argocd:FuzzConfig ./internal/manifest:FuzzSetAutomated
FUZZTIME   ?= 5m

.PHONY: fuzz
fuzz: ## Fuzz every target for FUZZTIME each (default 5m; make test runs their corpora only).
	@FUZZ_TARGETS='$(FUZZ_TARGETS)' FUZZTIME=$(FUZZTIME) hack/fuzz.sh

# The fleet sizes make bench walks, tenants in all under 5 masters.
BENCH_TENANTS ?= 10,100,1000

.PHONY: bench
bench: sandbox-bins ## The walk on sandbox fleets of 10, 100 and 1000 tenants at 50 ms per hop, the watch at 1000, real-sized management clusters (bench-realsize), diff of a hub of 500 Argo CD Applications (bench-diff), kubectl fleet ui's map and server (bench-ui), and the Go benchmarks (≈ 55 min); the tables go to bin/benchmarks.md, bin/benchmarks-watch.md, bin/benchmarks-realsize.md, bin/benchmarks-diff.md and bin/benchmarks-ui*.md.
	go test -count=1 -run '^$$' -bench . -benchmem ./internal/fleet ./internal/render ./internal/execguard ./internal/argocd
	go test -count=1 -short -run '^$$' -bench SignalToExit -benchtime 20x ./internal/cmd
	FLEET_BENCH_TENANTS=$(BENCH_TENANTS) FLEET_BENCH_CONCURRENCY=1 \
		go test -count=1 -run '^$$' -bench Fleet -benchtime 1x -timeout 60m ./internal/bench
	FLEET_BENCH_TENANTS=$(BENCH_TENANTS) go test -count=1 -run '^$$' -bench Watch -benchtime 1x -timeout 60m ./internal/bench
	$(MAKE) bench-realsize
	$(MAKE) bench-diff
	$(MAKE) bench-ui

.PHONY: bench-ui
bench-ui: sandbox-bins chromium ## kubectl fleet ui: the map of 10,000 tenants in headless Chromium (first map, pan frames, change to tile), and the server on the fleet of 1000 tenants against tree --watch -o json (memory, idle CPU) (≈ 10 min); the tables go to bin/benchmarks-ui.md and bin/benchmarks-ui-server.md.
	go test -count=1 -run '^$$' -bench 'UIMap|UIServer' -benchtime 1x -timeout 30m ./internal/bench

.PHONY: bench-realsize
bench-realsize: sandbox-bins ## Management clusters as big as real ones: an Argo CD hub of 5,000 Applications of 40 KB against kubectl, a master of 5,000 real-sized tenants against a thin one, 1,000 tenants of 100 Flux objects against the serial loop, and the hub watched while 20 Applications a second change (≈ 30 min); the table goes to bin/benchmarks-realsize.md.
	go test -count=1 -run '^$$' -bench RealSize -benchtime 1x -timeout 120m ./internal/bench

# The Applications of make bench-diff's hub, and how many runs of each diff.
BENCH_DIFF_APPS  ?= 500
BENCH_DIFF_PAIRS ?= 1

.PHONY: bench-diff
bench-diff: sandbox-bins ## diff --kind app of a hub of BENCH_DIFF_APPS (500) Argo CD Applications against diff --kind ks of as many Flux Kustomizations of the same objects, BENCH_DIFF_PAIRS (1) runs of each in turn (≈ 5 min; 3 pairs ≈ 10); the table goes to bin/benchmarks-diff.md.
	FLEET_BENCH_DIFF_APPS=$(BENCH_DIFF_APPS) FLEET_BENCH_DIFF_PAIRS=$(BENCH_DIFF_PAIRS) \
		go test -count=1 -run '^$$' -bench Diff -benchtime 1x -timeout 30m ./internal/bench

# The commit make bench-pair runs beside this checkout, and how many pairs.
BENCH_BASE  ?= 92a1d8f
BENCH_PAIRS ?= 5
BENCH_PAIR_TENANTS ?= 1000

.PHONY: bench-pair
bench-pair: sandbox-bins ## The walk's commands at BENCH_PAIR_TENANTS (1000) by this checkout's plugin and BENCH_BASE's (92a1d8f, in a worktree) in turn, BENCH_PAIRS (5) times on one fleet (≈ 5 min); the ratios go to bin/benchmarks-paired.md.
	rm -rf $(BIN)/bench-base && git worktree prune && git worktree add --detach $(BIN)/bench-base $(BENCH_BASE)
	FLEET_BENCH_TENANTS=$(BENCH_PAIR_TENANTS) FLEET_BENCH_LOOP=2 FLEET_BENCH_BASE=$(BIN)/bench-base FLEET_BENCH_PAIRS=$(BENCH_PAIRS) \
		go test -count=1 -run '^$$' -bench Fleet -benchtime 1x -timeout 60m ./internal/bench; \
		status=$$?; git worktree remove --force $(BIN)/bench-base; exit $$status

.PHONY: bench-10k
bench-10k: sandbox-bins ## The walk of 10,000 tenants (one apiserver per level, 50 ms per hop), with the defaults: the one-path walk and tree -o json (≈ 2 min on a quiet machine, 5 on a busy one); the table goes to bin/benchmarks-10k.md.
	FLEET_BENCH_TENANTS=10000 FLEET_BENCH_LOOP=2 FLEET_BENCH_COMMANDS=one-path,tree,kubectl-loop FLEET_BENCH_OUT=$(BIN)/benchmarks-10k.md \
		go test -count=1 -run '^$$' -bench Fleet -benchtime 1x -timeout 60m ./internal/bench

.PHONY: test-stress
test-stress: sandbox-bins flux-bins capi-bins argocd-bins krew-bins flux-cli-bins mcp-clients inotify tmux chromium ## The end-to-end packages five times over while a busy loop holds every core: flakes show here (STRESS_COUNT, STRESS_PKGS).
	hack/stress.sh

.PHONY: test-short
test-short: ## Unit tests only: no apiserver.
	go test -short ./...

.PHONY: update-golden
update-golden: sandbox-bins flux-bins capi-bins argocd-bins krew-bins flux-cli-bins mcp-clients tmux chromium ## Rewrite the golden files from the current output.
	go test -count=1 ./... -update

.PHONY: sandbox-bins
sandbox-bins: $(BIN)/etcd $(BIN)/kube-apiserver $(BIN)/clusterprofile-secretreader ## Build etcd, kube-apiserver and the ClusterProfile secretreader plugin for the sandbox (≈ 7 min the first time).

# The Cluster Inventory API's own credential plugin (KEP-5339's secretreader),
# from the module go.mod pins: sandbox fleets with the clusterprofile edge
# name it in DIR/clusterprofile-providers.json, a real plugin no one here wrote.
$(BIN)/clusterprofile-secretreader: go.mod go.sum
	go build -ldflags '-s -w' -o $@ sigs.k8s.io/cluster-inventory-api/plugins/secretreader/cmd/plugin

# etcd, built from the Go module proxy as Kubernetes 1.36 pairs it (3.6):
# Debian's 3.4 cannot answer the watch progress requests by which
# kube-apiserver serves consistent reads, and so pages of lists, from its
# watch cache; on it the sandbox read etcd where no current cluster does.
ETCD_VERSION := v3.6.8
$(BIN)/etcd: hack/tools/etcd/go.mod hack/tools/etcd/go.sum
	@echo "etcd $(ETCD_VERSION) from the Go module proxy (≈ 1 min the first time)"
	@rm -f $@ # a link to Debian's etcd, from before
	hack/tool.sh etcd hack/tools/etcd go.etcd.io/etcd/server/v3 -ldflags '-s -w'
	$@ --version | grep -qx 'etcd Version: $(patsubst v%,%,$(ETCD_VERSION))'

$(BIN)/kube-apiserver: hack/tools/kube-apiserver/go.mod hack/tools/kube-apiserver/go.sum
	@echo "kube-apiserver $(KUBE_VERSION) from the Go module proxy (≈ 5-8 min the first time)"
	hack/tool.sh kube-apiserver hack/tools/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver -ldflags '$(KUBE_LDFLAGS)'
	$@ --version | grep -qx 'Kubernetes $(KUBE_VERSION)'

.PHONY: flux-bins
flux-bins: $(BIN)/source-controller $(BIN)/kustomize-controller $(BIN)/helm-controller ## Build the Flux controllers some sandbox clusters run (≈ 6 min each the first time).

# Flux's controllers, for sandbox clusters with fluxControllers: true (and
# helmController: true), from one tools module.
$(BIN)/source-controller $(BIN)/kustomize-controller $(BIN)/helm-controller: hack/tools/flux/go.mod hack/tools/flux/go.sum
	hack/tool.sh $(notdir $@) hack/tools/flux github.com/fluxcd/$(notdir $@) -ldflags '-s -w'

.PHONY: capi-bins
capi-bins: $(BIN)/capi-controller-manager $(BIN)/capi-kubeadm-bootstrap-controller-manager $(BIN)/capi-kubeadm-control-plane-controller-manager $(BIN)/capd-manager ## Build the Cluster API controllers some sandbox clusters run (≈ 4 min the first time).

# Cluster API's controllers, for sandbox clusters with capiControllers: true,
# from one tools module: core, kubeadm bootstrap and kubeadm control plane
# from upstream's mains, and CAPD's in-memory backend from a main of our own
# (upstream's wants Docker, and runs its Docker backend too). hack/tool.sh
# applies hack/tools/capi/patches, each saying why: the managers' webhook
# servers and CAPD's fake workload apiservers bind loopback (upstream: every
# interface), a DevCluster without annotations does not panic CAPD, and a
# workload cluster's connection is retried every 2 s (upstream: 30 s).
CAPI_LDFLAGS := -s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$(CAPI_VERSION) \
	-X sigs.k8s.io/cluster-api/version.gitMajor=$(patsubst v%,%,$(word 1,$(subst ., ,$(CAPI_VERSION)))) \
	-X sigs.k8s.io/cluster-api/version.gitMinor=$(word 2,$(subst ., ,$(CAPI_VERSION))) \
	-X sigs.k8s.io/cluster-api/version.gitTreeState=clean -X sigs.k8s.io/cluster-api/version.buildDate=2026-01-01T00:00:00Z
CAPI_TOOL    := hack/tools/capi/go.mod hack/tools/capi/go.sum $(wildcard hack/tools/capi/patches/*.patch)
$(BIN)/capi-controller-manager: $(CAPI_TOOL)
	hack/tool.sh $(notdir $@) hack/tools/capi sigs.k8s.io/cluster-api/core -ldflags '$(CAPI_LDFLAGS)'
$(BIN)/capi-kubeadm-bootstrap-controller-manager: $(CAPI_TOOL)
	hack/tool.sh $(notdir $@) hack/tools/capi sigs.k8s.io/cluster-api/bootstrap/kubeadm -ldflags '$(CAPI_LDFLAGS)'
$(BIN)/capi-kubeadm-control-plane-controller-manager: $(CAPI_TOOL)
	hack/tool.sh $(notdir $@) hack/tools/capi sigs.k8s.io/cluster-api/controlplane/kubeadm -ldflags '$(CAPI_LDFLAGS)'
$(BIN)/capd-manager: $(CAPI_TOOL) $(wildcard hack/tools/capi/capd/*.go)
	hack/tool.sh $(notdir $@) hack/tools/capi ./capd -ldflags '$(CAPI_LDFLAGS)'

.PHONY: argocd-bins argocd-controllers argocd-tools argocd-tools-background
argocd-bins: argocd-controllers argocd-tools ## Build Argo CD's application-controller and repo-server, the helm and kustomize its repo-server execs, and install redis-server, for sandbox clusters with argocdControllers (≈ 15 min the first time).
argocd-controllers: $(BIN)/argocd $(BIN)/redis-server
argocd-tools: $(BIN)/helm $(BIN)/kustomize

# make test builds helm and kustomize in the background (hack/background.sh),
# beside everything else: only the argocd fleet's test needs them, and
# the sandbox waits for the build before it starts that fleet. Cold, they
# took 9 minutes of a two-core machine (helm 8 m 40 s, then kustomize 37 s
# with what helm's build left in the cache), which before the tests would
# have been that much more of make test.
argocd-tools-background:
	@hack/background.sh $(BIN)/argocd-tools $(MAKE) --no-print-directory argocd-tools

# Argo CD's application-controller and repo-server, for sandbox clusters
# with argocdControllers: true, are one multi-call binary (the sandbox picks
# the command by ARGOCD_BINARY_NAME), from a tools module of their own:
# v3.2.6, the newest whose dependencies the Go module proxy serves (see
# hack/tools/argocd/go.mod). The Argo CD CRDs stay ARGOCD_VERSION's: a
# superset of v3.2.6's, and what the status-only Applications are checked
# against. hack/tool.sh applies hack/tools/argocd/patches, each saying why:
# the application-controller's metrics and health server binds loopback
# (upstream: every interface), and it honours skip-reconcile on a cluster
# Secret (a backport of Argo CD 3.4's, for freeze --clusters).
ARGOCD_CTRL_VERSION := v3.2.6
ARGOCD_LDFLAGS := -s -w -X github.com/argoproj/argo-cd/v3/common.version=$(patsubst v%,%,$(ARGOCD_CTRL_VERSION)) \
	-X github.com/argoproj/argo-cd/v3/common.gitTag=$(ARGOCD_CTRL_VERSION) -X github.com/argoproj/argo-cd/v3/common.gitTreeState=clean \
	-X github.com/argoproj/argo-cd/v3/common.buildDate=2026-01-01T00:00:00Z
$(BIN)/argocd: hack/tools/argocd/go.mod hack/tools/argocd/go.sum $(wildcard hack/tools/argocd/patches/*.patch)
	@echo "Argo CD $(ARGOCD_CTRL_VERSION) from the Go module proxy (≈ 4 min the first time)"
	hack/tool.sh argocd hack/tools/argocd github.com/argoproj/argo-cd/v3/cmd -ldflags '$(ARGOCD_LDFLAGS)'
	$@ version --client --short | grep -q '^argocd: $(ARGOCD_CTRL_VERSION)+'

# The helm and kustomize the repo-server execs to render Helm and Kustomize
# sources, as upstream's image ships them: the versions Argo CD v3.4.0 pins
# (its hack/tool-versions.sh), each from a tools module of its own (helm's
# and kustomize's dependency graphs as their go.mod give them). The sandbox
# puts bin/ first on the repo-server's PATH and refuses to start without
# them: never a helm or kustomize of the user's PATH. kustomize reads its
# version from its module's (v5.8.1); helm's is stamped.
ARGOCD_HELM_VERSION := v3.19.4
$(BIN)/helm: hack/tools/argocd-helm/go.mod hack/tools/argocd-helm/go.sum
	hack/tool.sh helm hack/tools/argocd-helm helm.sh/helm/v3/cmd/helm \
		-ldflags '-s -w -X helm.sh/helm/v3/internal/version.version=$(ARGOCD_HELM_VERSION) -X helm.sh/helm/v3/internal/version.gitTreeState=clean'
	$@ version --short | grep -q '^$(ARGOCD_HELM_VERSION)'
$(BIN)/kustomize: hack/tools/argocd-kustomize/go.mod hack/tools/argocd-kustomize/go.sum
	hack/tool.sh kustomize hack/tools/argocd-kustomize sigs.k8s.io/kustomize/kustomize/v5 -ldflags '-s -w'
	$@ version | grep -q '^v5.8.1$$'

# Argo CD's cache, which its controller and repo-server share: the
# sandbox runs one per cluster, on a loopback port, persisting nothing.
$(BIN)/redis-server:
	@mkdir -p $(BIN)
	@$(call debian,redis-server,redis-server,--no-install-recommends)
	ln -sf "$$(command -v redis-server)" $@

.PHONY: krew-bins
krew-bins: $(BIN)/krew $(BIN)/validate-krew-manifest ## Build krew v0.5.0 and validate-krew-manifest for the install tests.

$(BIN)/krew $(BIN)/validate-krew-manifest: hack/tools/krew/go.mod hack/tools/krew/go.sum
	hack/tool.sh $(notdir $@) hack/tools/krew sigs.k8s.io/krew/cmd/$(notdir $@)

.PHONY: flux-cli-bins
flux-cli-bins: $(BIN)/flux $(BIN)/validate-flux-plugin ## Build the flux CLI v2.9.5 and validate-flux-plugin for the flux plugin tests.

# The flux CLI, which installs kubectl fleet as the flux plugin `flux fleet`
# from a catalog (RFC-0013), from a tools module of its own whose shared
# dependencies are pinned to hack/tools/flux's versions, so that the
# packages the controllers compiled are reused. hack/tool.sh applies
# hack/tools/flux-cli/patches: the module has no embedded install manifests
# (see the patch). Until patched, cmd/flux does not load, and hack/tool.sh's
# `go list` of the patched package fails: -e in GOFLAGS lets go list report
# the package with its error (go build has no -e and ignores it there).
# validate-flux-plugin checks a catalog manifest with the CLI's own types.
FLUX_CLI_VERSION := v2.9.5
FLUX_CLI_TOOL    := hack/tools/flux-cli/go.mod hack/tools/flux-cli/go.sum $(wildcard hack/tools/flux-cli/patches/*.patch) $(wildcard hack/tools/flux-cli/validate-flux-plugin/*.go)
$(BIN)/flux: $(FLUX_CLI_TOOL)
	@echo "flux CLI $(FLUX_CLI_VERSION) from the Go module proxy"
	GOFLAGS='$(strip $(GOFLAGS)) -e' hack/tool.sh flux hack/tools/flux-cli github.com/fluxcd/flux2/v2/cmd/flux -ldflags '-s -w -X main.VERSION=$(patsubst v%,%,$(FLUX_CLI_VERSION))'
	$@ version --client | grep -qx 'flux: $(FLUX_CLI_VERSION)'
$(BIN)/validate-flux-plugin: $(FLUX_CLI_TOOL)
	GOFLAGS='$(strip $(GOFLAGS)) -e' hack/tool.sh validate-flux-plugin hack/tools/flux-cli ./validate-flux-plugin

.PHONY: ui-vendor
ui-vendor: ## Copy the npm packages kubectl fleet ui's page uses (pinned by hack/tools/ui) into internal/ui/web/vendor, committed: go build needs no npm.
	@dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	cp hack/tools/ui/package.json hack/tools/ui/package-lock.json "$$dir"; \
	(cd "$$dir" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null); \
	cp "$$dir/node_modules/d3-hierarchy/dist/d3-hierarchy.min.js" internal/ui/web/vendor/; \
	cp "$$dir/node_modules/d3-hierarchy/LICENSE" internal/ui/web/vendor/d3-hierarchy.LICENSE

.PHONY: mcp-clients
mcp-clients: $(BIN)/mcp-clients ## Install the MCP Inspector CLI and the MCP conformance suite from npm, for kubectl fleet mcp's tests.

# MCP clients no one here wrote, which kubectl fleet mcp's tests run: the
# MCP Inspector's CLI and the official conformance suite, pinned with all
# their dependencies by hack/tools/mcp-clients/package-lock.json. npm ci
# installs the lock, without install scripts, once per lock and Node
# version into TOOLS_CACHE (hack/tool.sh's), and bin/mcp-clients links the
# install, as the Go tools are linked. Node 20 or newer, with npm: from
# Debian where npm is missing (bookworm's nodejs is 18, untried: a warning
# says so).
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubectl-fleet/tools
MCP_CLIENTS := hack/tools/mcp-clients/package.json hack/tools/mcp-clients/package-lock.json
$(BIN)/mcp-clients: $(MCP_CLIENTS)
	@$(call debian,npm,nodejs npm)
	@node -e 'process.exit(process.versions.node.split(".")[0] >= 20 ? 0 : 1)' || \
		echo "warning: the MCP clients are built for Node 20, and node is $$(node --version): TestMCPInspector and TestMCPConformance may fail" >&2
	@key=$$({ cat $(MCP_CLIENTS); node --version; } | sha256sum | cut -c1-16); cached="$(TOOLS_CACHE)/mcp-clients-$$key"; \
	if [ ! -d "$$cached" ]; then \
		echo "installing the MCP clients (hack/tools/mcp-clients) from npm, cached as $$cached"; \
		mkdir -p "$(TOOLS_CACHE)"; tmp=$$(mktemp -d "$(TOOLS_CACHE)/.mcp-clients.XXXXXX"); \
		cp $(MCP_CLIENTS) "$$tmp/"; \
		(cd "$$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || { rm -rf "$$tmp"; exit 1; }; \
		mv -T "$$tmp" "$$cached" 2>/dev/null || rm -rf "$$tmp"; \
	fi; \
	mkdir -p $(BIN); ln -sfn "$$cached" $@

.PHONY: dist
dist: ## Release archives for every platform, checksums and the krew manifests: make dist VERSION=vX.Y.Z
	go run ./hack/dist -version "$(VERSION)" -out dist

.PHONY: validate-krew-manifest
validate-krew-manifest: $(BIN)/validate-krew-manifest ## Check the committed krew manifest's structure.
	$(BIN)/validate-krew-manifest -manifest plugins/fleet.yaml -skip-install

.PHONY: docs
docs: ## Regenerate docs/reference from the command tree and docs/rbac from the integrations.
	go run ./hack/docgen

$(BIN)/golangci-lint: hack/tools/lint/go.mod hack/tools/lint/go.sum
	hack/tool.sh golangci-lint hack/tools/lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint

.PHONY: lint
lint: $(BIN)/golangci-lint fmt-check vet tidy-check ## golangci-lint (.golangci.yml), gofmt, go vet, go mod tidy.
	$(BIN)/golangci-lint run ./...

.PHONY: lint-fix
lint-fix: $(BIN)/golangci-lint
	$(BIN)/golangci-lint run --fix ./...

.PHONY: fmt
fmt:
	gofmt -s -w $$(find cmd internal -name '*.go')

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -s -l $$(find cmd internal -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet:
	go vet ./...

.PHONY: tidy-check
tidy-check:
	go mod tidy -diff

.PHONY: update-crds
update-crds: ## Refresh testdata/crds (and testdata/capi-webhooks) from the pinned CAPI, Flux, OCM, Argo CD, Cluster Inventory API, Sveltos and HyperShift modules.
	@capi=$$(go mod download -json sigs.k8s.io/cluster-api@$(CAPI_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	capd=$$(go mod download -json sigs.k8s.io/cluster-api/test@$(CAPI_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')/infrastructure/docker; \
	ks=$$(go mod download -json github.com/fluxcd/kustomize-controller@$(KUSTOMIZE_CTRL_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	src=$$(go mod download -json github.com/fluxcd/source-controller@$(SOURCE_CTRL_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	helm=$$(go mod download -json github.com/fluxcd/helm-controller@$(HELM_CTRL_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	ocm=$$(go mod download -json open-cluster-management.io/api@$(OCM_API_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	msa=$$(go mod download -json open-cluster-management.io/managed-serviceaccount@$(OCM_MSA_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	argocd=$$(go mod download -json github.com/argoproj/argo-cd/v3@$(ARGOCD_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	inventory=$$(go mod download -json sigs.k8s.io/cluster-inventory-api@$(CLUSTER_INVENTORY_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	sveltos=$$(go mod download -json github.com/projectsveltos/libsveltos@$(SVELTOS_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	hypershift=$$(go mod download -json github.com/openshift/hypershift@$(HYPERSHIFT_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	rm -f testdata/crds/*.yaml testdata/crds/ocm/*.yaml testdata/crds/argocd/*.yaml testdata/crds/capi/*.yaml testdata/capi-webhooks/*.yaml \
		testdata/crds/clusterinventory/*.yaml testdata/crds/sveltos/*.yaml testdata/crds/hypershift/*.yaml; \
	mkdir -p testdata/crds/ocm testdata/crds/argocd testdata/crds/capi testdata/capi-webhooks \
		testdata/crds/clusterinventory testdata/crds/sveltos testdata/crds/hypershift; \
	for c in $(CAPI_CRDS); do install -m 0644 $$capi/core/config/crd/bases/cluster.x-k8s.io_$$c.yaml testdata/crds/; done; \
	$(CAPI_CONTRACT_LABELS) $$capi/controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml \
		>testdata/crds/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml; \
	for c in $(CAPI_CORE_CRDS); do install -m 0644 $$capi/core/config/crd/bases/$$c.yaml testdata/crds/capi/; done; \
	for c in $(CAPI_PROVIDER_CRDS); do $(CAPI_CONTRACT_LABELS) $$capi/$$c.yaml >testdata/crds/capi/$$(basename $$c).yaml; done; \
	for c in $(CAPD_CRDS); do $(CAPI_CONTRACT_LABELS) $$capd/config/crd/bases/infrastructure.cluster.x-k8s.io_$$c.yaml \
		>testdata/crds/capi/infrastructure.cluster.x-k8s.io_$$c.yaml; done; \
	install -m 0644 $$capi/core/config/webhook/manifests.yaml testdata/capi-webhooks/core.yaml; \
	install -m 0644 $$capi/bootstrap/kubeadm/config/webhook/manifests.yaml testdata/capi-webhooks/kubeadm-bootstrap.yaml; \
	install -m 0644 $$capi/controlplane/kubeadm/config/webhook/manifests.yaml testdata/capi-webhooks/kubeadm-control-plane.yaml; \
	install -m 0644 $$capd/config/webhook/manifests.yaml testdata/capi-webhooks/capd.yaml; \
	for c in $(SOURCE_CRDS); do install -m 0644 $$src/config/crd/bases/source.toolkit.fluxcd.io_$$c.yaml testdata/crds/; done; \
	install -m 0644 $$ks/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml testdata/crds/; \
	install -m 0644 $$helm/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml testdata/crds/; \
	for c in $(OCM_CRDS); do install -m 0644 $$ocm/$$c testdata/crds/ocm/; done; \
	install -m 0644 $$msa/config/crd/bases/authentication.open-cluster-management.io_managedserviceaccounts.yaml testdata/crds/ocm/; \
	for c in $(ARGOCD_CRDS); do install -m 0644 $$argocd/manifests/crds/$$c-crd.yaml testdata/crds/argocd/; done; \
	install -m 0644 $$inventory/config/crd/bases/multicluster.x-k8s.io_clusterprofiles.yaml testdata/crds/clusterinventory/; \
	install -m 0644 $$sveltos/config/crd/bases/lib.projectsveltos.io_sveltosclusters.yaml testdata/crds/sveltos/; \
	install -m 0644 $$hypershift/cmd/install/assets/crds/hypershift-operator/zz_generated.crd-manifests/hostedclusters-Hypershift-Default.crd.yaml \
		testdata/crds/hypershift/hypershift.openshift.io_hostedclusters.yaml; \
	ls testdata/crds testdata/crds/ocm testdata/crds/argocd testdata/crds/capi testdata/capi-webhooks \
		testdata/crds/clusterinventory testdata/crds/sveltos testdata/crds/hypershift

.PHONY: clean
clean: ## Remove built binaries (bin/ keeps nothing that cannot be rebuilt).
	rm -rf $(BIN) dist

.PHONY: help
help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'
