// Package cmd holds the commands of kubectl fleet: one file per command, each
// an Options struct with Complete, Validate and Run. Commands parse flags,
// build connections and hand the fleet model to package render; they never
// talk to a cluster directly beyond building the root connection.
package cmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Flag names shared by several commands.
const (
	flagColor       = "color"
	flagOutput      = "output"
	flagTimeout     = "timeout"
	flagConcurrency = "concurrency"
	flagDepth       = "depth"
	flagAllowExec   = "allow-exec"
	flagChunkSize   = "chunk-size"
)

// Values of --color.
const (
	colorAuto   = "auto"
	colorAlways = "always"
	colorNever  = "never"
)

// RootOptions are the flags every command shares: the kubectl connection
// flags of the root cluster, and how output looks.
type RootOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
	// Color is auto, always or never.
	Color string
	// AllowExec lists exec credential plugins, by name or path, that
	// kubeconfigs read from Secrets may run while walking.
	AllowExec []string
	// Kuberc is kubectl's --kuberc: the file of the operator's credential
	// plugin policy. FleetConfig is kubectl fleet's own settings file.
	Kuberc, FleetConfig string
	// Credentials is --credentials: admin, user or user,admin.
	Credentials string
	// Providers are the integrations, from the registry: their flags are
	// among the root's, and everything the commands reach of an
	// integration goes through them.
	Providers provider.Set
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string
	// Name is the command as the user types it: "kubectl fleet", or
	// "flux fleet" when the flux CLI runs this binary as its plugin.
	Name string

	// ChunkSize is how many objects each request of a list asks for
	// (--chunk-size, as kubectl's); 0 reads each list in one request.
	ChunkSize int64

	requests *kube.RequestLog
	deps     Deps
	// retain makes the walk keep what it reads of each cluster for a
	// watch to keep up to date (kube.Options.Retain): --watch.
	retain bool

	// loaded are the operator's settings, read once (loadSettings): a
	// pointer, shared by the copies of the options a command makes.
	loaded *loadedSettings
	// settingsReported says the command reports what is wrong with the
	// settings (check): a route that cannot be built is then left out
	// rather than failing the connection.
	settingsReported bool
}

// Deps are what the commands reach clusters with. The zero value is the
// network, which main uses; tests pass an in-memory fleet's.
type Deps struct {
	// Dial, when set, reaches every cluster instead of the network
	// (kube.Options.Dial).
	Dial func(cfg *rest.Config) (*kube.Dialled, error)
	// Document, when set, takes the document a command prints with -o
	// json (the tree's root node, the list, the report) instead of
	// printing it: the MCP server's tools run the commands for it.
	Document func(v any)
	// Progress, when set, is handed the counters of each walk as it starts.
	Progress func(p *fleet.Progress)
	// Walked, when set, is handed each walk's result once it is read: the
	// MCP server closes the connections a command kept, after the call.
	Walked func(res *fleet.Result[*reach.Cluster])
	// MCPTransport, when set, is what `mcp` serves on instead of stdio or
	// HTTP: the tests' in-memory client.
	MCPTransport mcp.Transport
	// Connections, when set, changes the options of every connection
	// before the first is made: the tests' bounds on a list, and their
	// hooks between its pages.
	Connections func(*kube.Options)
}

// NewCmdRoot builds the kubectl fleet command tree, reaching clusters
// with deps.
func NewCmdRoot(streams genericiooptions.IOStreams, deps Deps) *cobra.Command {
	root, _ := newCmdRoot(streams, deps)
	return root
}

