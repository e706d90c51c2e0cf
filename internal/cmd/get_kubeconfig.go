package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

const (
	flagOutputFile  = "output-file"
	flagForce       = "force"
	flagMerge       = "merge"
	flagContextName = "context-name"
	flagSetCurrent  = "set-current"
	flagUser        = "user"
)

// GetKubeconfigOptions are the flags and arguments of `kubectl fleet get-kubeconfig`.
type GetKubeconfigOptions struct {
	*RootOptions

	Path        string
	User        bool
	OutputFile  string
	Force       bool
	Merge       bool
	ContextName string
	SetCurrent  bool
	Timeout     time.Duration

	segments []fleet.Segment
	// mergeInto is the kubeconfig file --merge writes: the one in use.
	mergeInto string
}

// NewCmdGetKubeconfig builds `kubectl fleet get-kubeconfig`.
func NewCmdGetKubeconfig(root *RootOptions) *cobra.Command {
	o := &GetKubeconfigOptions{RootOptions: root, Timeout: NewWalkFlags().Timeout}
	cmd := &cobra.Command{
		Use:   "get-kubeconfig PATH",
		Short: "Print, save or merge the kubeconfig of any cluster of the fleet",
		Long: templates.LongDesc(`
			Print the kubeconfig of the cluster at PATH, read from the
			CLUSTER-kubeconfig Secret CAPI keeps beside its Cluster object in
			the parent, however deep the cluster is: aws is a master's,
			aws/team-a a tenant's. The clusters on the way are reached as tree
			reaches them, under the same kubeconfig policy; the cluster at PATH
			itself is not contacted.

			The kubeconfig is printed as the Secret holds it. A warning goes to
			stderr when it is an admin (system:masters) credential, when it runs
			an exec credential plugin (kubectl will run it, kubectl fleet never
			does), and for each local file path, proxy, insecure TLS or
			impersonation it asks for.

			--merge adds it to the kubeconfig in use (--kubeconfig, else the
			first existing file of KUBECONFIG, else ~/.kube/config) under a
			context named after the path, fleet-aws-team-a, with a cluster and a
			user of the same name: in place, every other byte kept, atomically,
			under kubectl's lock. Merging again replaces the three entries.

			--user picks the provider's kubeconfig for people instead of the
			admin one: CAPA's CLUSTER-user-kubeconfig, CAPZ's
			CLUSTER-kubeconfig-user.`),
		Example: templates.Examples(`
			# The kubeconfig of tenant team-a of the aws master
			kubectl fleet get-kubeconfig aws/team-a > team-a.kubeconfig

			# Into a new file, mode 0600
			kubectl fleet get-kubeconfig aws/team-a --output-file team-a.kubeconfig

			# Into your kubeconfig, as context fleet-aws-team-a, and switch to it
			kubectl fleet get-kubeconfig aws/team-a --merge --set-current

			# The EKS user kubeconfig CAPA writes (aws eks get-token)
			kubectl fleet get-kubeconfig aws/team-a --user --merge --context-name team-a`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completePaths(root),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.User, flagUser, false, "The provider's user kubeconfig (CAPA <cluster>-user-kubeconfig, CAPZ <cluster>-kubeconfig-user) instead of the admin one")
	f.StringVar(&o.OutputFile, flagOutputFile, "", "Write the kubeconfig to this new file (mode 0600) instead of stdout")
	f.BoolVar(&o.Force, flagForce, false, "With --output-file: overwrite an existing file")
	f.BoolVar(&o.Merge, flagMerge, false, "Merge into the kubeconfig in use instead of printing")
	f.StringVar(&o.ContextName, flagContextName, "", "With --merge: the name of the context, cluster and user (default fleet-PATH)")
	f.BoolVar(&o.SetCurrent, flagSetCurrent, false, "With --merge: make it the current context")
	f.DurationVar(&o.Timeout, flagTimeout, o.Timeout, "Time allowed per cluster on the way to PATH")
	return cmd
}

// Complete parses PATH and finds the kubeconfig file --merge writes.
func (o *GetKubeconfigOptions) Complete(args []string) error {
	o.Path = args[0]
	var err error
	if o.segments, err = fleet.ParsePath(o.Path); err != nil {
		return err
	}
	if len(o.segments) == 0 {
		return fleet.ErrRootPath
	}
	if o.Merge {
		po := clientcmd.NewDefaultPathOptions()
		if o.ConfigFlags.KubeConfig != nil && *o.ConfigFlags.KubeConfig != "" {
			po.LoadingRules.ExplicitPath = *o.ConfigFlags.KubeConfig
		}
		o.mergeInto = po.GetDefaultFilename()
	}
	return nil
}

// Validate checks the flags, one message per conflict.
func (o *GetKubeconfigOptions) Validate() error {
	var errs []error
	if err := o.validateShared(); err != nil {
		errs = append(errs, err)
	}
	if o.Merge && o.OutputFile != "" {
		errs = append(errs, fmt.Errorf("--%s cannot be used with --%s: merge into your kubeconfig, or write a file of its own", flagMerge, flagOutputFile))
	}
	if o.Force && o.OutputFile == "" {
		errs = append(errs, fmt.Errorf("--%s only applies to --%s", flagForce, flagOutputFile))
	}
	if !o.Merge && (o.ContextName != "" || o.SetCurrent) {
		errs = append(errs, fmt.Errorf("--%s and --%s only apply to --%s", flagContextName, flagSetCurrent, flagMerge))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("invalid --%s %s: it must be positive", flagTimeout, o.Timeout))
	}
	return errors.Join(errs...)
}

