package clusterprofile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdlatest "k8s.io/client-go/tools/clientcmd/api/latest"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
)

// ErrNoProviderFile marks a ClusterProfile that cannot be reached because
// no provider file was given.
var ErrNoProviderFile = errors.New("no ClusterProfile provider file was given")

// ErrNoAccessProvider marks a ClusterProfile none of whose access
// providers the provider file maps to a plugin.
var ErrNoAccessProvider = errors.New("no access provider of the ClusterProfile is in the provider file")

// choose is the access provider the cluster is reached by, upstream's
// rule: the first of the provider file's providers that the profile
// lists; without a provider file, the profile's first (what the node
// shows, and where its endpoint is). nil when none.
func (s Source) choose(pr *profile) *offer {
	if pr.unusable != nil {
		return nil
	}
	if s.Providers == nil {
		return pr.offer(pr.first)
	}
	for _, p := range s.Providers.Config.Providers {
		if o := pr.offer(p.Name); o != nil {
			return o
		}
	}
	return nil
}

// built is what reaches a ClusterProfile's cluster: the cluster entry of
// its access provider, untrusted; the provider file's exec plugin, as
// upstream's BuildConfigFromCP makes it of the file and the profile; and
// where each field of the cluster entry is in the profile.
type built struct {
	cluster *clientcmdapi.Cluster
	exec    *clientcmdapi.ExecConfig
	where   func(field string) string
	// provider is the name of the provider file's access provider whose
	// plugin exec is.
	provider string
}

// restConfig is the rest.Config of b, a build of the profile src names,
// through p. The policy is told the plugin is named by the provider
// file's access provider, for the profile, which is true (it says so
// when it announces the plugin's first run): the profile names only an
// access provider. The cluster entry's fields it refuses are the
// profile's, and their errors name the profile.
func (s Source) restConfig(p kubeconfig.Policy, src kubeconfig.Source, b *built) (*rest.Config, error) {
	namedBy := kubeconfig.Source{Kind: fmt.Sprintf("access provider %s of %s, for ClusterProfile", escapeName(b.provider), s.Providers.From),
		Namespace: src.Namespace, Name: src.Name}
	cfg, err := p.RESTConfigWithPlugin(namedBy, b.cluster, b.exec, s.Providers.From, b.where)
	if fe := (*kubeconfig.FieldError)(nil); errors.As(err, &fe) {
		fe.Source = src
	}
	return cfg, err
}

// build makes what reaches pr's cluster with upstream's pkg/access, of
// the chosen access provider alone, its extensions checked and bounded
// first. Of the rest.Config upstream makes, the exec plugin is taken;
// the server, CA and proxy are not: the access provider's cluster entry
// goes, as it is, through the kubeconfig policy, which refuses a proxy
// the profile names rather than follow it.
func (s Source) build(pr *profile) (*built, error) {
	src := pr.src()
	switch {
	case pr.unusable != nil:
		return nil, pr.unusable
	case len(pr.offered) == 0:
		return nil, kubeconfig.Invalid(src, "status.accessProviders", "is empty: the cluster manager publishes no access provider to reach the cluster by")
	case s.Providers == nil:
		return nil, fmt.Errorf("%s: %w: give --%s, or providers.%s in ~/.kube/fleet.yaml, to map one of the profile's access providers (%s) to an exec credential plugin of yours",
			src, ErrNoProviderFile, FlagProviderFile, Edge, quoted(pr.names()))
	}
	chosen := s.choose(pr)
	if chosen == nil {
		return nil, fmt.Errorf("%s: %w: the profile lists %s; %s maps %s: add one of the profile's, with the exec credential plugin that logs in to its clusters",
			src, ErrNoAccessProvider, quoted(pr.names()), s.Providers.From, strings.Join(s.Providers.names(), ", "))
	}
	if chosen.cluster == nil {
		return nil, kubeconfig.Invalid(src, chosen.field+".cluster", chosen.why)
	}
	file := s.Providers.provider(chosen.name)
	cluster, err := extensions(src, chosen, file)
	if err != nil {
		return nil, err
	}
	// Upstream changes the provider it is given (it appends a profile's
	// arguments to the file's): it gets a copy, and a profile of the one
	// access provider chosen, never the deprecated credentialProviders,
	// of which it logs the unescaped names.
	one := access.New([]access.Provider{{Name: file.Name, ExecConfig: file.ExecConfig.DeepCopy(),
		ProfileSourcedCLIArgsPolicy: file.ProfileSourcedCLIArgsPolicy, ProfileSourcedEnvVarsPolicy: file.ProfileSourcedEnvVarsPolicy}})
	cp := &inventoryv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: pr.namespace, Name: pr.name},
		Status:     inventoryv1alpha1.ClusterProfileStatus{AccessProviders: []inventoryv1alpha1.AccessProvider{{Name: chosen.name, Cluster: *cluster}}},
	}
	rc, err := one.BuildConfigFromCP(cp)
	if err != nil {
		return nil, fmt.Errorf("%s: access provider %s (%s): %s", src, escapeName(chosen.name), chosen.field, escape.OneLine(err.Error()))
	}
	exec := rc.ExecProvider
	if slices.ContainsFunc(cluster.Extensions, func(e clientcmdv1.NamedExtension) bool { return e.Name == EnvsExtension }) {
		// Upstream built the environment from a map: in no fixed order.
		slices.SortFunc(exec.Env, func(a, b clientcmdapi.ExecEnvVar) int { return strings.Compare(a.Name, b.Name) })
	}
	internal := clientcmdapi.NewCluster()
	if err := clientcmdlatest.Scheme.Convert(cluster, internal, nil); err != nil {
		return nil, kubeconfig.Invalid(src, chosen.field+".cluster", "could not be read as a kubeconfig cluster entry")
	}
	return &built{cluster: internal, exec: exec, provider: file.Name, where: func(field string) string {
		return chosen.field + ".cluster." + strings.TrimPrefix(field, "clusters[cluster].")
	}}, nil
}

