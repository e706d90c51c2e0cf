package clusterprofile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// FlagProviderFile names the provider file, as upstream's flag does.
const FlagProviderFile = "clusterprofile-provider-file"

// Provider is the Cluster Inventory API integration: an inventory of the
// ClusterProfiles of management clusters, reached by the exec plugins of
// the operator's provider file.
type Provider struct {
	// ProviderFile is --clusterprofile-provider-file; it overrides the
	// fleet config's providers.clusterprofile.
	ProviderFile string

	// From the fleet config (Configure): the provider file its
	// providerFile names, resolved, or the providers it gives inline;
	// configFile is the fleet config's path.
	settingsFile string
	inline       *Providers
	configFile   string

	// providers is the provider file Validate read; nil for none.
	providers *Providers
}

var (
	_ provider.Inventory    = &Provider{}
	_ provider.Configurable = &Provider{}
	_ provider.Settable     = &Provider{}
	_ provider.Presenter    = &Provider{}
	_ drift.Analyst         = &Provider{}
	_ provider.Grouper      = &Provider{}
)

// NewProvider returns the ClusterProfile provider, with no provider file.
func NewProvider() *Provider { return &Provider{} }

// Name is "clusterprofile", the kind of its edges and its section of the
// fleet config.
func (*Provider) Name() string { return Edge }

// Kinds are ClusterProfiles (typed, though the walk reads them
// unstructured); the Namespaces whose clusterset it reads are core.
func (*Provider) Kinds() provider.Kinds {
	return provider.Kinds{AddToScheme: AddToScheme, APIs: APIs()}
}

// Presentation is the PROFILE column, before FLUX, and the
// ClusterProfile field of describe: what the cluster's profile says of it.
func (*Provider) Presentation() fleet.Presentation {
	return fleet.Presentation{
		Columns: []fleet.Column{{Header: "PROFILE", Before: "FLUX", Cell: Summary}},
		Fields:  []fleet.Field{{Title: "ClusterProfile", Value: Describe}},
	}
}

// DriftCheck is the ClusterProfile's part of drift (DriftCheck).
func (*Provider) DriftCheck() drift.Check { return DriftCheck() }

// EnvKind names the environments a profile puts its cluster in.
func (*Provider) EnvKind() string { return "ClusterProfile manager or clusterset" }

// AddFlags adds --clusterprofile-provider-file.
func (p *Provider) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.ProviderFile, FlagProviderFile, "", "The ClusterProfile provider file (JSON, as sigs.k8s.io/cluster-inventory-api's pkg/access reads it) that maps the access providers ClusterProfiles list to exec credential plugins of yours (default: providers.clusterprofile of the fleet config)")
}

// settings is the provider's section of the fleet config: a provider
// file, or its providers inline.
type settings struct {
	// ProviderFile is relative to the fleet config's directory; a leading
	// ~/ is the home directory.
	ProviderFile string `json:"providerFile,omitempty"`
	// Providers are a provider file's providers, inline.
	Providers json.RawMessage `json:"providers,omitempty"`
}

// Configure reads providers.clusterprofile of the fleet config file,
// strictly: {providerFile: PATH} or {providers: [...]} (a provider file's
// providers, inline). The provider file is read by Validate, so that the
// flag, which overrides it, spares reading it.
func (p *Provider) Configure(section json.RawMessage, file string) error {
	p.settingsFile, p.inline, p.configFile = "", nil, file
	prefix := fmt.Sprintf("fleet config %s: providers.%s", file, Edge)
	var s settings
	strict, err := kjson.UnmarshalStrict(section, &s)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		return fmt.Errorf("%s: %s", prefix, escape.OneLine(err.Error()))
	}
	inline := len(s.Providers) > 0 && !bytes.Equal(bytes.TrimSpace(s.Providers), []byte("null"))
	switch {
	case s.ProviderFile != "" && inline:
		return fmt.Errorf("%s: give providerFile or providers, not both", prefix)
	case s.ProviderFile != "":
		path, err := resolve(s.ProviderFile, file)
		if err != nil {
			return fmt.Errorf("%s.providerFile: %w", prefix, err)
		}
		p.settingsFile = path
	case inline:
		data := append(append([]byte(`{"providers":`), s.Providers...), '}')
		pr, err := parse(data, fmt.Sprintf("providers.%s of fleet config %s", Edge, file), prefix)
		if err != nil {
			return err
		}
		p.inline = pr
	}
	return nil
}

