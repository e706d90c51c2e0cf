package cmd

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
	"github.com/kubectl-fleet/kubectl-fleet/internal/version"
)

// envRequestLog names a file to which kubectl fleet writes, on exit, how
// many requests of each kind it sent to each server: for make bench and the
// tests that prove what the walk asks of a cluster.
const envRequestLog = "KUBECTL_FLEET_REQUEST_LOG"

// connector builds the connector of this invocation: the providers' edge
// sources and the kinds every command reads (the core's and the
// providers'), no discovery, and the request log when
// KUBECTL_FLEET_REQUEST_LOG asks for it. shortLived says each connection is
// closed once its cluster is read (kube.Options.ShortLived); perCluster is
// the time the command allows each cluster, which a TLS handshake may take
// (kube.Options.HandshakeTimeout).
func (o *RootOptions) connector(policy kubeconfig.Policy, shortLived bool, perCluster time.Duration) (*reach.Connector, error) {
	s, err := o.Providers.Scheme()
	if err != nil {
		return nil, err
	}
	if o.Getenv(envRequestLog) != "" && o.requests == nil {
		o.requests = kube.NewRequestLog()
	}
	route, err := o.routes()
	if err != nil {
		return nil, err
	}
	opts := kube.Options{
		UserAgent:  "kubectl-fleet/" + version.Get().Version,
		Requests:   o.requests,
		Dial:       o.deps.Dial,
		ShortLived: shortLived,
		ChunkSize:  o.ChunkSize,
		Retain:     o.retain,
		// A cluster's time is --timeout, its TLS handshake included.
		HandshakeTimeout: perCluster,
	}
	if o.ChunkSize == 0 {
		opts.ChunkSize = -1 // one request
	}
	if o.deps.Connections != nil {
		o.deps.Connections(&opts)
	}
	return &reach.Connector{Policy: policy, Sources: o.Providers.Sources(), Route: route, Kube: kube.NewConnector(s, o.Providers.APIs(), opts)}, nil
}

// writeRequestLog writes the request log, if one was kept.
func (o *RootOptions) writeRequestLog() error {
	if o.requests == nil {
		return nil
	}
	return o.requests.WriteFile(o.Getenv(envRequestLog))
}

// rootCluster connects to the cluster of the operator's kubeconfig, as
// kubectl would with the same flags, and names it after its context. That
// kubeconfig is the operator's own and trusted; only kubeconfigs read from
// Secrets further down go through the policy. shortLived says the
// connections below it are each closed once their cluster is read;
// perCluster is the time allowed each cluster.
func (o *RootOptions) rootCluster(policy kubeconfig.Policy, shortLived bool, perCluster time.Duration) (*reach.Cluster, string, error) {
	raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("failed to load your kubeconfig: %w", err)
	}
	name := raw.CurrentContext
	if o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "" {
		name = *o.ConfigFlags.Context
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("failed to configure the root cluster from your kubeconfig (pick a context with --context, or a file with --kubeconfig or KUBECONFIG): %w", err)
	}
	o.applyKubercToRoot(cfg)
	if name == "" {
		name = kube.RedactURL(cfg.Host)
	}
	connector, err := o.connector(policy, shortLived, perCluster)
	if err != nil {
		return nil, "", err
	}
	root, err := connector.Connect(cfg)
	if err != nil {
		return nil, "", err
	}
	return root, name, nil
}

// walk walks the fleet from the root of the operator's kubeconfig with the
// providers' probes and then more, showing progress on a terminal, and turns an unreadable root
// into a failure of the whole command: nothing below it can be known.
func (o *RootOptions) walk(ctx context.Context, opts fleet.Options, more ...fleet.Probe[*reach.Cluster]) (*fleet.Result[*reach.Cluster], error) {
	root, name, err := o.rootCluster(o.policy(), !opts.KeepConnections, opts.Timeout)
	if err != nil {
		return nil, err
	}
	opts = o.withProviders(opts)
	opts.Progress = &fleet.Progress{}
	p := opts.Progress
	if o.deps.Progress != nil {
		o.deps.Progress(p)
	}
	stop := o.showProgress(func() string {
		return fmt.Sprintf("walking the fleet: %d/%d clusters read, %d errors …", p.Read.Load(), p.Found.Load(), p.Failed.Load())
	})
	res, err := fleet.Walk(ctx, root, name, opts, o.probesWith(more)...)
	stop()
	if err != nil {
		return nil, err
	}
	if o.deps.Walked != nil {
		o.deps.Walked(res)
	}
	if res.Root.Error != "" {
		return nil, fmt.Errorf("cannot read the root cluster (context %q): %s", name, res.Root.Error)
	}
	return res, nil
}

// markFrozen records on each walked cluster the freezes in force on it,
// for the FROZEN column and the nodes' JSON: tree, list and describe
// show them; no other command pays for it.
func (o *RootOptions) markFrozen(res *fleet.Result[*reach.Cluster]) {
	nodes := map[string]*fleet.Node{}
	res.Root.Walk(func(n *fleet.Node) { nodes[n.Path] = n })
	ops.MarkFrozen(o.everything(res), nodes)
}

// presentation is what the tree, the list and describe draw of the
// providers, and the freezes (FROZEN).
func (o *RootOptions) presentation() fleet.Presentation {
	return fleet.Join(o.Providers.Presentation(), ops.Frozen())
}

// withProviders are opts with what the providers give every walk and watch:
// their linkers, their kinds of environment.
func (o *RootOptions) withProviders(opts fleet.Options) fleet.Options {
	opts.Linkers, opts.EnvKinds = o.Providers.Linkers(), o.Providers.EnvKinds()
	return opts
}

// probesWith are the probes of every walk, the providers', and more.
func (o *RootOptions) probesWith(more []fleet.Probe[*reach.Cluster]) []fleet.Probe[*reach.Cluster] {
	return append(o.Providers.Probes(), more...)
}

// progressDelay is how long a walk runs before its progress is shown.
const progressDelay = time.Second

// showProgress draws a line of progress on stderr when it is a terminal
// and the work takes longer than progressDelay, redrawn as line changes.
// The returned function stops and erases it.
func (o *RootOptions) showProgress(line func() string) func() {
	if !isTerminal(o.ErrOut) {
		return func() {}
	}
	f := o.ErrOut
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		timer := time.NewTimer(progressDelay)
		defer timer.Stop()
		select {
		case <-done:
			return
		case <-timer.C:
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			fmt.Fprintf(f, "\r\x1b[K%s", line())
			select {
			case <-done:
				fmt.Fprint(f, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