func newCmdRoot(streams genericiooptions.IOStreams, deps Deps) (*cobra.Command, *RootOptions) {
	binary, name := invokedAs(os.Args[0])
	o := &RootOptions{
		deps:        deps,
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
		Color:       colorAuto,
		ChunkSize:   kube.DefaultChunkSize,
		Getenv:      os.Getenv,
		Name:        name,
		Providers:   registry.Providers(),
		loaded:      &loadedSettings{},
	}
	root := &cobra.Command{
		Use:           binary,
		Short:         "See and operate a Cluster API + Flux fleet as one",
		Long:          templates.LongDesc(rootHelp(o.Providers.EdgeKinds())),
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: name},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)

	flags := root.PersistentFlags()
	o.ConfigFlags.AddFlags(flags)
	flags.StringVar(&o.Color, flagColor, o.Color, "Colour the output: auto (on a terminal, unless NO_COLOR is set), always or never")
	flags.StringSliceVar(&o.AllowExec, flagAllowExec, nil, "Exec credential plugins, by name (found on PATH) or path, that kubeconfigs read from Secrets may run, beside kuberc's credentialPluginAllowlist (comma-separated)")
	flags.StringVar(&o.Kuberc, flagKuberc, "", "Path to the kuberc file whose credentialPluginPolicy and credentialPluginAllowlist apply (default KUBERC, else ~/.kube/kuberc)")
	flags.StringVar(&o.FleetConfig, flagFleetConfig, "", "Path to kubectl fleet's config file: allowed plugins tied to servers, default credentials, routes (default ~/.kube/fleet.yaml)")
	flags.StringVar(&o.Credentials, flagCredentials, "", "Which kubeconfig reaches each cluster: admin (CAPI's CLUSTER-kubeconfig), user (the provider's user kubeconfig, which logs in as you), or user,admin (user, else admin); default the fleet config's, else admin")
	flags.Int64Var(&o.ChunkSize, flagChunkSize, o.ChunkSize, "Read lists in pages of this many objects, as kubectl does (0: each list in one request)")
	o.Providers.AddFlags(flags)
	addKlogVerbosity(root)
	completeValues(root, flagColor, colorAuto, colorAlways, colorNever)

	root.AddCommand(
		NewCmdCheck(o),
		NewCmdTree(o),
		NewCmdList(o),
		NewCmdDrift(o),
		NewCmdDiff(o),
		NewCmdDescribe(o),
		NewCmdExec(o),
		NewCmdGet(o),
		NewCmdGetKubeconfig(o),
		NewCmdReconcile(o),
		NewCmdSuspend(o),
		NewCmdResume(o),
		NewCmdFreeze(o),
		NewCmdThaw(o),
		NewCmdFreezes(o),
		NewCmdMCP(o),
		NewCmdUI(o),
		NewCmdVersion(o),
		NewCmdCompletion(o),
	)
	// The completion command above replaces cobra's default one.
	root.CompletionOptions.DisableDefaultCmd = true
	if name != kubectlName {
		renameHelp(root, strings.NewReplacer(kubectlName, name))
	}
	return root, o
}

// The names kubectl fleet runs by: as the kubectl plugin, and as the flux
// plugin (RFC-0013), which `flux plugin install fleet` writes into flux's
// plugin directory.
const (
	kubectlName = "kubectl fleet"
	// FluxPluginBinary is the binary flux runs for `flux fleet`.
	FluxPluginBinary = "flux-fleet"
)

// invokedAs is the root's binary name and the command as the user types
// it, from the name the binary was run by: flux runs a plugin by its path,
// flux-fleet in its plugin directory, with its own environment and
// nothing else that says so (RFC-0013); kubectl runs kubectl-fleet.
func invokedAs(argv0 string) (binary, name string) {
	if strings.TrimSuffix(filepath.Base(argv0), ".exe") == FluxPluginBinary {
		return FluxPluginBinary, "flux fleet"
	}
	return "kubectl-fleet", kubectlName
}

// renameHelp rewrites the help of cmd and its subcommands, whose examples
// and descriptions are written as "kubectl fleet …", for the command as
// the user types it.
func renameHelp(cmd *cobra.Command, r *strings.Replacer) {
	cmd.Short, cmd.Long, cmd.Example = r.Replace(cmd.Short), r.Replace(cmd.Long), r.Replace(cmd.Example)
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) { f.Usage = r.Replace(f.Usage) })
	for _, sub := range cmd.Commands() {
		renameHelp(sub, r)
	}
}

