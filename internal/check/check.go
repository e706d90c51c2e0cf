// Package check tells an operator whether this machine and the current
// context are ready to walk the fleet, and if not, what to do: the root
// cluster reached and the integrations it serves, the access the plugin
// needs there (asked by SelfSubjectAccessReview, each missing verb with
// the RBAC rule that grants it), the exec plugins its kubeconfig Secrets
// name under the operator's policy, and each cluster of the next levels
// reached or not, and why. It writes nothing: a SelfSubjectAccessReview is
// a question the apiserver answers, not an object it keeps.
package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// The ClusterRoles of docs/rbac: their names and files.
const (
	ReaderRole   = "kubectl-fleet-reader"
	ReaderFile   = "docs/rbac/fleet-reader.yaml"
	OperatorRole = ops.OperatorRole
	OperatorFile = ops.OperatorFile
)

// Statuses of a cluster below the root.
const (
	// Reachable: connected, its version read, and it let us read it.
	Reachable = "reachable"
	// Refused: the policy refused what its parent holds to reach it (an
	// exec plugin not allowed, a local file path).
	Refused = "refused"
	// Unreachable: no answer from its server.
	Unreachable = "unreachable"
	// Forbidden: its server answered, but refused the credential, or the
	// identity it gave may not read it.
	Forbidden = "forbidden"
	// Invalid: what its parent holds cannot be used (no Secret, a
	// kubeconfig that does not parse).
	Invalid = "invalid"
)

// Report is what check found.
type Report struct {
	// Ready is true when nothing needs doing before walking the fleet.
	Ready bool `json:"ready"`
	// Todo are the things to do, one sentence each.
	Todo        []string     `json:"todo"`
	Root        Root         `json:"root"`
	Access      AccessReport `json:"access"`
	Credentials Credentials  `json:"credentials"`
	// Plugins are the exec plugins the root's kubeconfig Secrets name.
	Plugins []Plugin `json:"plugins"`
	// Depth is how many levels below the root check was asked to reach.
	Depth    int      `json:"depth"`
	Children []*Child `json:"children"`
}

