package cmd

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/plugin/pkg/client/auth/exec"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/kubectl/pkg/kuberc"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleetconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kubeconfig"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// Flags of the operator's settings.
const (
	flagKuberc      = "kuberc"
	flagFleetConfig = "fleet-config"
	flagCredentials = "credentials"
)

// settings are what the operator's own files say: kubectl's kuberc (its
// credential plugin policy) and kubectl fleet's config file, with the
// flags that override them.
type settings struct {
	plugins     kubeconfig.Plugins
	credentials kubeconfig.Credentials
	config      *fleetconfig.Config
}

// loadedSettings are the settings read once, and what this invocation
// told of plugins: each allowed plugin is announced once, and kuberc's
// AllowAll explained once, however many policies it makes.
type loadedSettings struct {
	once     sync.Once
	settings *settings
	err      error

	mu        sync.Mutex
	announced map[string]bool
	told      sync.Once
}

// loadSettings reads kuberc and the fleet config, once per invocation.
func (o *RootOptions) loadSettings() (*settings, error) {
	if o.loaded == nil {
		o.loaded = &loadedSettings{}
	}
	l := o.loaded
	l.once.Do(func() { l.settings, l.err = o.readSettings() })
	return l.settings, l.err
}

func (o *RootOptions) readSettings() (*settings, error) {
	s := &settings{}
	var errs []error
	policy, file, err := o.readKuberc()
	if err != nil {
		errs = append(errs, err)
	}
	s.plugins = kubeconfig.Plugins{Kuberc: policy, KubercFile: file}
	s.config, err = fleetconfig.Load(o.FleetConfig, o.home())
	if err != nil {
		errs = append(errs, err)
		s.config = &fleetconfig.Config{}
	}
	for _, p := range o.AllowExec {
		if p == "" || filepath.Clean(p) != p {
			errs = append(errs, fmt.Errorf("invalid --%s %q: give a plugin's name (aws) or clean path", flagAllowExec, p))
		}
		s.plugins.Allowed = append(s.plugins.Allowed, kubeconfig.Allowed{Command: p, From: "--" + flagAllowExec})
	}
	s.plugins.Allowed = append(s.plugins.Allowed, s.config.Plugins()...)
	creds := s.config.Credentials
	if o.Credentials != "" {
		creds = o.Credentials
	}
	if s.credentials, err = fleetconfig.ParseCredentials(creds); err != nil {
		errs = append(errs, fmt.Errorf("invalid --%s: %w", flagCredentials, err))
	}
	return s, errors.Join(errs...)
}

// home is the operator's home directory, as kubectl finds it.
func (o *RootOptions) home() string {
	if h := o.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// readKuberc reads the credential plugin policy of the operator's kuberc,
// found as kubectl finds it: --kuberc, else KUBERC (off: none), else
// ~/.kube/kuberc when it exists. It returns the file it read ("" for
// none).
func (o *RootOptions) readKuberc() (clientcmdapi.PluginPolicy, string, error) {
	file, env := o.Kuberc, o.Getenv("KUBERC")
	switch {
	case o.Getenv("KUBECTL_KUBERC") == "false":
		return clientcmdapi.PluginPolicy{}, "", nil
	case env == "off" && file != "":
		return clientcmdapi.PluginPolicy{}, "", fmt.Errorf("KUBERC=off and --%s are mutually exclusive", flagKuberc)
	case env == "off":
		return clientcmdapi.PluginPolicy{}, "", nil
	case file == "" && env != "":
		file = env
	case file == "":
		file = filepath.Join(o.home(), ".kube", kuberc.RecommendedKubeRCFileName)
		if _, err := os.Stat(file); err != nil {
			return clientcmdapi.PluginPolicy{}, "", nil
		}
	}
	// Read as kubectl reads it, named explicitly: any error but a
	// strict-decoding one (which kubectl warns about) fails.
	pref, err := kuberc.DefaultGetPreferences(file, o.ErrOut)
	if err != nil {
		return clientcmdapi.PluginPolicy{}, "", err
	}
	if pref == nil {
		return clientcmdapi.PluginPolicy{}, "", nil
	}
	policy := clientcmdapi.PluginPolicy{PolicyType: clientcmdapi.PolicyType(pref.CredentialPluginPolicy)}
	if pref.CredentialPluginAllowlist != nil {
		policy.Allowlist = make([]clientcmdapi.AllowlistEntry, len(pref.CredentialPluginAllowlist))
		for i, e := range pref.CredentialPluginAllowlist {
			policy.Allowlist[i] = clientcmdapi.AllowlistEntry(e)
		}
	}
	if err := exec.ValidatePluginPolicy(policy); err != nil {
		return clientcmdapi.PluginPolicy{}, "", fmt.Errorf("kuberc %s: %w", file, err)
	}
	return policy, file, nil
}

// applyKubercToRoot sets kuberc's policy on the plugins of the
// operator's own kubeconfig, as kubectl does.
func (o *RootOptions) applyKubercToRoot(cfg *rest.Config) {
	s, err := o.loadSettings()
	if err == nil && cfg.ExecProvider != nil {
		cfg.ExecProvider.PluginPolicy = s.plugins.Kuberc
	}
}

// policy is the kubeconfig policy of this invocation: what kuberc, the
// fleet config and --allow-exec allow, with --credentials, announcing on
// stderr each allowed plugin before its first use and, once, that
// kuberc's AllowAll is not for Secrets.
func (o *RootOptions) policy() kubeconfig.Policy {
	s, err := o.loadSettings()
	if err != nil {
		return kubeconfig.Policy{}
	}
	l := o.loaded
	return kubeconfig.Policy{
		Plugins:     s.plugins,
		Credentials: s.credentials,
		OnExec: func(src kubeconfig.Source, command string, d kubeconfig.Decision) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.announced == nil {
				l.announced = map[string]bool{}
			}
			if !l.announced[d.Path] {
				l.announced[d.Path] = true
				if command != d.Path {
					command += " (" + d.Path + ")"
				}
				printLine(o.ErrOut, "warning: running exec credential plugin %s, named by %s (allowed by %s)", command, src, d.By)
			}
		},
		OnRefusedExec: func() {
			if s.plugins.KubercFile == "" {
				return // no kuberc: nothing of it to explain
			}
			l.told.Do(func() {
				printLine(o.ErrOut, "note: the credentialPluginPolicy of %s (AllowAll, or none) is for your own kubeconfigs; a kubeconfig read from a Secret runs only the plugins you list: credentialPluginAllowlist in kuberc (with credentialPluginPolicy: Allowlist), credentialPlugins in ~/.kube/fleet.yaml, or --%s", s.plugins.KubercFile, flagAllowExec)
			})
		},
	}
}

