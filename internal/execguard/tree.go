package execguard

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// kubectlJSON is kubectl's command tree as k8s.io/kubectl builds it (its
// commands, their aliases and their flags), written by the test in
// internal/execguard/fromkubectl from the module this project requires, and
// checked by it on every test run. kubectl fleet resolves command lines on
// a cobra tree rebuilt from it: kubectl's own resolution, without linking
// kubectl's hundred packages of commands into the plugin (25 MB).
//
//go:embed kubectl.json
var kubectlJSON []byte

// Tree is kubectl's command tree, as data.
type Tree struct {
	// Kubectl is the release whose commands these are: "1.36.4".
	Kubectl string  `json:"kubectl"`
	Root    Command `json:"root"`
}

// Command is one kubectl command: what cobra needs to find it and parse
// its flags.
type Command struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	// Runnable is a command that runs (kubectl's group commands print
	// their help).
	Runnable bool `json:"runnable,omitempty"`
	// NoArgsCheck is a command without an Args check: cobra's Find then
	// fails on an argument that is not one of its subcommands, at the root.
	NoArgsCheck        bool      `json:"noArgsCheck,omitempty"`
	DisableFlagParsing bool      `json:"disableFlagParsing,omitempty"`
	UnknownFlags       bool      `json:"unknownFlags,omitempty"`
	Flags              []Flag    `json:"flags,omitempty"`
	Persistent         []Flag    `json:"persistentFlags,omitempty"`
	Commands           []Command `json:"commands,omitempty"`
}

// Flag is one flag: its names and whether it takes a value.
type Flag struct {
	Name      string `json:"name"`
	Shorthand string `json:"shorthand,omitempty"`
	Type      string `json:"type"`
	// NoOptDefVal is the value of the flag given without one ("true" for
	// a bool): such a flag never takes the next argument as its value.
	NoOptDefVal string `json:"noOptDefVal,omitempty"`
}

// Dump is root's tree as data: its commands but cobra's help command,
// which Build adds as cobra does, and each command's own flags, its help
// flag included.
func Dump(root *cobra.Command) Command {
	c := Command{
		Name:               root.Name(),
		Aliases:            root.Aliases,
		Runnable:           root.Runnable(),
		NoArgsCheck:        root.Args == nil,
		DisableFlagParsing: root.DisableFlagParsing,
		UnknownFlags:       root.FParseErrWhitelist.UnknownFlags,
		Flags:              dumpFlags(root.LocalNonPersistentFlags()),
		Persistent:         dumpFlags(root.PersistentFlags()),
	}
	for _, sub := range root.Commands() {
		if sub.Name() == "help" && !root.HasParent() {
			continue // cobra's own, which Build adds as cobra does
		}
		c.Commands = append(c.Commands, Dump(sub))
	}
	return c
}

// dumpFlags are the flags of fs but those cobra merges from
// pflag.CommandLine, which are the process's, not kubectl's.
func dumpFlags(fs *pflag.FlagSet) []Flag {
	var out []Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if pflag.CommandLine.Lookup(f.Name) != nil {
			return
		}
		out = append(out, flagOf(f))
	})
	return out
}

func flagOf(f *pflag.Flag) Flag {
	return Flag{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(), NoOptDefVal: f.NoOptDefVal}
}

// StandIn is f with a value of its own that keeps what it is given: f's
// names and syntax, none of its effects.
func StandIn(f *pflag.Flag) *pflag.Flag { return flagOf(f).standIn() }

// Recorder is what cobra's Execute of kubectl's tree runs, when each
// runnable command's RunE is Record: the oracle the tests hold the guard
// to.
type Recorder struct {
	// Kubeconfig is the --kubeconfig given before the command line.
	Kubeconfig string
	// Ran is the command that ran, as Verdict.Command names it; "" for
	// none, or kubectl's root, which prints its help.
	Ran string
	// Targets are the target flags set on it, but a --kubeconfig that is
	// Kubeconfig.
	Targets []string
}

// Record is a RunE that records c and its target flags.
func (r *Recorder) Record(c *cobra.Command, _ []string) error {
	if c.HasParent() {
		r.Ran = strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
	}
	for _, name := range targets {
		f := c.Flags().Lookup(name)
		if f != nil && f.Changed && (name != "kubeconfig" || f.Value.String() != r.Kubeconfig) {
			r.Targets = append(r.Targets, name)
		}
	}
	return nil
}

// loadTree reads the embedded tree.
func loadTree() (*Tree, error) {
	t := &Tree{}
	if err := json.Unmarshal(kubectlJSON, t); err != nil {
		return nil, fmt.Errorf("kubectl's command tree built into kubectl fleet is corrupt: %w", err)
	}
	return t, nil
}

// Build makes a cobra tree of c whose commands run nothing, and whose flags
// keep what they are given: cobra's Find and flag parsing on it resolve a
// command line as kubectl does. run, when not nil, is each runnable
// command's RunE. Flag names are normalised as kubectl's are: "_" is "-".
func Build(c Command, run func(*cobra.Command, []string) error) *cobra.Command {
	root := build(c, run)
	root.SetGlobalNormalizationFunc(wordSeparators)
	root.InitDefaultHelpCmd()
	return root
}

func build(c Command, run func(*cobra.Command, []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:                c.Name,
		Aliases:            c.Aliases,
		DisableFlagParsing: c.DisableFlagParsing,
		SilenceErrors:      true,
		SilenceUsage:       true,
	}
	cmd.FParseErrWhitelist.UnknownFlags = c.UnknownFlags
	if !c.NoArgsCheck {
		cmd.Args = cobra.ArbitraryArgs
	}
	if c.Runnable {
		cmd.RunE = func(*cobra.Command, []string) error { return nil }
		if run != nil {
			cmd.RunE = run
		}
	}
	for _, f := range c.Flags {
		cmd.Flags().AddFlag(f.standIn())
	}
	for _, f := range c.Persistent {
		cmd.PersistentFlags().AddFlag(f.standIn())
	}
	for _, sub := range c.Commands {
		cmd.AddCommand(build(sub, run))
	}
	return cmd
}

// standIn is the flag with a value that keeps what it is given.
func (f Flag) standIn() *pflag.Flag {
	def := ""
	if f.Type == "bool" {
		def = "false"
	}
	return &pflag.Flag{Name: f.Name, Shorthand: f.Shorthand, NoOptDefVal: f.NoOptDefVal, DefValue: def, Value: &value{typ: f.Type, s: def}}
}

type value struct{ typ, s string }

func (v *value) String() string     { return v.s }
func (v *value) Set(s string) error { v.s = s; return nil }
func (v *value) Type() string       { return v.typ }

// wordSeparators is kubectl's flag name normalisation
// (k8s.io/component-base/cli/flag.WordSepNormalizeFunc): "--cache_dir" is
// "--cache-dir".
func wordSeparators(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}