// names are the names of the access providers pr lists.
func (pr *profile) names() []string {
	out := make([]string, len(pr.offered))
	for i, o := range pr.offered {
		out[i] = o.name
	}
	return out
}

// extensions is chosen's cluster entry with the extensions upstream reads,
// checked and bounded: the exec extension (the plugin's cluster config),
// and the arguments and environment the file's policies let the profile
// add, each decoded here and given to upstream re-encoded. Those the
// policies ignore, and every other extension, are dropped. A name given
// twice is refused: upstream's conversion would fail with the whole list
// in its message.
func extensions(src kubeconfig.Source, chosen *offer, file *access.Provider) (*clientcmdv1.Cluster, error) {
	c := chosen.cluster.DeepCopy()
	c.Extensions = nil
	seen := map[string]bool{}
	for i, ext := range chosen.cluster.Extensions {
		field := fmt.Sprintf("%s.cluster.extensions[%d]", chosen.field, i)
		if seen[ext.Name] {
			return nil, kubeconfig.Invalid(src, field, "names an extension an earlier one names")
		}
		seen[ext.Name] = true
		raw := ext.Extension.Raw
		switch ext.Name {
		case ExecExtension:
			if len(raw) > MaxExecExtension {
				return nil, kubeconfig.Invalid(src, field, fmt.Sprintf("(%s) is longer than %d KiB", ExecExtension, MaxExecExtension>>10))
			}
		case ArgsExtension:
			if file.ProfileSourcedCLIArgsPolicy != access.ProfileSourcedCLIArgsPolicyAppend {
				continue
			}
			args, err := additionalArgs(raw)
			if err != nil {
				return nil, kubeconfig.Invalid(src, field, fmt.Sprintf("(%s) %v", ArgsExtension, err))
			}
			raw = args
		case EnvsExtension:
			if file.ProfileSourcedEnvVarsPolicy == "" || file.ProfileSourcedEnvVarsPolicy == access.ProfileSourcedEnvVarsPolicyIgnore {
				continue
			}
			envs, err := additionalEnvs(raw)
			if err != nil {
				return nil, kubeconfig.Invalid(src, field, fmt.Sprintf("(%s) %v", EnvsExtension, err))
			}
			if names := refusedEnvs(envs); len(names) > 0 {
				return nil, kubeconfig.Refused(src, field, fmt.Sprintf("(%s) sets %s, which would change how the plugin or its libraries load, route or trust: refused whatever the provider file's profileSourcedEnvVarsPolicy; if the plugin needs it, set it in the provider file's execConfig.env",
					EnvsExtension, quoted(names)))
			}
			if raw, err = marshal(envs); err != nil {
				return nil, err
			}
		default:
			continue
		}
		c.Extensions = append(c.Extensions, clientcmdv1.NamedExtension{Name: ext.Name, Extension: runtime.RawExtension{Raw: raw}})
	}
	return c, nil
}