// addKlogVerbosity exposes klog's -v, as kubectl does, and nothing else of klog.
func addKlogVerbosity(cmd *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	cmd.PersistentFlags().AddGoFlag(fs.Lookup("v"))
}

// Execute runs the command line args, reaching clusters with deps, and
// returns the process exit code, printing any error once on
// streams.ErrOut.
func Execute(ctx context.Context, streams genericiooptions.IOStreams, args []string, deps Deps) int {
	root, o := newCmdRoot(streams, deps)
	// klog's verbosity is the process's: Execute leaves it as it found it,
	// so that a -v of one run does not log every request of the next one
	// in the same process (the tests run many).
	if v := root.PersistentFlags().Lookup("v"); v != nil {
		old := v.Value.String()
		defer func() { _ = v.Value.Set(old) }()
	}
	root.SetArgs(args)
	err := root.ExecuteContext(withRedactingLogger(ctx))
	if werr := o.writeRequestLog(); werr != nil {
		fmt.Fprintf(streams.ErrOut, "warning: %v\n", werr)
	}
	if cause := interruption(nil); errors.As(context.Cause(ctx), &cause) {
		return interrupted(streams.ErrOut, err, cause)
	}
	return exitCode(streams.ErrOut, err)
}

// validateShared checks the flags every command shares: --color, the
// operator's settings (kuberc, the fleet config, --allow-exec,
// --credentials) and the providers' own.
func (o *RootOptions) validateShared() error {
	var errs []error
	switch o.Color {
	case colorAuto, colorAlways, colorNever:
	default:
		errs = append(errs, fmt.Errorf("invalid --%s %q: use auto, always or never", flagColor, o.Color))
	}
	if o.ChunkSize < 0 {
		errs = append(errs, fmt.Errorf("invalid --%s %d: give a page size, or 0 to read each list in one request", flagChunkSize, o.ChunkSize))
	}
	s, err := o.loadSettings()
	if err != nil {
		errs = append(errs, err)
	}
	if s != nil && s.config != nil {
		errs = append(errs, o.Providers.Configure(s.config.Providers, s.config.File))
	}
	return errors.Join(append(errs, o.Providers.Validate())...)
}

// useColor decides once whether output to w is coloured: --color always or
// never wins; auto colours a terminal unless NO_COLOR is set.
func (o *RootOptions) useColor(w io.Writer) bool {
	switch o.Color {
	case colorAlways:
		return true
	case colorNever:
		return false
	}
	if o.Getenv("NO_COLOR") != "" {
		return false
	}
	return isTerminal(w)
}

// isTerminal reports whether v, one of the command's streams, is a
// terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// completeValues offers fixed values for a flag of cmd.
func completeValues(cmd *cobra.Command, name string, values ...string) {
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// rootHelp is the root command's long help: how the walk goes, and by
// what every inventory holds clusters (its EdgeKind's Holds).
func rootHelp(kinds []fleet.EdgeKind) string {
	var holds []string
	for _, k := range kinds {
		if k.Holds != "" {
			holds = append(holds, k.Holds)
		}
	}
	by := strings.Join(holds, ", ")
	if len(holds) > 1 {
		by = strings.Join(holds[:len(holds)-1], ", ") + " and " + holds[len(holds)-1]
	}
	return "kubectl fleet walks a fleet from the current context down: every cluster the cluster holds, to the clusters those hold, and so on. " +
		"A cluster holds others by " + by + ". It shows the whole fleet with the health its integrations report per cluster.\n\n" +
		"Kubeconfigs read from Secrets are untrusted: exec plugins, auth-provider plugins and local file paths in them are refused."
}