// quietPolicy is the policy without announcements: for completion, where
// a TAB prints nothing on the terminal.
func (o *RootOptions) quietPolicy() kubeconfig.Policy {
	p := o.policy()
	p.OnExec, p.OnRefusedExec = nil, nil
	return p
}

// routes are the fleet config's routes as the connector takes them: each
// proxy parsed, each context made a client configuration of the
// operator's own kubeconfig (under kuberc's policy, as the root's).
func (o *RootOptions) routes() (func(path string) *reach.Route, error) {
	built, s, err := o.buildRoutes()
	if err != nil && o.settingsReported {
		return nil, nil
	}
	if err != nil || len(built) == 0 {
		return nil, err
	}
	return func(path string) *reach.Route {
		for i, r := range s.config.Routes {
			if fleetconfig.Match(r.Path, path) {
				return built[i]
			}
		}
		return nil
	}, nil
}

// buildRoutes builds each route of the fleet config (routes), and
// returns the settings they are of.
func (o *RootOptions) buildRoutes() ([]*reach.Route, *settings, error) {
	s, err := o.loadSettings()
	if err != nil || len(s.config.Routes) == 0 {
		return nil, s, err
	}
	built := make([]*reach.Route, len(s.config.Routes))
	var raw *clientcmdapi.Config
	for i, r := range s.config.Routes {
		rt := &reach.Route{Name: fmt.Sprintf("route %s of %s", r.Path, s.config.File)}
		if r.Proxy != "" {
			if rt.Proxy, err = url.Parse(r.Proxy); err != nil {
				return nil, s, fmt.Errorf("%s: proxy: %w", rt.Name, err)
			}
			rt.Name += " (proxy " + kube.RedactURL(r.Proxy) + ")"
		}
		if r.Context != "" {
			if raw == nil {
				c, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
				if err != nil {
					return nil, s, fmt.Errorf("failed to load your kubeconfig for %s: %w", rt.Name, err)
				}
				raw = &c
			}
			if _, ok := raw.Contexts[r.Context]; !ok {
				return nil, s, fmt.Errorf("%s names context %q, which your kubeconfig does not have (kubectl config get-contexts lists them)", rt.Name, r.Context)
			}
			cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, r.Context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
			if err != nil {
				return nil, s, fmt.Errorf("%s: context %q: %w", rt.Name, r.Context, err)
			}
			o.applyKubercToRoot(cfg)
			rt.Config, rt.Context = cfg, r.Context
			rt.Name += " (context " + r.Context + ")"
		}
		built[i] = rt
	}
	return built, s, nil
}