// Run reads the Secret and prints, writes or merges it.
func (o *GetKubeconfigOptions) Run(ctx context.Context) error {
	root, _, err := o.rootCluster(o.policy(), false, o.Timeout)
	if err != nil {
		return err
	}
	target, err := fleet.Resolve(ctx, root, o.segments, o.Timeout)
	if err != nil {
		return err
	}
	inv, e, ok := o.Providers.Inventory(target.Child.Edges)
	if !ok {
		return fmt.Errorf("cluster %s: no edge of %s leads to it that kubectl fleet can follow", target.Path, fleet.DescribePath(target.ParentPath))
	}
	// Walking as yourself (--credentials user) hands out the user
	// kubeconfig too (the provider reads the policy's credentials).
	src, data, err := inv.Kubeconfig(ctx, provider.KubeconfigRequest{
		Parent: target.Parent.Kube(), ParentPath: target.ParentPath, Path: target.Path,
		Child: target.Child, Edge: e, User: o.User, Policy: o.policy(),
	})
	if err != nil {
		return err
	}
	return o.handOut(target, src, data)
}

// handOut prints, writes or merges data, a kubeconfig read from src.
func (o *GetKubeconfigOptions) handOut(target *fleet.Target[*reach.Cluster], src kubeconfig.Source, data []byte) error {
	in, err := kubeconfig.Inspect(src, data)
	if err != nil {
		return err
	}
	if o.Merge {
		return o.merge(target, src, in)
	}
	o.warn(target, src, in)
	// Only the context the Secret's current-context names is handed out:
	// whatever else the Secret holds was checked (LeftOut), never written.
	minimal, err := in.Minimal()
	if err != nil {
		return err
	}
	if o.OutputFile != "" {
		return o.writeFile(target, minimal)
	}
	_, err = o.Out.Write(minimal)
	return err
}

