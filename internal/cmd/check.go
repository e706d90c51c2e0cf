package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-fleet/kubectl-fleet/internal/check"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleetconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// CheckOptions are the flags of `kubectl fleet check`.
type CheckOptions struct {
	*RootOptions
	Depth       int
	Timeout     time.Duration
	Concurrency int
	Output      string
}

// NewCmdCheck builds `kubectl fleet check`.
func NewCmdCheck(root *RootOptions) *cobra.Command {
	o := &CheckOptions{RootOptions: root, Depth: 1, Timeout: NewWalkFlags().Timeout, Concurrency: fleet.DefaultConcurrency}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check that this machine and the current context are ready to walk the fleet",
		Long: templates.LongDesc(`
			Check that this machine and the current context are ready to walk
			the fleet, and say what to do where they are not.

			On the root cluster: whether it answers, its version, and which
			integrations' kinds it serves; the access kubectl fleet needs there,
			asked by SelfSubjectAccessReview, each missing verb with the RBAC
			rule that grants it; your credential plugin policy (kuberc,
			--allow-exec, the fleet config's plugins and routes); every exec
			plugin the root's kubeconfig Secrets name, allowed or not, found or
			not. Then each cluster down to --depth levels: reachable, refused by
			your policy, unreachable or forbidden, each with what to do.

			check writes nothing. It exits 0 when everything is ready and 1 when
			something needs doing.`),
		Example: templates.Examples(`
			# Is the current context ready to walk the fleet?
			kubectl fleet check

			# Reach the tenants too
			kubectl fleet check --depth 2

			# What needs doing, as JSON
			kubectl fleet check -o json | jq -r '.todo[]'`),
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Depth, flagDepth, o.Depth, "How many levels below the root to reach (0: the root alone)")
	f.DurationVar(&o.Timeout, flagTimeout, o.Timeout, "Time allowed for each request")
	f.IntVar(&o.Concurrency, flagConcurrency, o.Concurrency, "How many clusters to reach at once")
	f.StringVarP(&o.Output, flagOutput, "o", "", "Output format: json or yaml")
	completeValues(cmd, flagOutput, outputJSON, outputYAML)
	return cmd
}

// Validate checks check's own flags. The operator's settings are not
// checked here: check reports what is wrong with them.
func (o *CheckOptions) Validate() error {
	switch {
	case o.Depth < 0:
		return fmt.Errorf("invalid --%s %d: give 0 (the root alone) or more levels", flagDepth, o.Depth)
	case o.Timeout <= 0:
		return fmt.Errorf("invalid --%s %s: it must be positive", flagTimeout, o.Timeout)
	case o.Concurrency <= 0:
		return fmt.Errorf("invalid --%s %d: it must be positive", flagConcurrency, o.Concurrency)
	}
	return validateOutput(o.Output)
}

// Run checks, prints the report, and exits 1 when something needs doing.
func (o *CheckOptions) Run(ctx context.Context) error {
	creds := o.credentialsReport()
	// What is wrong with the settings is in the report: the root is
	// reached without the routes that could not be built.
	o.settingsReported = true
	root, name, err := o.rootCluster(o.quietPolicy(), true, o.Timeout)
	if err != nil {
		return err
	}
	defer root.Close()
	report := check.Run(ctx, check.Options{Root: root, Context: name, Providers: o.Providers, Policy: o.quietPolicy(),
		Credentials: creds, Depth: o.Depth, Timeout: o.Timeout, Concurrency: o.Concurrency})
	if err := o.printAs(o.Output, report, func() error { return o.printCheck(o.Out, report) }); err != nil {
		return err
	}
	if !report.Ready {
		return &ExitError{Code: ExitFailure}
	}
	return nil
}

