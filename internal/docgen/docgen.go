// Package docgen writes docs/reference: one Markdown page per command,
// generated from the cobra command tree, so that the reference cannot drift
// from the flags the plugin really has; and docs/rbac, the ClusterRoles of
// the access the integrations need. A test fails when the committed
// pages are stale; `make docs` rewrites them.
package docgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-fleet/kubectl-fleet/internal/check"
	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
)

// Generate writes the reference pages into dir, replacing what was there.
func Generate(dir string) error {
	root := cmd.NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard(), cmd.Deps{})
	home, _ := os.UserHomeDir()
	prepare(root, home)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("failed to clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("failed to generate the reference: %w", err)
	}
	return nil
}

// GenerateRoles writes the ClusterRoles of docs/rbac under root, the
// repository's directory.
func GenerateRoles(root string) error {
	roles, err := check.ClusterRoles(registry.Providers())
	if err != nil {
		return err
	}
	for _, r := range roles {
		path := filepath.Join(root, r.File)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("failed to create %s: %w", filepath.Dir(path), err)
		}
		if err := os.WriteFile(path, r.Data, 0o644); err != nil {
			return fmt.Errorf("failed to write %s: %w", path, err)
		}
	}
	return nil
}

// prepare makes the pages the same on every machine: no generation date,
// and "$HOME" in defaults that hold the home directory (--cache-dir).
func prepare(c *cobra.Command, home string) {
	c.DisableAutoGenTag = true
	if home != "" {
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) {
			f.DefValue = strings.ReplaceAll(f.DefValue, home, "$HOME")
		})
	}
	for _, sub := range c.Commands() {
		prepare(sub, home)
	}
}