// additionalArgs checks the arguments a profile adds (YAML or JSON, as
// upstream reads them) and re-encodes them as JSON.
func additionalArgs(raw []byte) ([]byte, error) {
	var args []string
	if err := yaml.Unmarshal(raw, &args); err != nil {
		return nil, errors.New("is not a list of strings")
	}
	if len(args) > MaxArgs {
		return nil, fmt.Errorf("holds %d arguments; at most %d are taken", len(args), MaxArgs)
	}
	for i, a := range args {
		if err := checkValue(a); err != nil {
			return nil, fmt.Errorf("argument %d %w", i, err)
		}
	}
	return marshal(args)
}

// additionalEnvs checks the environment variables a profile adds (YAML
// or JSON, as upstream reads them): a map, never nil, which upstream
// would write to.
func additionalEnvs(raw []byte) (map[string]string, error) {
	envs := map[string]string{}
	if err := yaml.Unmarshal(raw, &envs); err != nil {
		return nil, errors.New("is not a map of strings")
	}
	if len(envs) > MaxEnvs {
		return nil, fmt.Errorf("holds %d variables; at most %d are taken", len(envs), MaxEnvs)
	}
	for name, value := range envs {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, fmt.Errorf("names a variable %s that is not a variable's name", escapeName(name))
		}
		if err := checkValue(value); err != nil {
			return nil, fmt.Errorf("variable %s %w", escapeName(name), err)
		}
	}
	if envs == nil {
		envs = map[string]string{}
	}
	return envs, nil
}

// refusedEnv are the variables no profile sets, whatever the provider
// file's policy, upper-cased: they decide which code the plugin (or the
// interpreter, loader or shell it runs under) loads, which files it
// reads its configuration and credentials from, where its requests go
// and which certificates it trusts. A cluster manager that may set them
// could run code of its choosing as the operator, or send the
// operator's cloud credentials to a server of its own. refusedPrefixes
// and refusedSuffixes are the families of them.
var (
	refusedEnv = map[string]bool{
		"PATH": true, "HOME": true, "SHELL": true, "ENV": true, "BASH_ENV": true, "KUBECONFIG": true,
		"NODE_OPTIONS": true, "PYTHONPATH": true, "PYTHONHOME": true, "PYTHONSTARTUP": true, "PERL5LIB": true, "RUBYOPT": true,
		"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "REQUESTS_CA_BUNDLE": true, "CURL_CA_BUNDLE": true, "AWS_CA_BUNDLE": true,
		"AWS_ENDPOINT_URL": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "AWS_CONFIG_FILE": true, "AWS_SHARED_CREDENTIALS_FILE": true,
		"AZURE_CONFIG_DIR": true, "CLOUDSDK_CONFIG": true,
	}
	refusedPrefixes = []string{"LD_", "DYLD_", "GIT_", "AWS_ENDPOINT_URL_"}
	refusedSuffixes = []string{"_PROXY"}
)

// refusedEnvs are the names of envs no profile may set (refusedEnv),
// sorted; case does not matter, as it does not to some platforms and
// libraries (Path, http_proxy).
func refusedEnvs(envs map[string]string) []string {
	var out []string
	for name := range envs {
		upper := strings.ToUpper(name)
		if refusedEnv[upper] ||
			slices.ContainsFunc(refusedPrefixes, func(p string) bool { return strings.HasPrefix(upper, p) }) ||
			slices.ContainsFunc(refusedSuffixes, func(s string) bool { return strings.HasSuffix(upper, s) }) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// checkValue checks an argument or variable a profile adds: what a
// process takes, bounded.
func checkValue(v string) error {
	switch {
	case len(v) > MaxValue:
		return fmt.Errorf("is longer than %d KiB", MaxValue>>10)
	case strings.IndexByte(v, 0) >= 0:
		return errors.New("holds a NUL byte")
	}
	return nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// escapeName is a name a profile gives, escaped and cut, for an error.
func escapeName(s string) string { return escape.String(cut(s)) }