// credentialsReport is the operator's settings as a walk applies them,
// and what is wrong with them.
func (o *RootOptions) credentialsReport() check.Credentials {
	c := check.Credentials{}
	if err := o.validateShared(); err != nil {
		c.Errors = append(c.Errors, strings.Split(err.Error(), "\n")...)
	}
	s, _ := o.loadSettings()
	if s == nil {
		return c
	}
	c.Kuberc, c.Policy = s.plugins.KubercFile, string(s.plugins.Kuberc.PolicyType)
	for _, e := range s.plugins.Kuberc.Allowlist {
		c.Allowlist = append(c.Allowlist, e.Command)
	}
	c.AllowExec = o.AllowExec
	c.Use = s.credentials.String()
	if s.config != nil {
		c.FleetConfig = s.config.File
		for _, p := range s.config.CredentialPlugins {
			entry := p.Command
			if len(p.Servers) > 0 {
				entry += " (servers " + strings.Join(p.Servers, ", ") + ")"
			}
			c.Plugins = append(c.Plugins, entry)
		}
		for _, r := range s.config.Routes {
			c.Routes = append(c.Routes, routeText(r))
		}
		if _, err := o.loadSettings(); err == nil {
			if _, _, err := o.buildRoutes(); err != nil {
				c.Errors = append(c.Errors, err.Error())
			}
		}
	}
	return c
}

func routeText(r fleetconfig.Route) string {
	switch {
	case r.Context != "":
		return r.Path + " by context " + r.Context
	case r.Proxy != "":
		return r.Path + " through proxy " + kube.RedactURL(r.Proxy)
	}
	return r.Path
}

// Marks of check's lines, as flux check draws them.
const (
	markOK   = "✔"
	markFail = "✗"
	markNote = "•"
	markHead = "►"
)

// printCheck draws the report, a section per part, every string escaped.
func (o *CheckOptions) printCheck(w io.Writer, r *check.Report) error {
	line := func(mark, format string, args ...any) {
		fmt.Fprintf(w, "%s %s\n", mark, escape.String(fmt.Sprintf(format, args...)))
	}
	line(markHead, "root cluster (context %s)", r.Root.Context)
	if !r.Root.Reached {
		line(markFail, "not reached at %s: %s", r.Root.Server, r.Root.Error)
		return printTodo(r, line)
	}
	line(markOK, "reached at %s, Kubernetes %s", r.Root.Server, r.Root.Version)
	if r.Root.Error != "" {
		line(markFail, "%s", r.Root.Error)
	}
	var serves, not []string
	for _, p := range r.Root.Providers {
		if p.Serves {
			kinds := "kinds"
			if len(p.Kinds) == 1 {
				kinds = "kind"
			}
			serves = append(serves, fmt.Sprintf("%s (%d %s)", p.Name, len(p.Kinds), kinds))
		} else {
			not = append(not, p.Name)
		}
	}
	if len(serves) > 0 {
		line(markOK, "serves the kinds of %s", strings.Join(serves, ", "))
	}
	if len(not) > 0 {
		line(markNote, "serves none of the kinds of %s", strings.Join(not, ", "))
	}

	line(markHead, "access on the root cluster (SelfSubjectAccessReview)")
	printVerbs(r.Access.Read, "read commands", check.ReaderRole, check.ReaderFile, markFail, line)
	printVerbs(r.Access.Operate, "suspend, resume, reconcile, freeze and thaw", check.OperatorRole, check.OperatorFile, markNote, line)
	if slices.ContainsFunc(r.Access.Operate, func(v check.Verb) bool { return v.Skipped == "" && !v.Allowed }) {
		line(markNote, "operations are not needed to read: a denied one is no thing to do")
	}
	if r.Access.Error != "" {
		line(markFail, "%s", r.Access.Error)
	}

	line(markHead, "credentials")
	c := r.Credentials
	switch {
	case c.Kuberc == "":
		line(markNote, "kuberc: none (~/.kube/kuberc, KUBERC or --kuberc): no exec plugin named by a Secret is allowed by it")
	case c.Policy == "":
		line(markNote, "kuberc: %s, no credentialPluginPolicy", c.Kuberc)
	default:
		line(markNote, "kuberc: %s, credentialPluginPolicy %s%s", c.Kuberc, c.Policy, listed(", allowlist: ", c.Allowlist))
	}
	if len(c.AllowExec) > 0 {
		line(markNote, "--allow-exec: %s", strings.Join(c.AllowExec, ", "))
	}
	if c.FleetConfig == "" {
		line(markNote, "fleet config: none (~/.kube/fleet.yaml or --fleet-config)")
	} else {
		line(markNote, "fleet config: %s%s%s", c.FleetConfig, listed(", credentialPlugins: ", c.Plugins), listed(", routes: ", c.Routes))
	}
	line(markNote, "credentials: %s", c.Use)
	for _, e := range c.Errors {
		line(markFail, "%s", e)
	}

	if len(r.Plugins) > 0 {
		line(markHead, "exec plugins named by the root's kubeconfig Secrets")
	}
	for _, p := range r.Plugins {
		use := ""
		if !p.Used {
			use = " (not used with --credentials " + c.Use + ")"
		}
		switch {
		case p.Allowed:
			line(markOK, "%s: %s runs %s, allowed by %s%s", p.Cluster, p.Source, p.Path, p.By, use)
		case p.Used:
			line(markFail, "%s: the exec plugin of %s %s", p.Cluster, p.Source, p.Reason)
		default:
			line(markNote, "%s: the exec plugin of %s%s %s", p.Cluster, p.Source, use, p.Reason)
		}
	}

	if r.Depth > 0 {
		line(markHead, "clusters, %d level(s) below the root", r.Depth)
		if len(r.Children) == 0 {
			line(markNote, "the root cluster holds no clusters")
		}
		printChildren(r.Children, line)
	}
	return printTodo(r, line)
}

