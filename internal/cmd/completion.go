package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"
)

// CompletionHelperName is the executable kubectl (1.26 and later) runs to
// complete the arguments of `kubectl fleet`: kubectl_complete-<plugin>.
const CompletionHelperName = "kubectl_complete-fleet"

const flagDir = "dir"

// CompletionHelper returns the file name and content of the completion
// helper for goos: a script that asks the plugin itself, through kubectl, so
// that it keeps working when the plugin is upgraded.
func CompletionHelper(goos string) (string, []byte) {
	if goos == "windows" {
		return CompletionHelperName + ".cmd", []byte("@echo off\r\nrem Shell completion for kubectl fleet; written by `kubectl fleet completion install`.\r\nkubectl fleet __complete %*\r\n")
	}
	return CompletionHelperName, []byte(`#!/usr/bin/env sh
# Shell completion for kubectl fleet: kubectl (1.26 and later) runs
# kubectl_complete-fleet to complete "kubectl fleet ...". Written by
# "kubectl fleet completion install"; it survives plugin upgrades.
exec kubectl fleet __complete "$@"
`)
}

// NewCmdCompletion builds `kubectl fleet completion`.
func NewCmdCompletion(root *RootOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion SHELL",
		Short: "Shell completion: scripts for bash, zsh, fish and PowerShell, and the kubectl helper",
		Long: templates.LongDesc(`
			Completion works two ways. Through kubectl (1.26 and later), which
			completes "kubectl fleet ..." by running a helper named
			kubectl_complete-fleet from your PATH: "kubectl fleet completion
			install" writes it next to the plugin ($KREW_ROOT/bin, or --dir).
			krew links only the plugin itself, so the helper is written once by
			hand and asks the installed plugin, whatever its version.

			And for the kubectl-fleet binary called by its own name: the scripts
			of "completion bash|zsh|fish|powershell", loaded as any cobra
			completion script.`),
		Example: templates.Examples(`
			# Complete "kubectl fleet ..." in any shell kubectl completes
			kubectl fleet completion install

			# Or into a directory of your PATH
			kubectl fleet completion install --dir ~/bin

			# Complete "kubectl-fleet ..." in bash
			source <(kubectl fleet completion bash)`),
		Args: cobra.NoArgs,
	}
	// Run as the flux plugin, flux completes "flux fleet ..." itself, by
	// running this binary's __complete (RFC-0013): no helper to install.
	asFlux := root.Name != kubectlName
	binary := strings.ReplaceAll(root.Name, " ", "-")
	if asFlux {
		cmd.Short = "Shell completion scripts for bash, zsh, fish and PowerShell"
		cmd.Long = templates.LongDesc(`
			Run as the flux plugin, "flux fleet ..." completes through flux's
			own completion ("flux completion bash|zsh|fish|powershell"), which
			asks this plugin: there is nothing to install.

			And for the flux-fleet binary called by its own name: the scripts
			of "completion bash|zsh|fish|powershell", loaded as any cobra
			completion script.`)
		cmd.Example = templates.Examples(`
			# Complete "flux fleet ..." (and the rest of flux) in bash
			source <(flux completion bash)

			# Complete "flux-fleet ..." in bash
			source <(flux fleet completion bash)`)
	}
	gen := map[string]func(c *cobra.Command) error{
		"bash":       func(c *cobra.Command) error { return c.Root().GenBashCompletionV2(root.Out, true) },
		"zsh":        func(c *cobra.Command) error { return c.Root().GenZshCompletion(root.Out) },
		"fish":       func(c *cobra.Command) error { return c.Root().GenFishCompletion(root.Out, true) },
		"powershell": func(c *cobra.Command) error { return c.Root().GenPowerShellCompletionWithDesc(root.Out) },
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		cmd.AddCommand(&cobra.Command{
			Use:     shell,
			Short:   "Print the " + shell + " completion script for " + binary,
			Example: templates.Examples(fmt.Sprintf("%s completion %s > %s.%s", root.Name, shell, binary, shell)),
			Args:    cobra.NoArgs,
			RunE:    func(c *cobra.Command, _ []string) error { return gen[shell](c) },
		})
	}
	var dir string
	install := &cobra.Command{
		Use:   "install",
		Short: "Write the kubectl_complete-fleet helper next to the plugin",
		// flux completes its plugins itself.
		Hidden: asFlux,
		Example: templates.Examples(`
			kubectl fleet completion install
			kubectl fleet completion install --dir /usr/local/bin`),
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if dir == "" {
				var err error
				if dir, err = krewBin(); err != nil {
					return err
				}
			}
			name, content := CompletionHelper(runtime.GOOS)
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("failed to create %s: %w", dir, err)
			}
			if err := os.WriteFile(path, content, 0o755); err != nil { //nolint:gosec // an executable script
				return fmt.Errorf("failed to write the completion helper: %w", err)
			}
			// An existing file keeps its old mode through WriteFile.
			if err := os.Chmod(path, 0o755); err != nil {
				return fmt.Errorf("failed to make %s executable: %w", path, err)
			}
			fmt.Fprintf(root.ErrOut, "wrote %s: kubectl now completes \"kubectl fleet ...\" (kubectl 1.26 or later, with %s on your PATH)\n", path, dir)
			return nil
		},
	}
	install.Flags().StringVar(&dir, flagDir, "", "Directory to write the helper to (default $KREW_ROOT/bin, else ~/.krew/bin)")
	cmd.AddCommand(install)
	return cmd
}

// krewBin is where krew links plugins: $KREW_ROOT/bin, or ~/.krew/bin.
func krewBin() (string, error) {
	if root := os.Getenv("KREW_ROOT"); root != "" {
		return filepath.Join(root, "bin"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find your home directory: give the helper's directory with --dir")
	}
	return filepath.Join(home, ".krew", "bin"), nil
}