// Root is the root cluster.
type Root struct {
	Context string `json:"context"`
	Server  string `json:"server"`
	// Reached is true when it answered.
	Reached bool   `json:"reached"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
	// Providers are the integrations, each with whether the root serves
	// its kinds.
	Providers []ProviderKinds `json:"providers"`
}

// ProviderKinds says which of a provider's kinds a cluster serves.
type ProviderKinds struct {
	Name   string   `json:"name"`
	Serves bool     `json:"serves"`
	Kinds  []string `json:"kinds"`
}

// AccessReport is the access the plugin needs on the root, as the
// current identity has it.
type AccessReport struct {
	// Read is what the read commands need; Operate what suspend, resume,
	// reconcile, freeze and thaw need.
	Read    []Verb `json:"read"`
	Operate []Verb `json:"operate"`
	Error   string `json:"error,omitempty"`
}

// Verb is one verb on one resource, and whether it is allowed.
type Verb struct {
	Verb     string `json:"verb"`
	Group    string `json:"group"`
	Resource string `json:"resource"`
	// Namespace is the one namespace it is needed in ("" for every
	// namespace): a Role's, not the ClusterRole's.
	Namespace string `json:"namespace,omitempty"`
	Allowed   bool   `json:"allowed"`
	// Skipped says why it was not asked: its group is not served.
	Skipped string `json:"skipped,omitempty"`
	// Rule is the RBAC rule that grants it, in YAML's flow style.
	Rule string `json:"rule,omitempty"`
}

// Credentials are the operator's settings as the plugin applies them.
type Credentials struct {
	// Kuberc is the kuberc read ("" when none); Policy its
	// credentialPluginPolicy; Allowlist its credentialPluginAllowlist.
	Kuberc    string   `json:"kuberc"`
	Policy    string   `json:"policy,omitempty"`
	Allowlist []string `json:"allowlist,omitempty"`
	// AllowExec is --allow-exec.
	AllowExec []string `json:"allowExec,omitempty"`
	// FleetConfig is the fleet config read ("" when none); Plugins its
	// credentialPlugins, with the servers each is tied to; Routes its
	// routes.
	FleetConfig string   `json:"fleetConfig"`
	Plugins     []string `json:"plugins,omitempty"`
	Routes      []string `json:"routes,omitempty"`
	// Use is --credentials as it applies: admin, user or user,admin.
	Use string `json:"use"`
	// Errors are what is wrong with them.
	Errors []string `json:"errors,omitempty"`
}

// Plugin is an exec plugin a kubeconfig Secret of the root names.
type Plugin struct {
	// Source is the Secret (or object) the kubeconfig is read from;
	// Cluster the path of the cluster it reaches.
	Source  string `json:"source"`
	Cluster string `json:"cluster"`
	// Command is the plugin; "" where the policy refused the kubeconfig
	// before it was read (Reason names the plugin then).
	Command string `json:"command"`
	// Used is true for the kubeconfig the walk reaches the cluster by, as
	// --credentials says; false for one of the other credentials.
	Used bool `json:"used"`
	// Allowed and By: the policy allows it, by that entry. Path is where
	// it was found ("" when it was not).
	Allowed bool   `json:"allowed"`
	By      string `json:"by,omitempty"`
	Path    string `json:"path,omitempty"`
	// Reason says why it is refused, and the entry that would allow it.
	Reason string `json:"reason,omitempty"`
}

// The kubeconfigs a Plugin is named by.
const (
	// Walked is the kubeconfig the walk reaches the cluster by, as
	// --credentials says.
	Walked = "walked"
	// Other is a kubeconfig of the other credentials (the user one when
	// the walk is as admin, and the other way round).
	Other = "other"
)

// Child is a cluster below the root.
type Child struct {
	Path   string `json:"path"`
	Status string `json:"status"`
	// Version is its apiserver's; Credential what reached it; Route the
	// operator's route, if any.
	Version    string `json:"version,omitempty"`
	Credential string `json:"credential,omitempty"`
	Route      string `json:"route,omitempty"`
	Error      string `json:"error,omitempty"`
	// Hint says what to do.
	Hint     string   `json:"hint,omitempty"`
	Children []*Child `json:"children,omitempty"`
}

// Options are what check is given.
type Options struct {
	// Root is the connection to the root cluster, Context its name.
	Root    *reach.Cluster
	Context string
	// Providers are the integrations.
	Providers provider.Set
	// Policy is the kubeconfig policy of a walk.
	Policy kubeconfig.Policy
	// Credentials are the operator's settings, already read.
	Credentials Credentials
	// Depth is how many levels below the root to reach.
	Depth int
	// Timeout bounds each request.
	Timeout time.Duration
	// Concurrency is how many clusters are reached at once.
	Concurrency int
}

// checker is one run of check: its options, and the clusters it may
// reach at once.
type checker struct {
	Options
	slots chan struct{}
}

// slot waits for a turn to reach a cluster (or ctx's end); the returned
// function gives it back.
func (c *checker) slot(ctx context.Context) (func(), error) {
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, nil
	case <-ctx.Done():
		return func() {}, ctx.Err()
	}
}

// Run checks the fleet as opts say.
func Run(ctx context.Context, opts Options) *Report {
	c := &checker{Options: opts, slots: make(chan struct{}, max(opts.Concurrency, 1))}
	r := &Report{Credentials: opts.Credentials, Depth: opts.Depth, Plugins: []Plugin{}, Children: []*Child{}}
	r.Root = Root{Context: opts.Context, Server: kube.RedactURL(opts.Root.Kube().Host())}
	groups, err := rootInfo(ctx, opts, &r.Root)
	if err != nil {
		r.Root.Error = err.Error()
		r.todo("reach the root cluster (context %q): %s", opts.Context, err)
		return r.done()
	}
	r.Root.Reached = true
	r.Access = access(ctx, opts, groups)
	kids, err := listChildren(ctx, opts, opts.Root, "")
	if err != nil {
		r.Root.Error = err.Error()
		r.todo("let the root cluster's clusters be read: %s", err)
	}
	r.Plugins = c.plugins(ctx, kids)
	if opts.Depth > 0 {
		r.Children = c.reachAll(ctx, opts.Root, "", kids, 1)
	}
	r.findTodo()
	return r.done()
}

func (r *Report) todo(format string, args ...any) {
	r.Todo = append(r.Todo, fmt.Sprintf(format, args...))
}

func (r *Report) done() *Report {
	if r.Todo == nil {
		r.Todo = []string{}
	}
	r.Ready = len(r.Todo) == 0
	return r
}

// findTodo lists what needs doing: every read the identity may not make,
// the operator's settings that do not load, the plugins the walk would
// use and may not run, and every cluster not reached.
func (r *Report) findTodo() {
	for _, e := range r.Credentials.Errors {
		r.todo("fix your settings: %s", e)
	}
	if r.Access.Error != "" {
		r.todo("let the access be asked: %s", r.Access.Error)
	}
	for _, v := range r.Access.Read {
		if !v.Allowed && v.Skipped == "" {
			r.todo("grant %s %s on the root cluster: %s (ClusterRole %s, %s)", v.Verb, v.ResourceName(), v.Rule, ReaderRole, ReaderFile)
		}
	}
	for _, p := range r.Plugins {
		if p.Used && !p.Allowed {
			r.todo("%s, for %s: %s", p.Source, p.Cluster, p.Reason)
		}
	}
	var walk func(cs []*Child)
	walk = func(cs []*Child) {
		for _, c := range cs {
			if c.Status != Reachable {
				r.todo("%s is %s: %s", c.Path, c.Status, c.Hint)
			}
			walk(c.Children)
		}
	}
	walk(r.Children)
}

// rootInfo reads the root's version and the groups it serves, and which
// providers' kinds are among them.
func rootInfo(ctx context.Context, opts Options, root *Root) (map[string]bool, error) {
	conn := opts.Root.Kube()
	vctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	v, err := conn.ServerVersion(vctx)
	if err != nil {
		return nil, err
	}
	root.Version = v
	d, err := conn.Discovery(opts.Timeout)
	if err != nil {
		return nil, err
	}
	list, err := d.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("failed to list the API groups of %s: %w", kube.RedactURL(conn.Host()), err)
	}
	served := map[string]bool{"": true}
	versions := map[string]bool{"v1": true}
	for _, g := range list.Groups {
		served[g.Name] = true
		for _, gv := range g.Versions {
			versions[gv.GroupVersion] = true
		}
	}
	root.Providers = []ProviderKinds{}
	for _, p := range opts.Providers {
		pk := ProviderKinds{Name: p.Name(), Kinds: []string{}}
		for _, api := range p.Kinds().APIs {
			if versions[api.GVK.GroupVersion().String()] {
				pk.Kinds = appendOnce(pk.Kinds, api.GVR().GroupResource().String())
			}
		}
		pk.Serves = len(pk.Kinds) > 0
		root.Providers = append(root.Providers, pk)
	}
	return served, nil
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// ResourceName is the verb's resource as kubectl names it:
// resource.group.
func (v Verb) ResourceName() string {
	return schema.GroupResource{Group: v.Group, Resource: v.Resource}.String()
}

// access asks, by SelfSubjectAccessReview, every verb of the set's
// access whose group the root serves.
func access(ctx context.Context, opts Options, served map[string]bool) AccessReport {
	a := opts.Providers.Access()
	report := AccessReport{Read: verbs(a.Read, "", served), Operate: verbs(a.Operate, "", served)}
	cs, err := opts.Root.Kube().Clientset(opts.Timeout)
	if err != nil {
		report.Error = err.Error()
		return report
	}
	for _, in := range a.OperateIn {
		vs := verbs(in.Rules, in.Namespace, served)
		nctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		_, err := cs.CoreV1().Namespaces().Get(nctx, in.Namespace, metav1.GetOptions{})
		cancel()
		for i := range vs {
			if apierrors.IsNotFound(err) && vs[i].Skipped == "" {
				vs[i].Skipped = "the cluster has no namespace " + in.Namespace
			}
		}
		report.Operate = append(report.Operate, vs...)
	}
	all := append(slices.Clone(report.Read), report.Operate...)
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	limit := make(chan struct{}, 8)
	for i := range all {
		if all[i].Skipped != "" {
			continue
		}
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			v := &all[i]
			resource, subresource, _ := strings.Cut(v.Resource, "/")
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: v.Namespace, Verb: v.Verb, Group: v.Group, Resource: resource, Subresource: subresource},
			}}
			got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				errs[i] = err
				return
			}
			v.Allowed = got.Status.Allowed
		})
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		report.Error = fmt.Sprintf("failed to ask the root cluster what you may do (SelfSubjectAccessReview): %v", err)
	}
	copy(report.Read, all[:len(report.Read)])
	copy(report.Operate, all[len(report.Read):])
	return report
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// verbs are rules one verb and resource each, in namespace ("" for
// every namespace), those of a group the root does not serve skipped.
func verbs(rules []rbacv1.PolicyRule, namespace string, served map[string]bool) []Verb {
	out := []Verb{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, verb := range r.Verbs {
					v := Verb{Verb: verb, Group: g, Resource: res, Namespace: namespace, Rule: RuleText(g, res, verb)}
					if g != "*" && !served[g] {
						v.Skipped = "the cluster does not serve " + g
					}
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// RuleText is the RBAC rule that grants verb on resource of group, in
// YAML's flow style.
func RuleText(group, resource, verb string) string {
	return fmt.Sprintf("{apiGroups: [%q], resources: [%q], verbs: [%q]}", group, resource, verb)
}

// plugins are the exec plugins the kubeconfigs the root holds for its
// children name: the kubeconfig each is reached by as --credentials
// says, and the one of the other credentials where the inventory holds
// both (a CAPI user kubeconfig), each decided by the policy. An
// inventory that checks a kubeconfig as it reads it (an Argo CD cluster
// Secret, a ClusterProfile's plugin) says so by its refusal.
func (c *checker) plugins(ctx context.Context, kids []fleet.Child) []Plugin {
	segs := fleet.Segments(kids)
	found := make([][]Plugin, len(kids))
	fleet.Parallel(len(kids), func(i int) {
		done, err := c.slot(ctx)
		defer done()
		if err == nil {
			found[i] = c.pluginsOf(ctx, fleet.JoinPath("", segs[i]), kids[i])
		}
	})
	out := []Plugin{}
	seen := map[string]bool{}
	for _, ps := range found {
		for _, p := range ps {
			if key := p.Source + "|" + p.Cluster; !seen[key] {
				seen[key] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// pluginsOf are the plugins of the kubeconfigs the root holds for child
// at path.
func (c *checker) pluginsOf(ctx context.Context, path string, child fleet.Child) []Plugin {
	var out []Plugin
	walked := c.Policy.Credentials
	other := kubeconfig.Credentials{User: !walked.User, Admin: walked.User}
	for _, e := range child.Edges {
		inv, edge, ok := c.Providers.Inventory([]fleet.Edge{e})
		if !ok {
			continue
		}
		for _, creds := range []kubeconfig.Credentials{walked, other} {
			policy := c.Policy
			policy.Credentials = creds
			kctx, cancel := context.WithTimeout(ctx, c.Timeout)
			src, data, err := inv.Kubeconfig(kctx, provider.KubeconfigRequest{Parent: c.Root.Kube(), Path: path, Child: child, Edge: edge, User: creds.User && !creds.Admin, Policy: policy})
			cancel()
			p := Plugin{Source: src.String(), Cluster: path, Used: creds == walked}
			var field *kubeconfig.FieldError
			switch {
			case errors.As(err, &field) && errors.Is(err, kubeconfig.ErrRefused) && strings.HasSuffix(field.Field, ".exec"):
				p.Reason = field.Reason
				out = append(out, p)
				continue
			case err != nil:
				continue // none of these credentials, or not usable: the walk says why
			}
			in, err := kubeconfig.Inspect(src, data)
			if err != nil || in.Exec == nil {
				continue
			}
			p.Command = in.Exec.Command
			if found, err := c.Policy.Plugins.Find(in.Exec.Command); err == nil {
				p.Path = found
			}
			if src.Kind != "" {
				// Not a Secret's: the operator's own plugin, which the
				// inventory checked as it built the kubeconfig.
				p.Allowed, p.By = true, "your own configuration ("+src.Kind+")"
				out = append(out, p)
				continue
			}
			d, why := c.Policy.Plugins.Decide(in.Exec.Command, in.Cluster.Server)
			p.Allowed, p.By, p.Reason = why == "", d.By, why
			out = append(out, p)
		}
	}
	return out
}

// listChildren lists the clusters parent, at path, holds. A source that
// failed leaves the others' children, and its error.
func listChildren(ctx context.Context, opts Options, parent *reach.Cluster, path string) ([]fleet.Child, error) {
	cctx, cancel := context.WithTimeout(fleet.WithPath(ctx, path), opts.Timeout)
	defer cancel()
	return parent.Children(cctx, true)
}

// reachAll reaches every child of parent, at path, and below each to
// opts.Depth levels, as many clusters at once as Concurrency allows.
func (c *checker) reachAll(ctx context.Context, parent *reach.Cluster, path string, kids []fleet.Child, level int) []*Child {
	results := make([]*Child, len(kids))
	segs := fleet.Segments(kids)
	fleet.Parallel(len(kids), func(i int) {
		results[i] = c.reachChild(ctx, parent, fleet.JoinPath(path, segs[i]), kids[i], level)
	})
	return results
}

// reachChild connects to child, reads its version and whether it may be
// read, and goes on below it while levels remain.
func (c *checker) reachChild(ctx context.Context, parent *reach.Cluster, path string, child fleet.Child, level int) *Child {
	out := &Child{Path: path}
	done, err := c.slot(ctx)
	if err != nil {
		out.Status, out.Error, out.Hint = Unreachable, err.Error(), "check was interrupted"
		return out
	}
	kids, cl := c.reachOne(ctx, parent, child, out, level)
	done()
	if cl == nil {
		return out
	}
	defer cl.Close()
	out.Children = c.reachAll(ctx, cl, path, kids, level+1)
	return out
}

// reachOne connects to child and reads it into out; below the last
// level it also lists the clusters child holds. It returns them and the
// connection to go on below it with; no connection when there is no
// level below, or child could not be read.
func (c *checker) reachOne(ctx context.Context, parent *reach.Cluster, child fleet.Child, out *Child, level int) ([]fleet.Child, *reach.Cluster) {
	cctx, cancel := context.WithTimeout(fleet.WithPath(ctx, out.Path), c.Timeout)
	defer cancel()
	cl, err := parent.Connect(cctx, child)
	if err != nil {
		unusable(out, err)
		return nil, nil
	}
	out.Credential, out.Route = cl.Credential(), cl.RouteName()
	v, err := cl.ServerVersion(cctx)
	if err == nil {
		out.Version = v
		var cs kubernetes.Interface
		if cs, err = cl.Kube().Clientset(c.Timeout); err == nil {
			_, err = cs.CoreV1().Namespaces().Get(cctx, "kube-system", metav1.GetOptions{})
		}
	}
	if err != nil {
		classify(out, err)
		cl.Close()
		return nil, nil
	}
	if level >= c.Depth {
		out.Status = Reachable
		cl.Close()
		return nil, nil
	}
	kids, err := listChildren(ctx, c.Options, cl, out.Path)
	if err != nil {
		classify(out, err)
		out.Error = "the clusters it holds cannot be read: " + out.Error
		cl.Close()
		return nil, nil
	}
	out.Status = Reachable
	return kids, cl
}

// unusable says why what the parent holds did not make a connection.
func unusable(out *Child, err error) {
	out.Error = err.Error()
	switch {
	case errors.Is(err, kubeconfig.ErrRefused):
		out.Status, out.Hint = Refused, "allow it as the error says, or walk with other --credentials (docs/credentials.md)"
	case apierrors.IsForbidden(err):
		out.Status, out.Hint = Forbidden, "you may not read what the parent holds for it: bind ClusterRole "+ReaderRole+" ("+ReaderFile+") to you on the parent"
	case errors.Is(err, context.DeadlineExceeded):
		out.Status, out.Hint = Unreachable, "its parent did not answer in time: try again, or with a longer --timeout"
	default:
		out.Status, out.Hint = Invalid, "what the parent holds to reach it cannot be used: fix it on the parent, or reach it by a route of your own (docs/credentials.md)"
	}
}

// classify says why a connected cluster did not answer, and what to do.
func classify(c *Child, err error) {
	c.Error = err.Error()
	var inCluster *reach.InClusterError
	var refused reach.CredentialRefused
	switch {
	case strings.Contains(err.Error(), "getting credentials: "):
		c.Status, c.Hint = Forbidden, "its exec credential plugin ran and failed: run it yourself, with the arguments its kubeconfig gives, to see why (often: log in first)"
	case errors.As(err, &inCluster):
		c.Status, c.Hint = Unreachable, "its address is only resolved inside the parent's network: add a route for "+c.Path+" in ~/.kube/fleet.yaml (a proxy into that network, or a context of your own)"
	case apierrors.IsUnauthorized(err), errors.As(err, &refused):
		c.Status, c.Hint = Forbidden, "its server refused the credential the parent holds (expired or revoked): renew it on the parent, or walk with --credentials user"
	case apierrors.IsForbidden(err):
		c.Status, c.Hint = Forbidden, "the identity that reaches it may not read it: bind ClusterRole "+ReaderRole+" ("+ReaderFile+") to that identity there"
	case strings.Contains(err.Error(), "x509: ") || strings.Contains(err.Error(), "tls: "):
		c.Status, c.Hint = Unreachable, "its server answered, but not as the kubeconfig its parent holds expects (TLS): the CA or the server's name do not match"
	case c.Route != "":
		c.Status, c.Hint = Unreachable, "not reached by "+c.Route+": check the proxy or the context it names"
	default:
		c.Status, c.Hint = Unreachable, "its server did not answer from this machine: if it is private, add a route for "+c.Path+" in ~/.kube/fleet.yaml (a proxy, or a context of your own)"
	}
}
