package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

// GitFlags name a checkout of the fleet repository: --git, and --source
// to map GitRepositories to checkouts by name.
type GitFlags struct {
	Git     string
	Sources []string

	checkout *gitops.Checkout
	sources  map[string]*gitops.Checkout
}

// AddFlags registers --git and --source.
func (g *GitFlags) AddFlags(f *pflag.FlagSet, what string) {
	f.StringVar(&g.Git, flagGit, "", "A local checkout of the fleet repository: "+what)
	f.StringArrayVar(&g.Sources, flagSource, nil, "NAMESPACE/NAME=DIR: the GitRepository of that name (on any cluster) is a checkout at DIR, whatever its URL (repeatable)")
}

// Open opens the checkouts the flags name.
func (g *GitFlags) Open(ctx context.Context) error {
	g.sources = map[string]*gitops.Checkout{}
	if g.Git != "" {
		c, err := gitops.Open(ctx, g.Git)
		if err != nil {
			return fmt.Errorf("--%s: %w", flagGit, err)
		}
		g.checkout = c
	}
	for _, s := range g.Sources {
		name, dir, ok := strings.Cut(s, "=")
		if ns, n, nsOK := strings.Cut(name, "/"); !ok || !nsOK || ns == "" || n == "" || dir == "" {
			return fmt.Errorf("invalid --%s %q: use NAMESPACE/NAME=DIR", flagSource, s)
		}
		c, err := gitops.Open(ctx, dir)
		if err != nil {
			return fmt.Errorf("--%s %s: %w", flagSource, s, err)
		}
		g.sources[name] = c
	}
	return nil
}

// declare sets where each node's Cluster is declared in the --git checkout.
func (g *GitFlags) declare(providers provider.Set, root *fleet.Node, nodes []*fleet.Node) {
	if d, ok := g.declarations(providers, root); ok {
		d.DeclareClusters(nodes)
	}
}

// declarations find the manifests of the fleet below root in the --git
// checkout, from the sources whose URL is a remote of it or that
// --source maps to it; false without --git, or when no provider finds
// manifests.
func (g *GitFlags) declarations(providers provider.Set, root *fleet.Node) (gitops.Declarations, bool) {
	if g.checkout == nil {
		return nil, false
	}
	names := map[string]bool{}
	for name, c := range g.sources {
		if c.Dir == g.checkout.Dir {
			names[name] = true
		}
	}
	return providers.Declarations(g.checkout, root, names)
}