func listed(prefix string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	return prefix + strings.Join(items, ", ")
}

// printVerbs draws one line for the verbs allowed, and one per verb
// denied, with its rule.
func printVerbs(verbs []check.Verb, what, role, file, denied string, line func(mark, format string, args ...any)) {
	asked, allowed := 0, 0
	for _, v := range verbs {
		if v.Skipped == "" {
			asked++
			if v.Allowed {
				allowed++
			}
		}
	}
	if allowed == asked {
		line(markOK, "%s: all %d verbs allowed", what, asked)
		return
	}
	line(denied, "%s: %d of %d verbs allowed; ClusterRole %s (%s) grants them all", what, allowed, asked, role, file)
	for _, v := range verbs {
		switch {
		case v.Skipped != "" || v.Allowed:
		case v.Namespace != "":
			line(denied, "  %s %s in namespace %s denied: grant %s in Role %s there", v.Verb, v.ResourceName(), v.Namespace, v.Rule, role)
		default:
			line(denied, "  %s %s denied: grant %s", v.Verb, v.ResourceName(), v.Rule)
		}
	}
}

// printChildren draws each cluster, its status and what to do.
func printChildren(children []*check.Child, line func(mark, format string, args ...any)) {
	for _, c := range children {
		if c.Status == check.Reachable {
			how := c.Credential
			if c.Route != "" {
				how += ", by " + c.Route
			}
			line(markOK, "%s: reachable, Kubernetes %s (%s)", c.Path, c.Version, how)
		} else {
			line(markFail, "%s: %s: %s", c.Path, c.Status, c.Error)
			line(" ", "  → %s", c.Hint)
		}
		printChildren(c.Children, line)
	}
}

// printTodo ends the report: ready, or each thing to do.
func printTodo(r *check.Report, line func(mark, format string, args ...any)) error {
	if r.Ready {
		line(markOK, "ready to walk the fleet")
		return nil
	}
	line(markHead, "to do")
	for _, t := range r.Todo {
		line(markFail, "%s", t)
	}
	return nil
}