// warn tells the operator what the kubeconfig will do in their hands.
func (o *GetKubeconfigOptions) warn(target *fleet.Target[*reach.Cluster], src kubeconfig.Source, in *kubeconfig.Inspection) {
	if in.Admin {
		printLine(o.ErrOut, "warning: %s is an admin credential (system:masters) of %s: it can do anything there", src, target.Path)
	}
	if in.Exec != nil {
		printLine(o.ErrOut, "warning: %s runs a command to get credentials, which kubectl will run (kubectl fleet did not): %s", src, quoteCommand(in.Exec.Command, in.Exec.Args))
	}
	for _, r := range in.Refused {
		printLine(o.ErrOut, "warning: %s", r)
	}
	for _, r := range in.LeftOut {
		printLine(o.ErrOut, "warning: %s; left out: only context %q is handed out", r, in.Context)
	}
}

func quoteCommand(command string, args []string) string {
	parts := []string{fmt.Sprintf("%q", command)}
	for _, a := range args {
		parts = append(parts, fmt.Sprintf("%q", a))
	}
	return strings.Join(parts, " ")
}

func (o *GetKubeconfigOptions) writeFile(target *fleet.Target[*reach.Cluster], data []byte) error {
	// Only a new path, or with --force a regular file, is written: never
	// a device, a FIFO, a directory or a symlink to one of them (or to
	// anything: a symlink is refused too), whose mode a chmod would change.
	info, err := os.Lstat(o.OutputFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("failed to write the kubeconfig: %w", err)
	case !o.Force:
		return fmt.Errorf("%s already exists: use --%s to overwrite it", o.OutputFile, flagForce)
	case !info.Mode().IsRegular():
		return fmt.Errorf("refusing to write %s: it is not a regular file (%s); give a new path or a regular file", o.OutputFile, fileKind(info.Mode()))
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if o.Force {
		flags = os.O_WRONLY | os.O_CREATE
	}
	f, err := os.OpenFile(o.OutputFile, flags, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s already exists: use --%s to overwrite it", o.OutputFile, flagForce)
	}
	if err != nil {
		return fmt.Errorf("failed to write the kubeconfig: %w", err)
	}
	write := func() error {
		// What was opened may have been swapped since the Lstat.
		if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
			return fmt.Errorf("refusing to write %s: it is not a regular file", o.OutputFile)
		}
		// An overwritten file may have had a looser mode: a kubeconfig is 0600.
		if err := f.Chmod(0o600); err != nil {
			return err
		}
		if err := f.Truncate(0); err != nil {
			return err
		}
		_, err := f.Write(data)
		return err
	}
	if err := errors.Join(write(), f.Close()); err != nil {
		return fmt.Errorf("failed to write %s: %w", o.OutputFile, err)
	}
	printLine(o.ErrOut, "wrote the kubeconfig of %s to %s", target.Path, o.OutputFile)
	return nil
}

// fileKind names what a non-regular file is, for an error.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// merge adds the kubeconfig to the operator's own. Fields that would make
// kubectl read local files or bypass TLS are refused here: once merged, the
// entry is trusted as the operator's own.
func (o *GetKubeconfigOptions) merge(target *fleet.Target[*reach.Cluster], src kubeconfig.Source, in *kubeconfig.Inspection) error {
	if len(in.Refused) > 0 {
		return fmt.Errorf("refusing to merge it into %s: %w", o.mergeInto, in.Refused[0])
	}
	o.warn(target, src, in)
	name := o.ContextName
	if name == "" {
		name = "fleet-" + strings.NewReplacer("/", "-", ":", "-").Replace(target.Path)
	}
	res, err := kubeconfig.MergeFile(o.mergeInto, kubeconfig.Entry{Name: name, Cluster: in.Cluster, User: in.User}, o.SetCurrent)
	if err != nil {
		return err
	}
	verb := "added"
	if res.Replaced {
		verb = "replaced"
	}
	printLine(o.ErrOut, "%s context %q (cluster %s) in %s", verb, name, target.Path, res.Path)
	if res.Normalized {
		printLine(o.ErrOut, "warning: %s could not be edited in place (flow-style YAML?): it was rewritten whole, every entry kept, comments and layout not", res.Path)
	}
	if o.SetCurrent {
		printLine(o.ErrOut, "switched to context %q", name)
	}
	return nil
}
