// Package execguard decides whether a kubectl command line only reads. It
// resolves the command as kubectl itself does: with cobra's Find and flag
// parsing on kubectl's own command tree and flag definitions, carried as
// data taken from k8s.io/kubectl (tree.go). It allows a list of reads by
// name (reads.go). Anything else is not a read: a command that writes, one
// that opens a listener or acts inside a workload, and any command line
// that does not resolve to a kubectl command (a plugin, an alias, a typo,
// a flag kubectl does not know).
package execguard

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Guard resolves kubectl command lines. Build one with New and keep it.
type Guard struct {
	// mu serialises Find: cobra merges flag sets as it finds, even when
	// there is nothing new to merge.
	mu   sync.Mutex
	root *cobra.Command
	// kubectl is the kubectl release whose commands these are: "1.36.4".
	kubectl string
}

// Verdict is what kubectl would run for a command line, and whether it
// only reads.
type Verdict struct {
	// Command is the command kubectl resolves the line to, as its path
	// below kubectl ("rollout status"), whatever alias was typed; "" when
	// the line resolves to no command.
	Command string
	// Read is true for a command of the list of reads whose flags kubectl
	// parses.
	Read bool
	// Why says why the line is not a read; "" for a read.
	Why string
	// Target is a flag on the line that chooses the cluster or the
	// credentials kubectl uses ("--server"), whatever its spelling; "".
	Target string
}

// targets are kubectl's flags that choose the cluster or the credentials:
// kubectl fleet chooses them.
var targets = []string{"kubeconfig", "context", "cluster", "server", "user", "token", "username", "password"}

// New builds kubectl's command tree from the copy kubectl fleet carries.
func New() (*Guard, error) {
	t, err := loadTree()
	if err != nil {
		return nil, err
	}
	return &Guard{root: Build(t.Root, nil), kubectl: t.Kubectl}, nil
}

// Kubectl is the kubectl release whose commands the guard knows: "1.36.4".
func (g *Guard) Kubectl() string { return g.kubectl }

// Judge resolves args, a kubectl command line without "kubectl", and says
// whether it only reads.
func (g *Guard) Judge(args []string) Verdict {
	g.mu.Lock()
	found, rest, err := g.root.Find(args)
	var v Verdict
	if err == nil && found != g.root {
		v.Command = strings.TrimPrefix(found.CommandPath(), g.root.Name()+" ")
	}
	strict, lenient := parseSet(found), parseSet(found)
	g.mu.Unlock()

	// The flags as kubectl parses them: strictly, as kubectl does, to know
	// a read's; leniently too, to find a target flag on any line.
	var parseErr error
	if !found.DisableFlagParsing {
		parseErr = strict.Parse(rest)
	}
	lenient.ParseErrorsAllowlist.UnknownFlags = true
	_ = lenient.Parse(rest)
	for _, name := range targets {
		if f := lenient.Lookup(name); f != nil && f.Changed {
			v.Target = "--" + name
			break
		}
	}

	switch {
	case err != nil:
		// cobra's message without its suggestions: unknown command "x" for "kubectl".
		msg, _, _ := strings.Cut(err.Error(), "\n")
		v.Why = msg + ": not a command of kubectl " + g.kubectl + ", so kubectl fleet cannot tell what it does (a plugin, an alias, a typo, or a flag before it that kubectl does not know?)"
	case v.Command == "":
		v.Why = "the arguments name no kubectl command"
	case listener[v.Command]:
		v.Why = "kubectl " + v.Command + " opens a listener on this machine into each cluster"
	case inside[v.Command]:
		v.Why = "kubectl " + v.Command + " acts inside the clusters' workloads"
	case reads[v.Command] == "":
		v.Why = "kubectl " + v.Command + " can write to the clusters"
	case parseErr != nil:
		v.Why = fmt.Sprintf("kubectl %s: %v, as kubectl %s parses it, so kubectl fleet cannot tell what it does", v.Command, parseErr, g.kubectl)
	default:
		v.Read = true
	}
	return v
}

// parseSet is a flag set for one parse of c's flags: c's own and those it
// inherits, with values of their own. Call it with g.mu held.
func parseSet(c *cobra.Command) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(c.Flags().GetNormalizeFunc())
	fs.ParseErrorsAllowlist.UnknownFlags = c.FParseErrWhitelist.UnknownFlags
	add := func(f *pflag.Flag) {
		if fs.Lookup(f.Name) == nil {
			fs.AddFlag(StandIn(f))
		}
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return fs
}