// resolve is path, of the fleet config file: relative to its directory,
// a leading ~/ the home directory.
func resolve(path, file string) (string, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return filepath.Join(home, rest), nil
	}
	if filepath.IsAbs(path) {
		return path, nil
	}
	return filepath.Join(filepath.Dir(file), path), nil
}

// Validate reads the provider file: --clusterprofile-provider-file's, else
// the fleet config's. A provider file that does not parse fails every
// command, as a fleet config that does not: it is the operator's own.
func (p *Provider) Validate() error {
	p.providers = nil
	switch {
	case p.ProviderFile != "":
		pr, err := ReadProviders(p.ProviderFile)
		if err != nil {
			return fmt.Errorf("invalid --%s: %w", FlagProviderFile, err)
		}
		p.providers = pr
	case p.settingsFile != "":
		pr, err := ReadProviders(p.settingsFile)
		if err != nil {
			return fmt.Errorf("fleet config %s: providers.%s.providerFile: %w", p.configFile, Edge, err)
		}
		p.providers = pr
	default:
		p.providers = p.inline
	}
	return nil
}

// Source is the clusterprofile edge source, with the provider file.
func (p *Provider) Source() reach.Source { return Source{Providers: p.providers} }

// EdgeKind says a clusterprofile edge is read from a ClusterProfile.
func (*Provider) EdgeKind() fleet.EdgeKind {
	return fleet.EdgeKind{Kind: Edge, Object: "ClusterProfile",
		Holds: "ClusterProfiles (through the plugins of your ClusterProfile provider file)"}
}

// Kubeconfig is made of the child's ClusterProfile and the provider file,
// as the walk makes its config: the chosen access provider's cluster
// entry, and as its user the file's exec plugin (its command as the file
// names it, the arguments and environment as built, the exec extension
// kept on the cluster for provideClusterInfo), after the policy's checks,
// its entries named after the cluster. It is the operator's own
// credential, whichever req.User asks for: a ClusterProfile has no other.
func (p *Provider) Kubeconfig(ctx context.Context, req provider.KubeconfigRequest) (kubeconfig.Source, []byte, error) {
	e := req.Edge
	src := kubeconfig.Source{Kind: "ClusterProfile", Namespace: e.Namespace, Name: e.Name}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK())
	err := req.Parent.Client().Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return src, nil, fmt.Errorf("%s not found in %s", src, fleet.DescribePath(req.ParentPath))
	case apierrors.IsForbidden(err):
		return src, nil, fmt.Errorf("forbidden: cannot get %s: the user needs the RBAC rule {apiGroups: [%q], resources: [\"clusterprofiles\"], verbs: [\"get\"]} in namespace %s (%w)", src, GVK().Group, e.Namespace, err)
	case err != nil:
		return src, nil, fmt.Errorf("failed to read %s: %w", src, err)
	}
	s := Source{Providers: p.providers}
	pr := read(u)
	b, err := s.build(pr)
	if err != nil {
		return src, nil, err
	}
	if _, err := s.restConfig(req.Policy, src, b); err != nil {
		return src, nil, err
	}
	data, err := kubeconfig.NamedAfter(req.Child.Name, src, b.kubeconfig(e.Name))
	return src, data, err
}

// kubeconfig is a kubeconfig of b, its entries named name: the cluster
// entry with the exec extension alone, the plugin as the user.
func (b *built) kubeconfig(name string) *clientcmdapi.Config {
	cluster := b.cluster.DeepCopy()
	for k := range cluster.Extensions {
		if k != ExecExtension {
			delete(cluster.Extensions, k)
		}
	}
	exec := b.exec.DeepCopy()
	exec.Config = nil // the cluster's extension, which kubectl hands the plugin
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = cluster
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: exec}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return cfg
}
