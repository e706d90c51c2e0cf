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
	// URLs lets --source map a repository's URL too (REPOURL=DIR): the
	// diff's, whose Argo CD Applications name no GitRepository.
	URLs bool

	checkout *gitops.Checkout
	sources  map[string]*gitops.Checkout
	// urls are the checkouts --source maps repository URLs to, by
	// their normalized URL.
	urls map[string]*gitops.Checkout
}

// AddFlags registers --git and --source.
func (g *GitFlags) AddFlags(f *pflag.FlagSet, what string) {
	f.StringVar(&g.Git, flagGit, "", "A local checkout of the fleet repository: "+what)
	help := "NAMESPACE/NAME=DIR: the GitRepository of that name (on any cluster) is a checkout at DIR, whatever its URL (repeatable)"
	if g.URLs {
		help = "NAMESPACE/NAME=DIR: the GitRepository of that name (on any cluster) is a checkout at DIR, whatever its URL; REPOURL=DIR: the repository of that URL is (repeatable)"
	}
	f.StringArrayVar(&g.Sources, flagSource, nil, help)
}

// Open opens the checkouts the flags name.
func (g *GitFlags) Open(ctx context.Context) error {
	g.sources, g.urls = map[string]*gitops.Checkout{}, map[string]*gitops.Checkout{}
	if g.Git != "" {
		c, err := gitops.Open(ctx, g.Git)
		if err != nil {
			return fmt.Errorf("--%s: %w", flagGit, err)
		}
		g.checkout = c
	}
	for _, s := range g.Sources {
		name, dir, ok := strings.Cut(s, "=")
		url := g.URLs && isRepoURL(name)
		if ns, n, nsOK := strings.Cut(name, "/"); !ok || dir == "" || !url && (!nsOK || ns == "" || n == "" || strings.Contains(n, "/")) {
			if g.URLs {
				return fmt.Errorf("invalid --%s %q: use NAMESPACE/NAME=DIR or REPOURL=DIR", flagSource, s)
			}
			return fmt.Errorf("invalid --%s %q: use NAMESPACE/NAME=DIR", flagSource, s)
		}
		c, err := gitops.Open(ctx, dir)
		if err != nil {
			return fmt.Errorf("--%s %s: %w", flagSource, s, err)
		}
		if url {
			g.urls[gitops.NormalizeURL(name)] = c
			continue
		}
		g.sources[name] = c
	}
	return nil
}

// isRepoURL says s is a repository's URL (https://…, ssh://…, or the
// scp-like git@host:path), not a NAMESPACE/NAME.
func isRepoURL(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	at := strings.Index(s, "@")
	colon := strings.Index(s, ":")
	return at > 0 && colon > at
}

// checkoutOf is the checkout of a source: the one --source maps its name
// (NAMESPACE/NAME, of a GitRepository) or its URL to, else --git when the
// URL is one of its remotes; or what to give to have one. what names the
// source in that message.
func (g *GitFlags) checkoutOf(name, url, what string) (dir, missing string) {
	if c, ok := g.sources[name]; ok && name != "" {
		return c.Dir, ""
	}
	if c, ok := g.urls[gitops.NormalizeURL(url)]; ok && url != "" {
		return c.Dir, ""
	}
	if g.checkout != nil {
		if _, ok := g.checkout.Matches(url); ok {
			return g.checkout.Dir, ""
		}
	}
	if name == "" {
		return "", fmt.Sprintf("no checkout of %s: give --%s a clone of it, or --%s %s=DIR", what, flagGit, flagSource, url)
	}
	return "", fmt.Sprintf("no checkout of %s: give --%s a clone of it, or --%s %s=DIR", what, flagGit, flagSource, name)
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
