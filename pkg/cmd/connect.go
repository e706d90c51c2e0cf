package cmd

import (
	"fmt"
	"sync"

	"github.com/kubectl-fleet/kubectl-fleet/internal/version"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/capi"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/pkg/kubeconfig"
)

// rootCluster connects to the cluster of the operator's kubeconfig, as
// kubectl would with the same flags, and names it after its context. That
// kubeconfig is the operator's own and trusted; only kubeconfigs read from
// Secrets further down go through the policy.
func (o *RootOptions) rootCluster(policy kubeconfig.Policy) (fleet.Cluster, string, error) {
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
	if name == "" {
		name = cfg.Host
	}
	connector, err := capi.NewConnector(policy, "kubectl-fleet/"+version.Get().Version)
	if err != nil {
		return nil, "", err
	}
	root, err := connector.Connect(cfg)
	if err != nil {
		return nil, "", err
	}
	return root, name, nil
}

// policy is the kubeconfig policy of this invocation: the strict default
// plus the --allow-exec allowlist, announcing on stderr each allowed plugin
// before its first use.
func (o *RootOptions) policy() kubeconfig.Policy {
	var mu sync.Mutex
	announced := map[string]bool{}
	return kubeconfig.Policy{
		AllowExec: o.AllowExec,
		OnExec: func(src kubeconfig.Source, command string) {
			mu.Lock()
			defer mu.Unlock()
			if !announced[command] {
				announced[command] = true
				fmt.Fprintf(o.ErrOut, "warning: running exec credential plugin %s, named by %s (allowed by --%s)\n", command, src, flagAllowExec)
			}
		},
	}
}
